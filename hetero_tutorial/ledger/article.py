"""The article the series tests: its figures and the one piece of its code the notebooks run.

It is an untitled Chinese blog post on splitting deep-RL training between CPU and GPU
("深度强化学习中的异构计算挑战", heterogeneous computing challenges in deep RL, after its
first heading). Its checkable claims are restated, one by one and in its order, as the data
of :data:`hetero_tutorial.ledger.claims.CLAIMS`: each with the article's statement and
figure, the measurement that answers it, and the rule that judges it. Here: the figures a
notebook plots beside ours, and the article's threshold table for its dynamic allocator,
looked up as its code does, so that notebook 05 can show what the lookup gives for widths
the table does not hold.
"""

from __future__ import annotations

from collections.abc import Sequence

C8_SECONDS_PER_ROUND = {"pattern A (transition)": 72.0, "pattern B (trajectory)": 53.0}
"""The article's seconds per DDPG training round with each buffer (claim C8's figures)."""

ARTICLE_THRESHOLDS: dict[str, dict[str, float]] = {
    "mlp": {"128": 0.8, "256": 0.6},
    "cnn": {"64": 0.7, "128": 0.5},
}
"""The article's ``thresholds``: per architecture, keyed by the first layer's width as a string,
the ``cpu_time / gpu_time`` above which it picks the GPU."""


def threshold_lookups(widths: Sequence[int], kind: str = "mlp") -> list[str]:
    """What the article's ``thresholds[kind][str(width)]`` gives for each width: the threshold,
    or the ``KeyError`` its allocator would raise there."""
    table = ARTICLE_THRESHOLDS[kind]
    lines = []
    for width in widths:
        if str(width) in table:
            lines.append(f"width {width}: threshold {table[str(width)]}")
        else:
            held = ", ".join(table)
            lines.append(f"width {width}: KeyError '{width}' (the {kind} table holds {held} only)")
    return lines
