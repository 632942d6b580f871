"""The workshop plan's generated sections: its blocks, what each teaches, how long each
path through the series takes, and the night before.

``docs/workshop.md`` must run a class as written, so every duration on it is summed from
numbers, never typed: a block's run time from the reference run-time records, its reading
time from its notebook's prose, its exercises and questions counted from their sources and
priced at the minutes below. :mod:`tools.docs.kit` writes these sections into
the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import nbformat

from hetero_tutorial.app import run_times
from hetero_tutorial.core import results
from tools.docs.cards import (
    NOTEBOOKS_DIR,
    longest_cell,
    run_time,
)

CELL_LIMIT_S = 180
"""The longest a class should wait on one cell (the series' rule for full mode)."""
NOTEBOOK_LIMIT_S = 300
"""The longest a class should wait on one notebook (the series' rule for full mode)."""


@dataclass(frozen=True)
class Block:
    """One block of a workshop: a few notebooks taught together."""

    title: str
    notebooks: tuple[str, ...]
    """Their numbers, e.g. ``("01", "02")``."""


BLOCKS = (
    Block("Honest timing and this machine", ("00",)),
    Block("The all-accelerator baseline and its profile", ("01", "02")),
    Block("The hybrid split and CPU threads", ("03",)),
    Block("Replay buffers and DDPG", ("04",)),
    Block("The dynamic allocator", ("05",)),
    Block("Rollout and update at the same time", ("06",)),
    Block("Environments on the device", ("07",)),
    Block("Compile and CUDA graphs", ("08",)),
    Block("GAIL: where the discriminator runs", ("09",)),
    Block("The claims ledger", ("10",)),
)
"""The workshop's blocks in teaching order; every notebook of the series is in one."""


def _names(block: Block) -> list[str]:
    return [name for name in run_times.series_notebooks() if name[:2] in block.notebooks]


def _block_seconds(block: Block, medians: dict[str, float]) -> float | None:
    names = _names(block)
    if not names or any(name not in medians for name in names):
        return None
    return sum(medians[name] for name in names)


def in_class(block: Block, full_runs: list[results.Record]) -> str:
    """Which mode to run a block in, in class: full mode where each of its notebooks stays
    within the series' limits on this machine's records, else quick mode."""
    if not full_runs:
        return "quick mode (full mode not recorded)"
    medians = run_times.notebook_medians(full_runs)
    for name in _names(block):
        if name not in medians:
            return f"quick mode ({name[:2]} not recorded in full mode)"
        cell = longest_cell(full_runs, name)
        if medians[name] > NOTEBOOK_LIMIT_S:
            return f"quick mode; full mode the night before ({name[:2]} takes longer than 5 min)"
        if cell is not None and cell[1] > CELL_LIMIT_S:
            return (
                f"quick mode; full mode the night before ({name[:2]} has a cell of "
                f"{run_time(cell[1])})"
            )
    return "full mode"


def _cell(seconds: float | None) -> str:
    return "not recorded" if seconds is None else run_time(seconds)


def _longest(block: Block, full_runs: list[results.Record]) -> str:
    found = [
        (cell[1], name[:2], cell[0])
        for name in _names(block)
        if (cell := longest_cell(full_runs, name)) is not None
    ]
    if not found:
        return "not recorded"
    seconds, number, section = max(found)
    return f"{run_time(seconds)} ({number}: *{section}*)"


def _fewer_runs(quick: list[results.Record], full: list[results.Record]) -> str:
    """Which notebooks fewer runs recorded (a notebook added to the series after the first
    runs), with their counts: ``" (06: 1 quick and 1 full)"``, or ``""``."""
    notes = []
    for name in run_times.series_notebooks():
        counts = [sum(name in r.data["notebook_seconds"] for r in runs) for runs in (quick, full)]
        if counts != [len(quick), len(full)]:
            notes.append(f"{name[:2]}: {counts[0]} quick and {counts[1]} full")
    return f" ({'; '.join(notes)})" if notes else ""


def workshop_blocks() -> str:
    """Per reference machine, each block's run time in quick and in full mode (the medians
    of the recorded runs), its longest cell in full mode, and the mode to run it in class."""
    machines = by_machine()
    if not machines:
        return "No run times recorded yet (`python -m hetero_tutorial run --reference`)."
    parts = []
    for hardware, modes in machines.items():
        quick, full = modes.get("quick", []), modes.get("full", [])
        quick_medians, full_medians = (
            run_times.notebook_medians(quick),
            run_times.notebook_medians(full),
        )
        lines = [
            f"On {hardware}, the medians of {len(quick)} quick and {len(full)} full recorded "
            f"runs{_fewer_runs(quick, full)}:",
            "",
            "| block | notebooks | quick mode | full mode | longest cell, full mode | in class |",
            "|---|---|---|---|---|---|",
        ]
        for block in BLOCKS:
            lines.append(
                f"| {block.title} | {', '.join(block.notebooks)} "
                f"| {_cell(_block_seconds(block, quick_medians))} "
                f"| {_cell(_block_seconds(block, full_medians))} "
                f"| {_longest(block, full)} | {in_class(block, full)} |"
            )
        for mode, runs in (("quick", quick), ("full", full)):
            if runs:
                total, note = run_times.series_total(runs)
                lines.append("")
                lines.append(
                    f"The whole series in {mode} mode: {run_time(total)}"
                    + (f" ({note})." if note else ".")
                )
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _objectives(name: str) -> list[str]:
    """The bullets of a notebook's "What you will learn", its links made relative to docs/."""
    card = nbformat.read(NOTEBOOKS_DIR / name, as_version=4).cells[0].source
    start = card.index("**What you will learn**")
    end = card.index("**Prerequisites**", start)
    text = card[start:end].replace("../docs/", "")
    bullets = [" ".join(part.split()) for part in text.split("\n- ")[1:]]
    return [f"- {bullet}" for bullet in bullets]


def objectives() -> str:
    """Per block, what its notebooks teach: their cards' "What you will learn", verbatim."""
    parts = []
    for block in BLOCKS:
        lines = [f"**{block.title}** ({', '.join(block.notebooks)})", ""]
        for name in _names(block):
            lines += _objectives(name)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def by_machine() -> dict[str, dict[str, list[results.Record]]]:
    found: dict[str, dict[str, list[results.Record]]] = {}
    for (hardware, mode), runs in run_times.run_times_by_machine().items():
        found.setdefault(hardware, {})[mode] = runs
    return found


def notebook_name(number: str) -> str:
    return next(name for name in run_times.series_notebooks() if name.startswith(number))


def _series_minutes(mode: str) -> Callable[[dict[str, list[results.Record]]], str]:
    def say(modes: dict[str, list[results.Record]]) -> str:
        runs = modes.get(mode, [])
        if not runs:
            return "not recorded"
        total, note = run_times.series_total(runs)
        return run_time(total) + (f" ({note})" if note else "")

    return say


NIGHT_BEFORE = (
    ("Every seat: install (a large download)", "make setup", None),
    ("Every seat: the pre-flight check", "python -m hetero_tutorial doctor", None),
    ("Instructor: every notebook in full mode", "make run", _series_minutes("full")),
    ("Instructor: the book from those outputs", "make book", None),
    (
        "Optional: the book's pages in a headless browser",
        "make setup-browser, then HETERO_TUTORIAL_BOOK=build/book/html .venv/bin/python -m "
        "pytest -q -p no:cacheprovider tests/test_book_browser.py",
        None,
    ),
    (
        "Optional, instead: the quick-mode book checked as `make test` does",
        "make notebooks, then make book-test",
        _series_minutes("quick"),
    ),
)
"""The night before's steps: who runs them, the command, and what of its time a run-time
record gives (None: no record measures it)."""


def night_before() -> str:
    """The night before's steps, with the time each took on each recorded machine where a
    run-time record gives it (the notebooks' medians summed)."""
    machines = by_machine()
    lines = []
    for number, (who, command, timing) in enumerate(NIGHT_BEFORE, start=1):
        commands = " then ".join(f"`{part.strip()}`" for part in command.split(", then"))
        if timing is None:
            said = "not recorded"
        else:
            said = "; ".join(f"{timing(modes)} on {hw}" for hw, modes in machines.items())
        lines.append(f"{number}. **{who}**: {commands}. Time: {said}.")
    return "\n".join(lines)
