"""The README's generated tables, built from the committed reference records only.

Each table sits between two markers in README.md; ``python -m hetero_tutorial
ledger --readme`` rewrites them from ``data/reference/``, and a test checks that
the committed README matches, so no figure in the README is typed by hand.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.paths import REPO_DIR
from hetero_tutorial.ledger import verdicts as ledger

README = REPO_DIR / "README.md"


def _marker(name: str, end: bool = False) -> str:
    if end:
        return f"<!-- generated:{name} end -->"
    return f"<!-- generated:{name} start (python -m hetero_tutorial ledger --readme) -->"


def _provenance(record: results.Record) -> str:
    facts = record.provenance
    return f"{record.hardware}, {facts['date'][:10]}, `{facts['command']}`"


def run_times_table() -> str:
    """Seconds per notebook in quick and full mode on each reference machine.

    One column per notebook of the series (a notebook a record did not run shows a dash).
    """
    records = results.load_references("run.times")
    if not records:
        return "No run times recorded yet (`make run` writes them; see Contributing)."
    numbers = sorted(
        {path.name[:2] for path in (REPO_DIR / "notebooks").glob("[0-9][0-9]_*.ipynb")}
        | {name[:2] for record in records for name in record.data["notebook_seconds"]}
    )
    lines = ["| machine | mode | " + " | ".join(numbers) + " | total |"]
    lines.append("|" + "---|" * (len(numbers) + 3))
    for record in sorted(records, key=lambda r: (r.hardware, r.data["mode"])):
        seconds = record.data["notebook_seconds"]
        cells = [
            next((f"{s:.0f} s" for name, s in seconds.items() if name.startswith(f"{n}_")), "—")
            for n in numbers
        ]
        total = sum(seconds.values()) / 60
        lines.append(
            f"| {record.hardware} | {record.data['mode']} | "
            + " | ".join(cells)
            + f" | {total:.1f} min |"
        )
    return "\n".join(lines)


def _ratio_row(name: str, ours: float, peer: float, ratio: float, target: str, prov: str) -> str:
    return f"| {name} | {ours:,.0f} | {peer:,.0f} | {ratio:.2f}x | {target} | {prov} |"


def speed_table() -> str:
    """Our PPO and DDPG against Stable-Baselines3 and CleanRL, from the peer benchmarks."""
    lines = [
        "| comparison | ours (steps/s) | peer (steps/s) | ours / peer | target | measured on |",
        "|---|---|---|---|---|---|",
    ]
    for record in results.load_references("bench.ppo_peers"):
        for setting, peer in (("sb3", "sb3"), ("sb3", "cleanrl"), ("cleanrl", "cleanrl")):
            rates = record.data["summary"][setting]["steps_per_s"]
            ratio = rates["ours_over"][peer]["ratio_of_medians"]
            target = {"sb3": ">= 2x", "cleanrl": "> 1x"}[peer] if setting == peer else "—"
            lines.append(
                _ratio_row(
                    f"PPO, {setting.upper() if setting == 'sb3' else 'CleanRL'} settings, "
                    f"vs {'SB3' if peer == 'sb3' else 'CleanRL'}",
                    rates["rates"]["ours"]["median"],
                    rates["rates"][peer]["median"],
                    ratio,
                    target,
                    _provenance(record),
                )
            )
    for record in results.load_references("bench.ddpg_vs_sb3"):
        speeds = record.data["median_steps_per_s"]
        lines.append(
            _ratio_row(
                f"DDPG 256x256, batch 256, {record.data['threads']} thread(s), vs SB3",
                speeds["ours"],
                speeds["sb3"],
                record.data["median_round_ratio"],
                ">= 1.5x",
                _provenance(record),
            )
        )
    for record in results.load_references("bench.ddpg_written_out"):
        speeds = record.data["median_steps_per_s"]
        lines.append(
            _ratio_row(
                "DDPG as above, 1 thread, backward written out by hand "
                "(benchmarks/ddpg_written_out.py, not the package's), vs SB3",
                speeds["written_out"],
                speeds["sb3"],
                record.data["median_round_ratio"]["written_out/sb3"],
                "—",
                _provenance(record),
            )
        )
    if len(lines) == 2:
        return "No peer benchmark recorded yet (see benchmarks/README.md)."
    return "\n".join(lines)


SECTIONS: dict[str, Callable[[], str]] = {
    "ledger": ledger.readme_table,
    "run-times": run_times_table,
    "speed": speed_table,
}
"""Every generated section of the README, by marker name."""


def section(text: str, name: str) -> str:
    """The current content of section ``name`` in README ``text``."""
    pattern = re.escape(_marker(name)) + r"\n(.*?)\n" + re.escape(_marker(name, end=True))
    found = re.search(pattern, text, re.S)
    if found is None:
        raise UsageError(f"README has no generated section {name!r} ({_marker(name)})")
    return found.group(1)


def update(readme: Path = README) -> None:
    """Regenerate every section of ``readme`` from the reference records."""
    text = readme.read_text()
    for name, build in SECTIONS.items():
        old = f"{_marker(name)}\n{section(text, name)}\n{_marker(name, end=True)}"
        text = text.replace(old, f"{_marker(name)}\n{build()}\n{_marker(name, end=True)}")
    readme.write_text(text)
