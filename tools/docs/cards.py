"""The run-time line of every notebook's opening card, generated from the recorded runs.

A card that says "about 10 s" goes stale the day a cell changes. So the line is built
from the reference run-time records (``data/reference/<machine>/run.times.*.json``,
written by ``python -m hetero_tutorial run [--quick] --reference``): per machine, the
median over its recorded runs in each mode, and the cell that took longest in full mode,
named by its section. ``python -m tools.docs regenerate`` (``make docs``) rewrites the
cards with the README's tables, and a test checks that each card matches the records.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import nbformat

from hetero_tutorial.app.run_times import run_time_records
from hetero_tutorial.app.words import prose_words
from hetero_tutorial.core import results
from hetero_tutorial.core.paths import REPO_DIR

NOTEBOOKS_DIR = REPO_DIR / "notebooks"
RUN_TIME = "**Run time**"
"""How the card's run-time paragraph starts; it runs to the end of the card."""


def run_time(value: float) -> str:
    """Seconds as a run time reads best: ``"42 s"``, or ``"3.7 min"`` from two minutes on."""
    return f"{value:.0f} s" if value < 120 else f"{value / 60:.1f} min"


NOTEBOOK_HEADING = re.compile(r"\d\d · ")
"""How a notebook's title heading starts: a run record names its opening cells' section so."""


def longest_cell(runs: list[results.Record], name: str) -> tuple[str, float] | None:
    """The section and median seconds of the code cell that took longest, over ``runs``."""
    by_cell: dict[tuple[int, str], list[float]] = defaultdict(list)
    for record in runs:
        for cell in record.data.get("cell_seconds", {}).get(name, []):
            by_cell[(cell["cell"], cell["section"])].append(cell["seconds"])
    if not by_cell:
        return None
    (_, section), seconds = max(by_cell.items(), key=lambda item: statistics.median(item[1]))
    if NOTEBOOK_HEADING.match(section):  # the opening cells: a record keeps the title as it was
        section = f"{name[:2]} · {title(name)}"  # today's title, not the one it had then
    return section, statistics.median(seconds)


def _machine(record: results.Record) -> tuple[Any, ...]:
    """A recorded machine by CPU name, cores and accelerator: a record written before
    fingerprints kept the CPU's family and model is the same machine as one written after."""
    found = record.provenance["fingerprint"]
    return found.get("cpu_model"), found.get("cpu_logical_cores"), found.get("accelerator")


def run_time_line(name: str, records: list[results.Record] | None = None) -> str:
    """The card's run-time line for notebook file ``name`` (e.g. ``03_hybrid_....ipynb``): per
    mode, each recorded machine's newest run (older runs timed older code), as one figure or
    the range over the machines, in one line (the machines apart: ``docs/results.md``).
    ``doctor`` scales it to the learner's machine."""
    records = run_time_records() if records is None else records
    newest: dict[str, dict[str, tuple[str, float]]] = defaultdict(dict)
    for record in records:
        if name in record.data["notebook_seconds"]:
            date, seconds = record.provenance["date"], record.data["notebook_seconds"][name]
            machine = _machine(record)
            held = newest[record.data["mode"]].get(machine)
            if held is None or date > held[0]:
                newest[record.data["mode"]][machine] = (date, seconds)
    if not newest:
        return (
            f"{RUN_TIME}: not recorded yet (`python -m hetero_tutorial run --quick --reference` "
            "records it)."
        )
    said = []
    for mode in ("quick", "full"):
        machines = sorted(seconds for _, seconds in newest.get(mode, {}).values())
        words = mode
        if not machines:
            said.append(f"not recorded in {mode} mode")
            continue
        low, high = run_time(machines[0]), run_time(machines[-1])
        unit = high.split()[-1]
        if low == high:
            span = low
        elif low.endswith(f" {unit}"):  # 14-31 s
            span = f"{low.removesuffix(f' {unit}')}-{high}"
        else:  # 116 s to 2.2 min
            span = f"{low} to {high}"
        said.append(f"{span} {words}")
    return (
        f"{RUN_TIME}: {', '.join(said)} on the recorded machines (yours: "
        "`python -m hetero_tutorial doctor`)."
    )


WORDS_PER_MINUTE = 150
"""A learner's reading speed for technical prose with numbers in it (a careful pace; fluent
readers of plain text reach 200-250)."""


def title(name: str) -> str:
    """Notebook file ``name``'s title: its card's heading without the number ("Devices and
    honest timing")."""
    heading = nbformat.read(NOTEBOOKS_DIR / name, as_version=4).cells[0].source.splitlines()[0]
    return heading.lstrip("# ").removeprefix(f"{name[:2]} · ").strip()


def reading_minutes(name: str) -> float:
    """Minutes to read notebook file ``name``'s prose at :data:`WORDS_PER_MINUTE`."""
    notebook = nbformat.read(NOTEBOOKS_DIR / name, as_version=4)
    return prose_words(notebook) / WORDS_PER_MINUTE


def card_run_time(notebook: nbformat.NotebookNode) -> str:
    """The run-time paragraph of a notebook's opening card, as written."""
    card = notebook.cells[0].source
    return card[card.index(RUN_TIME) :].strip() if RUN_TIME in card else ""


def notebook_paths() -> list[Path]:
    return sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))


def update_cards(paths: list[Path] | None = None) -> list[Path]:
    """Rewrite the run-time paragraph of each notebook's card from the records; return the
    notebooks changed (outputs untouched: the notebooks are stored without them)."""
    records = run_time_records()
    changed = []
    for path in notebook_paths() if paths is None else paths:
        notebook = nbformat.read(path, as_version=4)
        card = notebook.cells[0].source
        line = run_time_line(path.name, records)
        if RUN_TIME not in card or card_run_time(notebook) == line:
            continue
        notebook.cells[0].source = card[: card.index(RUN_TIME)] + line
        nbformat.write(notebook, path)
        changed.append(path)
    return changed
