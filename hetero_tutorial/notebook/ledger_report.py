"""Notebook 08's tables: the records behind the ledger, the claims with their rules, the advice."""

from __future__ import annotations

from typing import Any

from IPython.display import Markdown

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
    """What notebook 08 judged on this machine: the claims settled live on its CPU."""
    here = [row for row in table if row["machine"] == verdicts.THIS_MACHINE]
    settled = [row for row in here if row["status"] in ("held", "did not hold", "no clear effect")]
    return [f"{row['claim']}: {row['status']}: {row['measured']}" for row in settled]
