"""Notebook 10's tables and figure: the records behind the ledger, the claims, the advice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
from IPython.display import Markdown
from matplotlib import ticker
from matplotlib.figure import Figure

from hetero_tutorial.ledger import advice, claims, verdicts
from hetero_tutorial.ledger.rules import Records
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.studies import copies


def records_table(by_machine: dict[str, Records]) -> Markdown:
    """Every record the ledger reads: machine, kind, date, mode and hardware."""
    read = {kind for claim in claims.CLAIMS for kind in claim.needs}
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
        if kind in read  # the measurements the claims read, not run times or peer races
        for r in found
    ]
    return markdown_table(rows, ["machine", "kind", "date", "mode", "hardware"], timed=False)


def claims_table() -> Markdown:
    return markdown_table(
        [
            {"id": c.id, "claim": c.statement, "article": c.article, "rule": c.rule}
            for c in claims.CLAIMS
        ],
        {"id": "", "claim": "claim", "article": "the article's figure", "rule": "verdict rule"},
        timed=False,
    )


def c4_sensitivity(rows: list[dict[str, Any]] | None = None) -> Markdown:
    """C4's counts as the environments and the buffer change, as a table and the sentence
    that reads them (``rows`` from :func:`~hetero_tutorial.studies.copies.c4_sensitivity`;
    counted now when not given: about 20 s of counting on meta, no timing)."""
    rows = copies.c4_sensitivity() if rows is None else rows
    table = markdown_table(
        [
            {
                "algorithm": r["algorithm"].upper(),
                "setting": r["setting"],
                "copies": f"{r['copies_per_env_step']:.2f}",
                "on": r["counted_on"],
            }
            for r in rows
        ],
        {
            "algorithm": "",
            "setting": "setting",
            "copies": "copies per env step",
            "on": "counted on",
        },
        timed=False,
    )
    return Markdown(table.data + "\n\n" + copies.c4_sensitivity_sentence(rows))


ARITHMETIC_ANSWERS = ("speed-up", "time saved", "neither")
"""What the exercise's guess may be: which of the two numbers the article's 28% is."""


def arithmetic_line(answer: tuple[float, float] | None, guess: str | None = None) -> str:
    """The learner's reading of the article's 72 s -> 53 s, once their function is checked,
    beside their guess of what its "28% faster" is (:data:`ARITHMETIC_ANSWERS`)."""
    if answer is None:
        return "Solve the exercise above to see which, if either, of the two is 28%."
    speedup, saved = answer
    found = (
        "speed-up" if round(speedup - 1, 2) == 0.28
        else "time saved" if round(saved, 2) == 0.28
        else "neither"
    )  # fmt: skip
    named = found if found == "neither" else f"the {found}"
    text = (
        f"72 s -> 53 s: {speedup:.2f}x the speed and {saved:.0%} of the time saved, by your "
        f"function; the article's '28% faster' is {named}."
    )
    if guess is None:
        return text + " (No guess written.)"
    said = "as you predicted" if guess == found else f"you predicted {guess!r}"
    return f"{text} ({said}.)"


def across_runs_line(by_machine: dict[str, Records]) -> str:
    """How many recorded runs of this CPU the claims read across runs (C1's CPU half) read
    here, and so whether its figure is a range over runs or one run's IQR."""
    runs = verdicts.earlier_runs("C1-CPU", by_machine) if verdicts.THIS_MACHINE in by_machine else 0
    if runs == 0:
        return "C1's CPU half: no run of this machine is recorded yet (notebook 00 measures it)."
    if runs == 1:
        return (
            "C1's CPU half read one recorded run of this CPU, this machine's own: its figure "
            "carries that run's IQR, the noise within a run, not the drift between runs; "
            "another run on another day (notebook 00 again) gives the range."
        )
    return (
        f"C1's CPU half read {runs} recorded runs of this CPU (this machine's and earlier ones "
        "of the same CPU identity): its figure is their range, beside one run's IQR."
    )


def what_to_do(by_machine: dict[str, Records]) -> Markdown:
    """The recommendations for this machine, from its own records (:mod:`ledger.advice`)."""
    records = by_machine.get(verdicts.THIS_MACHINE, {})
    if not records:
        return Markdown("No records from this machine yet: run notebooks 00-05 first.")
    hardware = next(iter(records.values()))[0].hardware
    return Markdown(advice.markdown(advice.advice(records), hardware))


def findings(table: list[dict[str, Any]]) -> list[str]:
    """What notebook 10 judged on this machine: the claims settled live on its CPU."""
    here = [row for row in table if row["machine"] == verdicts.THIS_MACHINE]
    judged = ("held", "did not hold", "no clear effect", "no verdict")
    settled = [row for row in here if row["status"] in judged]
    return [f"{row['claim']}: {row['status']}: {row['measured']}" for row in settled]


_RATIO_TICKS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
"""Ratios labelled on a log axis of ratios, each at least 2x from the next so no two collide
(a log axis alone labels only powers of ten)."""
_MARKERS = "osv^D"


def measured_claims(table: Sequence[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Claims with an article ratio that some machine measured, and those only the article has."""
    with_ratio = list(dict.fromkeys(r["claim"] for r in table if r["article_ratio"]))
    measured = {r["claim"] for r in table if r["ratio"] is not None}
    return [c for c in with_ratio if c in measured], [c for c in with_ratio if c not in measured]


def claim_ratios(table: Sequence[dict[str, Any]]) -> Figure:
    """The article's ratio beside each machine's measured one, for claims that state a ratio.

    One row per claim some machine measured, labelled with what its ratio divides (so a
    reader knows which side of 1 is which); a machine that could not measure a claim has
    no mark on its row, and claims no machine measured are named under the axis instead
    of drawn as rows with the article's figure alone.
    """
    claims, article_only = measured_claims(table)
    meaning = {r["claim"]: r["ratio_meaning"] for r in table}
    rows = [f"{c}: {meaning[c]}" for c in claims]
    machines = list(dict.fromkeys(r["machine"] for r in table if r["ratio"] is not None))
    ratio = {(r["claim"], r["machine"]): r["ratio"] for r in table}
    series = {
        "article": [next(r["article_ratio"] for r in table if r["claim"] == c) for c in claims]
    }
    column = {r["machine"]: r.get("column", r["machine"]) for r in table}
    for machine in machines:
        series[column[machine]] = [ratio[(c, machine)] for c in claims]
    fig, ax = plt.subplots(figsize=(8, 0.55 * max(len(claims), 1) + 1.8))
    if not claims:
        ax.text(0.5, 0.5, "no machine measured a claim's ratio yet", ha="center", va="center")
        ax.set_axis_off()
        return fig
    for index, (label, values) in enumerate(series.items()):
        shown = [(v, row) for v, row in zip(values, rows, strict=True) if v is not None]
        color = "0.5" if label == "article" else f"C{index - 1}"
        marker = "|" if label == "article" else _MARKERS[(index - 1) % len(_MARKERS)]
        ax.scatter(
            [v for v, _ in shown], [row for _, row in shown], s=160 if label == "article" else 60,
            marker=marker, color=color, label=label, zorder=3, alpha=0.85, linewidths=2,
        )  # fmt: skip
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xscale("log")
    finite = [v for values in series.values() for v in values if v is not None] + [1.0]
    low, high = min(finite) / 1.3, max(finite) * 1.3
    ax.set_xlim(low, high)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.invert_yaxis()  # the claims in the article's order, top to bottom
    ax.xaxis.set_major_locator(ticker.FixedLocator([t for t in _RATIO_TICKS if low <= t <= high]))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}x"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("ratio, as each row's label defines it (1 = no difference)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    ax.grid(axis="x", alpha=0.3)
    if article_only:
        fig.text(
            0.01, 0.01, "article only (no machine here measured them): " + ", ".join(article_only),
            fontsize="small", color="0.3",
        )  # fmt: skip
    fig.tight_layout(rect=(0, 0.05 if article_only else 0, 1, 1))
    return fig
