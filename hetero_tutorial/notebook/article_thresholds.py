"""The article's threshold table for its dynamic allocator, looked up as its code does, so that
notebook 05 can show what the lookup gives for widths the table does not hold.

The article's claims themselves are restated in :mod:`hetero_tutorial.ledger.claims`; this is
the one piece of its code the notebook runs, reproduced as data.
"""

from __future__ import annotations

from collections.abc import Sequence

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
