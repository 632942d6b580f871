"""Notebook 09's tables and figure: the records behind the ledger, the claims, the advice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown
from matplotlib import ticker
from matplotlib.figure import Figure

from hetero_tutorial.ledger import advice, claims, verdicts
from hetero_tutorial.ledger.rules import Records
from hetero_tutorial.notebook.tables import markdown_table


def records_table(by_machine: dict[str, Records]) -> Markdown:
    """Every record the ledger reads: machine, kind, date, mode and hardware."""
    rows = [
        {
            "machine": machine,
            "kind": kind,
            "date": r.provenance["date"][:16],
            "mode": "quick" if r.provenance["quick"] else "full",
            "hardware": r.hardware,
        }
        for machine, kinds in by_machine.items()
        for kind, found in kinds.items()
        if kind.startswith("bench.")  # the measurements, not run times or earlier ledgers
        for r in found
    ]
    return markdown_table(rows, ["machine", "kind", "date", "mode", "hardware"])


def claims_table() -> Markdown:
    return markdown_table(
        [
            {"id": c.id, "claim": c.statement, "article": c.article, "rule": c.rule}
            for c in claims.CLAIMS
        ],
        {"id": "", "claim": "claim", "article": "the article's figure", "rule": "verdict rule"},
    )


def arithmetic_line(answer: tuple[float, float] | None) -> str:
    """The learner's reading of the article's 72 s -> 53 s, once their function is checked."""
    if answer is None:
        return "Solve the exercise above to see which, if either, of the two is 28%."
    speedup, saved = answer
    return (
        f"72 s -> 53 s: {speedup:.2f}x the speed and {saved:.0%} of the time saved, by your "
        "function; the article's '28% faster' is neither."
    )


def what_to_do(by_machine: dict[str, Records]) -> Markdown:
    """The recommendations for this machine, from its own records (:mod:`ledger.advice`)."""
    records = by_machine.get(verdicts.THIS_MACHINE, {})
    if not records:
        return Markdown("No records from this machine yet: run notebooks 00-05 first.")
    hardware = next(iter(records.values()))[0].hardware
    return Markdown(advice.markdown(advice.advice(records), hardware))


def findings(table: list[dict[str, Any]]) -> list[str]:
    """What notebook 09 judged on this machine: the claims settled live on its CPU."""
    here = [row for row in table if row["machine"] == verdicts.THIS_MACHINE]
    settled = [row for row in here if row["status"] in ("held", "did not hold", "no clear effect")]
    return [f"{row['claim']}: {row['status']}: {row['measured']}" for row in settled]


_RATIO_TICKS = (0.1, 0.2, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0)
"""Ratios labelled on a log axis of ratios (a log axis alone labels only powers of ten)."""


def claim_ratios(table: Sequence[dict[str, Any]]) -> Figure:
    """The article's ratio beside each machine's measured one, for claims that state a ratio.

    A machine without a measured ratio for a claim (not measurable there) shows no bar.
    """
    claims = list(dict.fromkeys(r["claim"] for r in table if r["article_ratio"]))
    machines = list(dict.fromkeys(r["machine"] for r in table if r["ratio"] is not None))
    ratio = {(r["claim"], r["machine"]): r["ratio"] for r in table}
    series = {
        "article": [next(r["article_ratio"] for r in table if r["claim"] == c) for c in claims]
    }
    for machine in machines:
        series[machine] = [ratio[(c, machine)] or np.nan for c in claims]
    height = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(7, 0.3 * len(claims) * len(series) + 1.2))
    for index, (label, values) in enumerate(series.items()):
        color = "0.6" if label == "article" else f"C{index - 1}"
        positions = [p + index * height for p in range(len(claims))]
        # Bars grow from 1 (no difference): rightwards for a ratio above 1, leftwards below.
        ax.barh(
            positions, np.asarray(values, float) - 1.0, height, left=1.0, label=label, color=color
        )
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks([p + 0.4 - height / 2 for p in range(len(claims))], claims)
    ax.set_xscale("log")
    finite = [v for values in series.values() for v in values if np.isfinite(v)] + [1.0]
    low, high = min(finite) / 1.15, max(finite) * 1.15
    ax.set_xlim(low, high)
    ax.xaxis.set_major_locator(ticker.FixedLocator([t for t in _RATIO_TICKS if low <= t <= high]))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}x"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("ratio, as each claim defines it (1 = no difference)")
    ax.legend(loc="best")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
