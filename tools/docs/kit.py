"""The teacher's kit's pages in ``docs/`` and their generated sections.

``docs/workshop.md``, ``docs/hardware.md`` and ``docs/answers.md`` are prose around
sections that must not be typed: how long each block and path of a workshop takes
(:mod:`tools.docs.workshop`), which hardware the series has records from (here),
and what each question's answer should be (:mod:`tools.docs.answers`). Each
section sits between two markers, as in the README; ``python -m hetero_tutorial ledger
--readme`` rewrites them from ``data/reference/``, a test checks that the committed pages
match, and the book renders them fresh.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hetero_tutorial.core import results
from hetero_tutorial.core.machine import cpu_label
from hetero_tutorial.core.paths import REPO_DIR
from tools.docs import answers, chinese, readme, teaching, workshop

DOCS_DIR = REPO_DIR / "docs"


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
    "workshop.md": {
        "workshop-blocks": workshop.workshop_blocks,
        "workshop-objectives": workshop.objectives,
        "workshop-paths": teaching.paths,
        "night-before": workshop.night_before,
    },
    "hardware.md": {"reference-machines": reference_machines},
    "answers.md": {"answers": answers.answers_sheet, "seat-signs": answers.seat_signs},
    "zh.md": {"zh-verdict-words": chinese.verdict_words, "zh-verdicts": chinese.verdicts_table},
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
