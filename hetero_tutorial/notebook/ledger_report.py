"""Notebook 10's tables and figure: the records behind the ledger, the claims, the advice."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
from IPython.display import Markdown
from matplotlib import ticker
from matplotlib.figure import Figure

from hetero_tutorial.core.machine_load import BUSY_WORDS
from hetero_tutorial.core.results import Record, busy_line, hardware_of
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.ledger import advice, claims, verdicts
from hetero_tutorial.ledger.rules import C1_CPU_BAND, C1_CPU_S, Records, Status
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.studies import copies


def _read() -> set[str]:
    """The record kinds the claims read (not run times or peer races)."""
    return {kind for claim in claims.CLAIMS for kind in claim.needs}


def records_table(by_machine: dict[str, Records]) -> Markdown:
    """Every record the ledger reads: machine, kind, date, mode, what wrote it, hardware."""
    rows = [
        {
            "machine": machine,
            "kind": kind,
            "date": r.provenance["date"][:16],
            "mode": "quick" if r.provenance["quick"] else "full",
            "source": source(r),
            "hardware": r.hardware,
        }
        for machine, kinds in by_machine.items()
        for kind, found in kinds.items()
        if kind in _read()
        for r in found
    ]
    columns = ["machine", "kind", "date", "mode", "source", "hardware"]
    return markdown_table(rows, columns, timed=False)


def source(record: Record) -> str:
    """What wrote a record, from its provenance: ``notebook 03``, or the command."""
    command = record.provenance.get("command") or ""
    if found := re.match(r"notebooks/(\d\d)_", command):
        return f"notebook {found.group(1)}"
    if "fill_ledger" in command:
        return "fill_ledger"
    return "a bench command" if "bench" in command else "a notebook or command"


def _span(dates: list[str]) -> str:
    """``2026-12-07 07:41-07:44`` within a day, else ``2026-12-01 to 2026-12-07``."""
    first, last = min(dates)[:16].replace("T", " "), max(dates)[:16].replace("T", " ")
    if first == last:
        return first
    return f"{first}-{last[11:]}" if first[:10] == last[:10] else f"{first[:10]} to {last[:10]}"


def _sources_text(found: list[Record]) -> str:
    """``notebooks 00, 01 and 03``, then any command, each once."""
    named = list(dict.fromkeys(sorted(source(r) for r in found)))
    numbers = [name.split()[1] for name in named if name.startswith("notebook ")]
    others = [name for name in named if not name.startswith("notebook ")]
    parts = []
    if numbers:
        parts.append(("notebook " if len(numbers) == 1 else "notebooks ") + ", ".join(numbers))
    return ", ".join(parts + others)


def sources(by_machine: dict[str, Records]) -> Markdown:
    """Where each ledger column's records came from, one line per machine: this machine's
    own (``data/results/``) or a committed reference folder, what wrote them, in which mode
    and when; where every record is listed."""
    lines = []
    for machine, kinds in by_machine.items():
        found = [r for kind, rs in kinds.items() if kind in _read() for r in rs]
        here = machine == verdicts.THIS_MACHINE
        where = "`data/results/`" if here else f"`data/reference/{machine}/`, committed"
        column = verdicts.column_label(machine, by_machine)
        if not found:
            lines.append(f"- **{column}**: no records in {where}.")
            continue
        modes = " and ".join(sorted({"quick" if r.provenance["quick"] else "full" for r in found}))
        lines.append(
            f"- **{column}**: {len(found)} records in {where}, from {_sources_text(found)}, "
            f"{modes} mode, {_span([r.provenance['date'] for r in found])}, on "
            f"{hardware_of(found)}."
        )
    lines.append(
        "\nEvery record, one a line: in `data/results/ledger.md`, which the last cell writes."
    )
    return Markdown("\n".join(lines))


JUDGED = (Status.HELD.value, Status.NOT_HELD.value, Status.NO_CLEAR_EFFECT.value,
          Status.NO_VERDICT.value)  # fmt: skip
"""Statuses that come with a measured figure (a busy study's *no verdict* among them)."""
UNANSWERED = (Status.NOT_MEASURABLE.value, Status.MISSING.value)


def _ratio(value: float) -> str:
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def _cell(row: dict[str, Any]) -> str:
    """A ledger cell: the verdict as printed, with the measured ratio where there is one."""
    word = verdicts.label(row)
    if row["status"] in JUDGED and not verdicts.busy(row) and row["ratio"] is not None:
        return f"{word}, {_ratio(row['ratio'])}"
    return word


def _collapsed(cells: list[dict[str, Any]]) -> str | None:
    """The one status every machine gave a claim, where it is one that says nothing was
    judged (*not measurable here*, *not measured yet*): such claims share a line."""
    found = {row["status"] for row in cells}
    return found.pop() if len(found) == 1 and found <= set(UNANSWERED) else None


def _why(status: str, cells: list[dict[str, Any]]) -> str:
    """Why a group of claims was judged nowhere, from what the rows say."""
    if status == Status.NOT_MEASURABLE.value and all(
        row["measured"].startswith("no accelerator") for row in cells
    ):
        return "each compares a CPU with an accelerator, and none of them recorded one"
    if status == Status.MISSING.value:
        return "none of them has the records they need"
    return "read each figure in the fold"


def ledger(table: list[dict[str, Any]]) -> Markdown:
    """The ledger as a learner reads it: one row per claim some machine judged (its verdict
    and measured ratio per machine), one line naming the claims no machine here could judge
    (by ID), and where each claim's words, rule and every figure are in full."""
    machines = list(dict.fromkeys(row["machine"] for row in table))
    column = {row["machine"]: row.get("column", row["machine"]) for row in table}
    by_claim = {c.id: [r for r in table if r["claim"] == c.id] for c in claims.CLAIMS}
    header = ["claim", "the article", "ratio measured"] + [column[m] for m in machines]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    nowhere: dict[str, list[str]] = {}
    for claim in claims.CLAIMS:
        cells = {row["machine"]: row for row in by_claim[claim.id]}
        status = _collapsed(list(cells.values()))
        if status is not None:
            nowhere.setdefault(status, []).append(claim.id)
            continue
        shown = [claim.id + ": " + claim.statement, claim.article, claim.ratio_meaning or "—"]
        shown += [_cell(cells[m]) if m in cells else "—" for m in machines]
        lines.append("| " + " | ".join(text.replace("|", "/") for text in shown) + " |")
    text = "\n".join(lines) if len(lines) > 2 else "No machine here judged any claim yet."
    for status, ids in nowhere.items():
        rows = [r for r in table if r["claim"] in ids]
        where = f"on all {len(machines)} machines" if len(machines) > 1 else "on the one machine"
        text += f"\n\n**{status.capitalize()}** {where} ({_why(status, rows)}): {', '.join(ids)}."
    text += "\n\nEach claim's words, rule and every figure in full: in `data/results/ledger.md`."
    return Markdown(text)


def save(
    by_machine: dict[str, Records] | None = None, directory: Path | None = None
) -> tuple[Path, Path]:
    """Judge every claim and save the ledger (:func:`~hetero_tutorial.ledger.verdicts.write`):
    ledger.md holds the table, each claim's rule and every figure in full, and every record
    the claims read, one a line."""
    by_machine = verdicts.machines() if by_machine is None else by_machine
    table = verdicts.rows(by_machine)
    appendix = "\n## Each claim's rule, and every figure in full\n\n" + _rules_and_figures(table)
    appendix += "\n\n## Every record, one a line\n\n" + records_table(by_machine).data + "\n"
    if records := by_machine.get(verdicts.THIS_MACHINE):
        appendix += "\n## The figures behind each answer\n\n" + "\n".join(_advice(records)[1])
        appendix += "\n"
    return verdicts.write(table, appendix, *([directory] if directory else []))


def _rules_and_figures(table: list[dict[str, Any]]) -> str:
    """Each claim's words, article figure, rule and every machine's figure in full."""
    parts = []
    for claim in claims.CLAIMS:
        rows = [r for r in table if r["claim"] == claim.id]
        figures = "".join(
            f"\n- {r.get('column', r['machine'])}: **{verdicts.label(r)}**: {r['measured']}"
            for r in rows
        )
        parts.append(
            f"**{claim.id}**: {claim.statement} (the article: {claim.article}). Rule: "
            f"{claim.rule}.{figures}"
        )
    return "\n\n".join(parts)


def _fold(summary: str, body: str) -> str:
    """``body`` folded under ``summary``: detail a learner opens if they want it."""
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


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


def _c1_cpu_margin(by_machine: dict[str, Records]) -> str:
    """How far (as a factor) this machine's newest C1 step lies from the nearest edge of the
    rule's band (:data:`~hetero_tutorial.ledger.rules.C1_CPU_BAND`): the step is the range
    the rule judges (both timings widened by their drift, :meth:`Spread.across_runs`), its
    margin measured from the end nearer the edge. "" for a busy or missing record."""
    found = by_machine.get(verdicts.THIS_MACHINE, {}).get("bench.crossover", [])
    if not found:
        return ""
    newest = max(found, key=lambda r: r.provenance["date"])
    first = newest.data.get("policy_step", {}).get("cpu")
    if busy_line(newest, claims.STEP_STUDIES) is not None or not first or not first.get("median_s"):
        return ""
    again = newest.data.get("policy_step_again", {}).get("cpu")
    low, high = (C1_CPU_S * edge for edge in C1_CPU_BAND)
    band = f"the rule's band ({low * 1e3:.2f}-{high * 1e3:.2f} ms)"
    if not again:
        return f" Its step, {first['median_s'] * 1e3:.3f} ms from one timing, against {band}."
    step = Spread.across_runs(first, again)
    inside = low <= step.low and step.high <= high
    if inside:  # the margin the range keeps: from its end nearer an edge
        factor = min(step.low / low, high / step.high)
    else:  # how far out the range lies: from its end nearer the band
        factor = max(low / step.high, step.low / high, 1.0)
    side = "inside" if inside else "outside" if factor > 1.0 else "across an edge of"
    figure = (
        f"{step.low * 1e3:.3f}-{step.high * 1e3:.3f} ms (their drift: "
        f"{Spread.drift(first, again):.2f}x)"
    )
    text = f" Its step, {figure}, lies {side} {band}"
    if side == "across an edge of":
        return text + ": another run could land on either side."
    return text + f", {factor:.2f}x from the nearest edge (measured from the range's nearer end)."


def across_runs_line(by_machine: dict[str, Records]) -> str:
    """How many recorded runs of this CPU the claims read across runs (C1's CPU half) read
    here, and so which error bar its figure carries: the range over runs, both timings of
    one run (notebook 00 times the step twice and, since it records both, the rule spans
    them), or one timing's IQR (a record from before that)."""
    runs = verdicts.earlier_runs("C1-CPU", by_machine) if verdicts.THIS_MACHINE in by_machine else 0
    if runs == 0:
        return "C1's CPU half: no run of this machine is recorded yet (notebook 00 measures it)."
    if runs == 1:
        found = by_machine[verdicts.THIS_MACHINE].get("bench.crossover", [])
        twice = any("policy_step_again" in record.data for record in found)
        bar = (
            "its two timings' middle halves, widened by their drift"
            if twice
            else "one timing's IQR (a record from before notebook 00 kept its second timing)"
        )
        return f"C1's CPU half read this machine's one recorded run: its range is {bar}." + (
            _c1_cpu_margin(by_machine)
        )
    return (
        f"C1's CPU half read {runs} recorded runs of this CPU (this machine's and earlier ones "
        "of the same CPU identity): its range spans their medians, the drift between runs."
    )


def _short_busy(text: str) -> str:
    """A busy study's verdict line in a few words (the fold holds it in full)."""
    study = text.split(f": {BUSY_WORDS}")[0]
    return f"{verdicts.NOT_JUDGED}: {study} ran on a busy machine"


def _advice(records: Records) -> tuple[list[str], list[str]]:
    """This machine's answers, one line each, and the figures behind them (and any busy
    study's reading in full)."""
    answers, figures = [], []
    for item in advice.advice(records):
        question = item["question"][0].upper() + item["question"][1:]
        said = item["advice"]
        if BUSY_WORDS in said:
            figures.append(f"- **{question}**: {said}.")
            said = _short_busy(said)
        elif item["figure"]:
            figures.append(f"- **{question}**: {item['figure']}.")
        answers.append(f"- **{question}**: {said}.")
    return answers, figures


def what_to_do(by_machine: dict[str, Records]) -> Markdown:
    """The recommendations for this machine, from its own records (:mod:`ledger.advice`):
    each answer on one line; the figures behind them (and any busy study's reading) go to
    ``ledger.md`` (:func:`save`)."""
    records = by_machine.get(verdicts.THIS_MACHINE, {})
    if not records:
        return Markdown("No records from this machine yet: run notebooks 00-05 first.")
    hardware = next(iter(records.values()))[0].hardware
    answers, figures = _advice(records)
    where = "\n\nThe figures behind each answer: in `data/results/ledger.md`." if figures else ""
    return Markdown("\n".join([f"**What to do on {hardware}**:", "", *answers]) + where)


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
