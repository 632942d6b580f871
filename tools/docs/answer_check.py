"""The instructor's sheet checked against a run: ``python -m tools.docs check-answers``.

Where an expected answer (:mod:`~tools.docs.answer_key`) states something a run
measures (an order, a direction), a rule here reads this run's records (``data/results/``)
and says whether the run agrees. ``make test`` runs it on the records its own notebooks
wrote, so a sheet that a quick run contradicts fails CI. An answer with no rule is reasoning
that the instructor reads; the check says how many.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hetero_tutorial.core import results
from hetero_tutorial.ledger.claims import group_by_kind, quiet_records
from tools.docs import answer_key

Records = dict[str, list[results.Record]]


@dataclass(frozen=True)
class Outcome:
    """A rule's reading of one run: ``agrees`` True or False, or None where the run cannot
    tell (``why`` says why: no record, no accelerator)."""

    agrees: bool | None
    why: str


def _newest(records: Records, kind: str) -> results.Record | None:
    found = records.get(kind, [])
    return max(found, key=lambda r: r.provenance["date"]) if found else None


def per_sample_falls(records: Records) -> Outcome:
    """00 Q3: along each width's row, a sample costs less at the largest batch than at 1."""
    record = _newest(records, "bench.crossover")
    if record is None:
        return Outcome(None, "no bench.crossover record (notebook 00)")
    rows = [r for r in record.data["grid"] if r["device"] == "cpu"]
    rising = []
    for width in sorted({r["width"] for r in rows}):
        mine = sorted((r for r in rows if r["width"] == width), key=lambda r: r["batch_size"])
        if mine[-1]["seconds_per_sample"] >= mine[0]["seconds_per_sample"]:
            rising.append(str(width))
    if rising:
        return Outcome(
            False, f"a sample cost no less at the largest batch at width {', '.join(rising)}"
        )
    return Outcome(True, "every width's row falls from batch 1 to its largest batch")


def baseline_copies_more(records: Records) -> Outcome:
    """03 Q1: the all-accelerator plan counts more copies per iteration than the hybrid."""
    record = _newest(records, "bench.hybrid")
    if record is None:
        return Outcome(None, "no bench.hybrid record (notebook 03)")
    counted = record.data["counted_copies"]
    base, hybrid = (counted[p]["copies_per_iteration"] for p in ("all-accelerator", "hybrid"))
    said = f"all-accelerator {base:,}, hybrid {hybrid:,} copies per iteration"
    return Outcome(base > hybrid, said)


def tensor_buffer_copies_fewest(records: Records) -> Outcome:
    """04 Q1: sampling to an accelerator, the tensor buffer makes the fewest copies a batch."""
    record = _newest(records, "bench.buffers")
    if record is None:
        return Outcome(None, "no bench.buffers record (notebook 04)")
    rows = [r for r in record.data["rows"] if r["device"] != "cpu"]
    if not rows:
        return Outcome(None, "sampled to the CPU only: no copy between devices to count")
    capacity = max(r["capacity"] for r in rows)
    copies = {r["design"]: r["copies_per_batch"] for r in rows if r["capacity"] == capacity}
    said = ", ".join(f"{d} {c}" for d, c in copies.items())
    return Outcome(copies["tensor"] == min(copies.values()), f"copies per batch: {said}")


RULES: dict[tuple[str, int] | str, Callable[[Records], Outcome]] = {
    ("00", 3): per_sample_falls,
    ("03", 1): baseline_copies_more,
    ("04", 1): tensor_buffer_copies_fewest,
}
"""The answers a run can contradict, by the key's entry (a question or an exercise)."""


def check(records: Records) -> list[str]:
    """One line per rule, mismatches first; then how many answers have no rule."""
    lines = []
    for key, rule in RULES.items():
        outcome = rule(records)
        label = f"{key[0]} Q{key[1]}" if isinstance(key, tuple) else f"exercise {key}"
        word = {True: "agrees", False: "MISMATCH", None: "not checkable here"}[outcome.agrees]
        lines.append(f"{label}: {word}: {outcome.why}")
    lines.sort(key=lambda line: "MISMATCH" not in line)
    unruled = len(answer_key.QUESTIONS) + len(answer_key.EXERCISES) - len(RULES)
    lines.append(f"{unruled} answers are reasoning the instructor reads (no rule)")
    return lines


def main() -> int:
    quiet, busy = quiet_records(group_by_kind(results.load_all(results.RESULTS_DIR)))
    lines = check(quiet)  # a busy study's record is not read: nothing is judged from it
    for kind in busy:  # say why its record was not read
        lines = [
            line.replace(f"no {kind} record", f"{kind} ran busy, not judged") for line in lines
        ]
    print("The instructor's sheet against this run's records (data/results/):")
    print("\n".join(f"- {line}" for line in lines))
    return 1 if any("MISMATCH" in line for line in lines) else 0
