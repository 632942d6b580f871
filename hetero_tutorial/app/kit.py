"""The teacher's kit's generated sections: the workshop's blocks and the reference machines.

``docs/workshop.md`` and ``docs/hardware.md`` are prose around tables that must not be
typed: how long each block of a workshop takes, and which hardware the series has
records from. Each such table sits between two markers, as in the README;
``python -m hetero_tutorial ledger --readme`` rewrites them from ``data/reference/``, a
test checks that the committed pages match, and the book renders them fresh.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hetero_tutorial.app import readme
from hetero_tutorial.app.cards import longest_cell, run_time
from hetero_tutorial.core import results
from hetero_tutorial.core.machine import cpu_label
from hetero_tutorial.core.paths import REPO_DIR

DOCS_DIR = REPO_DIR / "docs"
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
    Block("The claims ledger", ("09",)),
)
"""The workshop's blocks in teaching order; every notebook of the series is in one."""


def _names(block: Block) -> list[str]:
    return [name for name in readme.series_notebooks() if name[:2] in block.notebooks]


def _block_seconds(block: Block, medians: dict[str, float]) -> float | None:
    names = _names(block)
    if not names or any(name not in medians for name in names):
        return None
    return sum(medians[name] for name in names)


def _in_class(block: Block, full_runs: list[results.Record]) -> str:
    """Which mode to run a block in, in class: full mode where each of its notebooks stays
    within the series' limits on this machine's records, else quick mode."""
    if not full_runs:
        return "quick mode (full mode not recorded)"
    medians = readme.notebook_medians(full_runs)
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
    for name in readme.series_notebooks():
        counts = [sum(name in r.data["notebook_seconds"] for r in runs) for runs in (quick, full)]
        if counts != [len(quick), len(full)]:
            notes.append(f"{name[:2]}: {counts[0]} quick and {counts[1]} full")
    return f" ({'; '.join(notes)})" if notes else ""


def workshop_blocks() -> str:
    """Per reference machine, each block's run time in quick and in full mode (the medians
    of the recorded runs), its longest cell in full mode, and the mode to run it in class."""
    by_machine: dict[str, dict[str, list[results.Record]]] = {}
    for (hardware, mode), runs in readme.run_times_by_machine().items():
        by_machine.setdefault(hardware, {})[mode] = runs
    if not by_machine:
        return "No run times recorded yet (`python -m hetero_tutorial run --reference`)."
    parts = []
    for hardware, modes in by_machine.items():
        quick, full = modes.get("quick", []), modes.get("full", [])
        quick_medians, full_medians = readme.notebook_medians(quick), readme.notebook_medians(full)
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
                f"| {_longest(block, full)} | {_in_class(block, full)} |"
            )
        for mode, runs in (("quick", quick), ("full", full)):
            if runs:
                total, note = readme.series_total(runs)
                lines.append("")
                lines.append(
                    f"The whole series in {mode} mode: {run_time(total)}"
                    + (f" ({note})." if note else ".")
                )
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _machine_line(folder: str, records: list[results.Record]) -> str:
    facts = records[-1].provenance["fingerprint"]
    accelerator = facts.get("accelerator")
    device = (
        f"{accelerator.get('name', accelerator['type'])} ({accelerator['type']})"
        if accelerator
        else "none"
    )
    # Each CPU the records tell apart (those from before the fingerprint kept the CPU's
    # identity: under the model name alone)
    cpus = results.each_once(cpu_label(record.provenance["fingerprint"]) for record in records)
    dates = sorted(record.provenance["date"][:10] for record in records)
    when = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    return (
        f"| `{folder}` | {cpus} | {facts.get('usable_cores')} "
        f"| {facts.get('memory_bytes', 0) / 2**30:.0f} GiB | {device} | {len(records)} | {when} |"
    )


@dataclass(frozen=True)
class Hardware:
    """A kind of machine a teacher may meet, and how a fingerprint shows it."""

    name: str
    matches: Callable[[dict], bool]


SERVER_CORES = 16
"""Usable cores from which a machine counts as a server rather than a laptop."""
HARDWARE = (
    Hardware(
        "a laptop or desktop with an NVIDIA GPU (CUDA)",
        lambda facts: (facts.get("accelerator") or {}).get("type") == "cuda",
    ),
    Hardware(
        f"a server with {SERVER_CORES} or more usable cores",
        lambda facts: (facts.get("usable_cores") or 0) >= SERVER_CORES,
    ),
    Hardware(
        "Apple silicon (MPS)",
        lambda facts: (facts.get("accelerator") or {}).get("type") == "mps",
    ),
)


def reference_machines() -> str:
    """The machines with records in ``data/reference/``, and which kinds of hardware they
    cover: a page about other hardware may say only what these records hold."""
    folders = (
        sorted(p for p in results.REFERENCE_DIR.iterdir() if p.is_dir())
        if results.REFERENCE_DIR.is_dir()
        else []
    )
    by_folder = {folder.name: results.load_all(folder) for folder in folders}
    by_folder = {name: records for name, records in by_folder.items() if records}
    if not by_folder:
        return "`data/reference/` holds no records yet: no figure below comes from any machine."
    lines = [
        "| folder | CPU | usable cores | memory | accelerator | records | measured |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [_machine_line(name, records) for name, records in by_folder.items()]
    count = len(by_folder)
    accelerated = sum(
        bool(records[-1].provenance["fingerprint"].get("accelerator"))
        for records in by_folder.values()
    )
    gpus = (
        f"{accelerated} with an accelerator"
        if accelerated
        else "none with an accelerator: no GPU figure has been recorded yet"
    )
    lines += ["", f"{count} reference machine{'s' * (count != 1)}, {gpus}. Records from:"]
    for hardware in HARDWARE:
        found = [
            name
            for name, records in by_folder.items()
            if hardware.matches(records[-1].provenance["fingerprint"])
        ]
        said = ", ".join(f"`{name}`" for name in found) if found else "**none yet**"
        lines.append(f"- {hardware.name}: {said}")
    return "\n".join(lines)


PAGES: dict[str, dict[str, Callable[[], str]]] = {
    "workshop.md": {"workshop-blocks": workshop_blocks},
    "hardware.md": {"reference-machines": reference_machines},
}
"""The kit's pages in ``docs/`` and their generated sections, by marker name."""


def update(directory: Path = DOCS_DIR) -> list[Path]:
    """Regenerate every generated section of the kit's pages in ``directory``; return them."""
    paths = []
    for page, sections in PAGES.items():
        path = directory / page
        readme.update(path, sections)
        paths.append(path)
    return paths
