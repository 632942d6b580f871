"""The ledger: every claim judged on every machine we have measurements from.

"This machine" is ``data/results/`` (the learner's own runs); every folder of
``data/reference/`` is one reference machine. :func:`write` saves the ledger
for this machine as JSON and Markdown; :func:`readme_table` is the README's
table, from the reference records alone (``tools/docs/readme.py`` prints it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hetero_tutorial.core import results
from hetero_tutorial.core.machine_load import BUSY_WORDS
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import MIN_REPEATS
from hetero_tutorial.ledger.claims import CLAIMS, Claim, Records, Status, group_by_kind, judge
from hetero_tutorial.ledger.rules import Verdict, _NoMatchingRecord

THIS_MACHINE = "this machine"
NOT_JUDGED = "not judged"
"""The word a busy study's claim gets in print (the glossary's *not judged*): its status is
``no verdict``, but not for too few repeats, which is what *no verdict* means in print."""
NO_ACCELERATOR = "no accelerator: nothing to compare the CPU with"


def busy(row: dict[str, Any]) -> bool:
    """Whether a ledger row has no verdict because its study ran on a busy machine."""
    return row["status"] == Status.NO_VERDICT.value and BUSY_WORDS in row["measured"]


def label(row: dict[str, Any]) -> str:
    """A row's verdict as printed: its status, or *not judged* for a busy study's."""
    return NOT_JUDGED if busy(row) else row["status"]


def _judge(claim: Claim, records: Records, here: bool) -> Verdict:
    """:func:`judge`, except that a claim this machine cannot answer at all (it compares a
    CPU with an accelerator the machine lacks) is *not measurable here* even where its study
    ran on a busy machine: a quieter run would not judge it either."""
    verdict = judge(claim, records, here=here)
    if verdict.status is not Status.NO_VERDICT or BUSY_WORDS not in verdict.measured:
        return verdict
    try:
        anyway = claim.judge(records)  # the busy records too: only their hardware is read
    except (_NoMatchingRecord, KeyError):
        return verdict
    if anyway.status is not Status.NOT_MEASURABLE:
        return verdict
    return Verdict(
        Status.NOT_MEASURABLE, NO_ACCELERATOR + " (its study also ran on a busy machine)"
    )


def machines(include_this: bool = True) -> dict[str, Records]:
    """Records by machine: this machine's results first, then each reference machine's folder."""
    found: dict[str, Records] = {}
    if include_this:
        found[THIS_MACHINE] = group_by_kind(results.load_all(results.RESULTS_DIR))
    if results.REFERENCE_DIR.is_dir():
        for folder in sorted(p for p in results.REFERENCE_DIR.iterdir() if p.is_dir()):
            found[folder.name] = group_by_kind(results.load_all(folder))
    return found


def _hardware(records: Records) -> str:
    return results.hardware_of([record for found in records.values() for record in found])


ACROSS_RUNS = {"C1-CPU": "bench.crossover"}
"""Claims whose figure is compared across runs, and the record kind they read: on this
machine they read every recorded run of this kind of machine, so the range shows the drift
from run to run (one run's IQR does not)."""
EARLIER_RUN = "an earlier run on this kind of machine"


def _here(by_machine: dict[str, Records]) -> dict[str, Any] | None:
    """The fingerprint of this machine's first record, if it has any."""
    found = next((found[0] for found in by_machine.get(THIS_MACHINE, {}).values() if found), None)
    return None if found is None else found.provenance["fingerprint"]


def _own_folder(by_machine: dict[str, Records]) -> str | None:
    """The reference folder this machine's records would be filed in (its machine slug), if
    there is one: it may hold records of other CPUs of the same name as well as of this one."""
    here = _here(by_machine)
    slug = None if here is None else results.machine_slug(here)
    return slug if slug in by_machine else None


def _same_kind(by_machine: dict[str, Records]) -> str | None:
    """The reference folder recorded on this kind of machine, if any: this machine's folder,
    where every record in it is of this CPU (:func:`results.same_machine`). A folder that
    also holds another CPU's records (a CPU of the same name may be another generation) is
    another machine's column, not an earlier run of this one."""
    folder, here = _own_folder(by_machine), _here(by_machine)
    if folder is None or here is None:
        return None
    records = [record for found in by_machine[folder].values() for record in found]
    same = all(results.same_machine(here, r.provenance["fingerprint"]) for r in records)
    return folder if records and same else None


def column_label(machine: str, by_machine: dict[str, Records]) -> str:
    """A machine's column title: a reference folder from this kind of machine says it is
    an earlier run here, not another machine."""
    return f"{machine}: {EARLIER_RUN}" if machine == _same_kind(by_machine) else machine


def _with_earlier_runs(claim_id: str, by_machine: dict[str, Records]) -> Records:
    """This machine's records, with the earlier runs of its kind for a claim read across runs
    (those of its folder from the same CPU: :func:`results.same_machine`)."""
    records, kind, folder = (
        by_machine[THIS_MACHINE],
        ACROSS_RUNS.get(claim_id),
        _own_folder(by_machine),
    )
    if kind is None or folder is None or not records.get(kind):
        return records
    here = records[kind][0].provenance["fingerprint"]
    earlier = [
        record
        for record in by_machine[folder].get(kind, [])
        if results.same_machine(here, record.provenance["fingerprint"])
    ]
    return {**records, kind: records[kind] + earlier}


def earlier_runs(claim_id: str, by_machine: dict[str, Records]) -> int:
    """How many recorded runs of this CPU a claim read across runs (:data:`ACROSS_RUNS`)
    reads on this machine, its own newest included; 0 where this machine has none."""
    kind = ACROSS_RUNS[claim_id]
    found = _with_earlier_runs(claim_id, by_machine).get(kind, [])
    return len({record.provenance["date"] for record in found})


def rows(by_machine: dict[str, Records]) -> list[dict[str, Any]]:
    """One row per claim and machine: the verdict, the measured figure and the article's."""
    table = []
    for claim in CLAIMS:
        for machine, records in by_machine.items():
            here = machine == THIS_MACHINE
            if here:
                records = _with_earlier_runs(claim.id, by_machine)
            verdict = _judge(claim, records, here)
            table.append(
                {
                    "claim": claim.id,
                    "statement": claim.statement,
                    "article": claim.article,
                    "article_ratio": claim.article_ratio,
                    "ratio_meaning": claim.ratio_meaning,
                    "rule": claim.rule,
                    "machine": machine,
                    "column": column_label(machine, by_machine),
                    "hardware": _hardware(records),
                    "status": verdict.status.value,
                    "measured": verdict.measured,
                    "ratio": verdict.ratio,
                }
            )
    return table


def markdown(table: list[dict[str, Any]]) -> str:
    """A Markdown table: one line per claim, one column per machine (verdict and figure)."""
    machine_names = list(dict.fromkeys(row["machine"] for row in table))
    hardware = {row["machine"]: row["hardware"] for row in table}
    column = {row["machine"]: row.get("column", row["machine"]) for row in table}
    header = ["claim", "the article says"] + [f"{column[m]} ({hardware[m]})" for m in machine_names]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for claim in CLAIMS:
        cells = {row["machine"]: row for row in table if row["claim"] == claim.id}
        verdicts = [
            f"**{label(cells[m])}**: {cells[m]['measured']}".replace("|", "/")
            for m in machine_names
        ]
        lines.append(f"| {claim.id} | {claim.article} | " + " | ".join(verdicts) + " |")
    return "\n".join(lines)


def summary(table: list[dict[str, Any]], machine: str = THIS_MACHINE) -> dict[str, list[str]]:
    """Claim IDs by verdict on one machine."""
    found: dict[str, list[str]] = {status.value: [] for status in Status}
    for row in table:
        if row["machine"] == machine:
            found[row["status"]].append(row["claim"])
    return found


def write(
    table: list[dict[str, Any]] | None = None,
    appendix: str = "",
    directory: Path = results.RESULTS_DIR,
) -> tuple[Path, Path]:
    """Save ledger.json and ledger.md: ``table`` (every claim judged on this machine and the
    references when not given), with ``appendix`` (Markdown) under the table.

    The JSON is itself a results record (kind ``ledger``), with the provenance of this run.
    """
    table = rows(machines()) if table is None else table
    json_path = results.save(results.Record("ledger", {"rows": table}), directory / "ledger.json")
    md_path = directory / "ledger.md"
    md_path.write_text("# Claims ledger\n\n" + markdown(table) + "\n" + appendix)
    return json_path, md_path


def readme_table() -> str:
    """The README's ledger: every claim on every reference machine (none of this machine's runs)."""
    by_machine = machines(include_this=False)
    if not by_machine:
        return "No reference records yet."
    return markdown(rows(by_machine))


def answered_elsewhere(table: list[dict[str, Any]], claim_id: str, machine: str) -> list[str]:
    """The other columns that judged ``claim_id`` (any verdict but *not measurable here* and
    *not measured yet*): where a claim this machine cannot answer has an answer."""
    unanswered = (Status.NOT_MEASURABLE.value, Status.MISSING.value)
    return [
        row["machine"]
        for row in table
        if row["claim"] == claim_id and row["machine"] != machine
        and row["status"] not in unanswered
    ]  # fmt: skip


def takeaways(table: list[dict[str, Any]], machine: str = THIS_MACHINE) -> list[str]:
    """Sentences a learner should take away from one machine's verdicts (derived, not canned)."""
    verdicts = summary(table, machine)
    held, not_held = verdicts[Status.HELD.value], verdicts[Status.NOT_HELD.value]
    unclear = verdicts[Status.NO_CLEAR_EFFECT.value]
    mine = [row for row in table if row["machine"] == machine]
    busy_ones = [row["claim"] for row in mine if busy(row)]  # not judged, not too few repeats
    unjudged = [claim for claim in verdicts[Status.NO_VERDICT.value] if claim not in busy_ones]
    unmeasurable = verdicts[Status.NOT_MEASURABLE.value]
    missing = verdicts[Status.MISSING.value]
    halves = [c.id for c in CLAIMS if "-" in c.id]  # C1-CPU: a claim's half, judged apart
    claims = (
        f"{len(CLAIMS) - len(halves)} claims and {counted(len(halves), 'half-claim')} "
        f"({', '.join(halves)})"
    )
    lines = [
        f"Of {claims}, on {machine}: {len(held)} held, {len(not_held)} did not hold, "
        f"{len(unclear)} showed no clear effect, {len(unjudged)} had no verdict (too few repeats), "
        f"{len(busy_ones)} were measured on a busy machine (not judged), "
        f"{len(unmeasurable)} could not be measured here, "
        f"{len(missing)} are not measured yet."
    ]
    if held:
        lines.append(f"Held: {', '.join(held)}, past the measured spread.")
    if not_held:
        lines.append(
            f"Did not hold: {', '.join(not_held)}. The effect's direction or size differed here, "
            "past the measured spread (a count or a choice has none)."
        )
    if unclear:
        lines.append(
            f"No clear effect: {', '.join(unclear)}. The measured range (with the drift between "
            "runs, where a rule reads it) straddles the rule's threshold: more repeats, or a "
            "quieter machine, would decide."
        )
    if busy_ones:
        lines.append(
            f"Not judged: {', '.join(busy_ones)}. Their studies ran while other programs kept "
            "this machine busy: close them, or wait, and run again."
        )
    if unjudged:
        lines.append(
            f"No verdict: {', '.join(unjudged)}. A verdict needs {MIN_REPEATS} repeats (seeds, "
            "turns or timings) and these had fewer: each line in ledger.md says how many."
        )
    needs_accelerator = [
        row["claim"] for row in mine if row["measured"].startswith(NO_ACCELERATOR.split(":")[0])
    ]
    if needs_accelerator:
        elsewhere = {c: answered_elsewhere(table, c, machine) for c in needs_accelerator}
        answered = sorted({m for found in elsewhere.values() for m in found})
        columns = f"column{'s answer' if len(answered) > 1 else ' answers'}"
        lines.append(
            f"{', '.join(needs_accelerator)} compare a CPU with an accelerator, which this "
            "machine lacks: "
            + (
                f"the {', '.join(answered)} {columns} "
                f"{', '.join(c for c, found in elsewhere.items() if found)}."
                if answered
                else "no other column here answers them either."
            )
        )
    if missing:
        lines.append(f"Not measured yet: {', '.join(missing)}; run the notebooks named above.")
    return lines
