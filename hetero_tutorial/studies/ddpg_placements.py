"""DDPG under each placement: speed where the placements differ, copies on any machine (C4, C7).

:func:`placement_comparison` trains DDPG under each placement, interleaved
(:func:`~hetero_tutorial.rl.ddpg.runs.train_side_by_side`). Placements that resolve to
the same devices (all of them, without an accelerator) would time the same code three
times, so :func:`compare_placements` runs one per configuration (each row says which
placements it ``stands_for``), and counts every placement's copies per step with
:func:`~hetero_tutorial.studies.copies.ddpg_copies`, on the accelerator or on the ``meta``
stand-in: C4 and C7's copy counts on any machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hetero_tutorial.core.configurations import distinct_placements, same_devices_note
from hetero_tutorial.core.findings import Expectation, Finding
from hetero_tutorial.core.machine_load import guarded, judged
from hetero_tutorial.core.placement import ENV_ON_CPU_NAMES, placement
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.runs import train_side_by_side
from hetero_tutorial.studies.copies import ddpg_copies

ARTICLE_C7 = 0.85
"""The article's DDPG speed with 20+ device switches per 1000 samples, over pure CPU's."""


def placement_comparison(
    config: DDPGConfig,
    placements: Sequence[str] = ENV_ON_CPU_NAMES,
    chunk_steps: int = 50,
    **options: Any,
) -> list[dict[str, Any]]:
    """DDPG with ``config`` under each placement, interleaved: speed and copies (claims C4, C7).

    With the transition buffer (the article's pattern A) and an accelerator, the
    hybrid placement copies every field of every sampled batch from host to device: the
    "device switches per sample" that C7 blames for DDPG running slower than pure CPU.
    Turns of ``chunk_steps``: rows' ``chunk_steps_per_s`` pair up (the ratio's spread).
    ``options``: ``seed``, ``threads``, ``eval_episodes``, as :func:`train_side_by_side`."""
    runs = train_side_by_side(config, placements, chunk_steps=chunk_steps, **options)
    return [
        {
            "placement": name,
            "env_steps_per_s": run.env_steps_per_s,
            "chunk_steps_per_s": run.chunk_steps_per_s,
            "first_update_seconds": run.first_update_seconds,
            "copies_per_1000_samples": run.copies_per_1000_samples,
            "copies_by_phase": run.copies_by_phase,
        }
        for name, run in runs.items()
    ]


@guarded("the DDPG placements")
def compare_placements(
    config: DDPGConfig,
    names: Sequence[str] = ENV_ON_CPU_NAMES,
    chunk_steps: int = 50,
    **options: Any,
) -> dict[str, Any]:
    """The fields of a ``bench.ddpg_placements`` record: ``rows`` (one per distinct
    configuration: speed, each turn's speed, copies counted in the run) and
    ``counted_copies`` (per placement, by phase), with ``note`` saying what was merged.
    ``options``: ``seed``, ``threads``, ``eval_episodes``, as :func:`train_side_by_side`."""
    placements = [placement(name) for name in names if name in ENV_ON_CPU_NAMES]
    groups = distinct_placements(placements)
    rows = placement_comparison(config, [group[0].name for group in groups], chunk_steps, **options)
    for row, group in zip(rows, groups, strict=True):
        row["stands_for"] = [p.name for p in group]
    return {
        "buffer": config.buffer,
        "hidden": config.hidden,
        "steps": config.total_steps,
        "rows": rows,
        "counted_copies": {p.name: ddpg_copies(config, p.name) for p in placements},
        "note": same_devices_note(groups),
    }


@judged()
def speed_sentence(rows: Sequence[dict[str, Any]]) -> str:
    """C7's question from the rows: each accelerated placement's speed over all-CPU's, with
    the spread of their interleaved turns, as a finding against the article's "slower"; or
    why there is nothing to compare."""
    by_name = {name: row for row in rows for name in row.get("stands_for", [row["placement"]])}
    cpu = by_name["all-cpu"]
    if all(row is cpu for row in by_name.values()):
        return (
            "One configuration stood for every placement: no speed ratio; C7 needs an accelerator."
        )
    lines = []
    for name in ("hybrid", "all-accelerator"):
        row = by_name.get(name)
        if row is None:
            continue
        if row is cpu:
            lines.append(f"{name} ran as all-cpu here (the same devices): no speed to compare.")
            continue
        turns = row.get("chunk_steps_per_s", []), cpu.get("chunk_steps_per_s", [])
        spread = Spread.of_pairs(*turns, value=row["env_steps_per_s"] / cpu["env_steps_per_s"],
                                 per="turn")  # fmt: skip
        finding = Finding(
            f"{name} against all-CPU, steps/s",
            spread,
            Expectation.at_most(1.0, f"the article's C7, slower than all-CPU ({ARTICLE_C7:.2f}x)"),
            figures=(rows,),
        )
        lines.append(f"{finding}.")
    return " ".join(lines)
