"""The training pipeline as a picture, drawn from the placement presets themselves.

environments -> actor (rollout) -> storage -> learner (update) -> weight sync back to the
actor, one row per preset, each stage coloured by the device :func:`placement` gives it,
and every hop between two devices marked as a copy. The devices are read from the
presets (with ``meta`` standing in for an accelerator on a machine without one, so the
design shows), so the picture cannot drift from the code. Given counted copies
(:func:`hetero_tutorial.studies.copies.ppo_copies`), each copy is labelled with how many
the code made per iteration.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.placement import PLACEMENT_NAMES, Placement, placement

STAGES = (
    ("env", "environments"),
    ("rollout", "actor\n(rollout)"),
    ("storage", "storage"),
    ("update", "learner\n(update)"),
)
"""The pipeline's stages in order: the phase whose device a placement names
(``<stage>_device``), and a label."""
HOPS = (
    ("env", "rollout", "rollout", "observations in,\nactions out: per step"),
    ("rollout", "storage", None, "each step stored"),
    ("storage", "update", "transfer", "the rollout,\nonce per iteration"),
)
"""Consecutive stages: (from, to, the phase that counts its copies, what crosses)."""
ROW_HEIGHT = 2.3
"""Vertical room per preset, in the drawing's units (a box is 0.8 high)."""
CPU_COLOUR, ACCELERATOR_COLOUR, COPY_COLOUR = "#cfe3f5", "#fbd5a5", "tab:red"


def design(name: str) -> Placement:
    """A preset as designed: its accelerator phases on this machine's accelerator, or on
    ``meta`` (a stand-in) where there is none, so the picture shows which phases move."""
    found = accelerator()
    return placement(name, accelerator_device=found if found is not None else "meta")


def _device(placement: Placement, stage: str) -> torch.device:
    return getattr(placement, f"{stage}_device")


def _label(device: torch.device) -> str:
    return "accelerator" if device.type == "meta" else str(device)


def _counted(copies: dict[str, Any] | None, phase: str | None) -> str:
    if copies is None or phase is None:
        return ""
    count = copies.get("by_phase", {}).get(phase, {}).get("count_per_iteration")
    return f"\n{count:g} per iteration (counted)" if count else ""


def pipeline(
    names: Sequence[str] = PLACEMENT_NAMES,
    copies: dict[str, dict[str, Any]] | None = None,
) -> Figure:
    """One row per preset: where each stage runs, and the copies between them (red).

    ``copies``: per preset name, a count of its copies by phase (as
    :func:`~hetero_tutorial.studies.copies.ppo_copies` returns), to label the copies with.
    """
    names = [name for name in names if name in PLACEMENT_NAMES]
    fig, ax = plt.subplots(figsize=(10, 0.6 + ROW_HEIGHT * len(names)))
    ax.set_xlim(-0.2, 4 * 2.6 - 0.3)
    ax.set_ylim(-0.9, ROW_HEIGHT * len(names) - 0.2)
    ax.axis("off")
    for row, name in enumerate(names):
        designed, counted = design(name), (copies or {}).get(name)
        y = ROW_HEIGHT * (len(names) - 1 - row)
        ax.text(-0.15, y + 0.95, name, fontsize=11, fontweight="bold", va="bottom")
        x = {stage: 2.6 * i for i, (stage, _) in enumerate(STAGES)}
        for stage, label in STAGES:
            device = _device(designed, stage)
            colour = CPU_COLOUR if device.type == "cpu" else ACCELERATOR_COLOUR
            box = FancyBboxPatch((x[stage], y), 1.9, 0.8, boxstyle="round,pad=0.05", fc=colour)
            ax.add_patch(box)
            ax.text(
                x[stage] + 0.95,
                y + 0.4,
                f"{label}\non {_label(device)}",
                ha="center",
                va="center",
                fontsize=8.5,
            )
        for start, end, phase, what in HOPS:
            copy = _device(designed, start) != _device(designed, end)
            colour = COPY_COLOUR if copy else "0.4"
            text = ("copy: " if copy else "") + what + (_counted(counted, phase) if copy else "")
            ax.add_patch(
                FancyArrowPatch(
                    (x[start] + 1.95, y + 0.4),
                    (x[end] - 0.05, y + 0.4),
                    arrowstyle="<|-|>" if start == "env" else "-|>",
                    mutation_scale=12,
                    color=colour,
                )
            )
            ax.text(
                (x[start] + x[end] + 1.9) / 2,
                y + 0.9,
                text,
                ha="center",
                va="bottom",
                fontsize=7,
                color=colour,
            )
        if designed.rollout_device != designed.update_device:
            sync = "copy: weight sync, once per iteration" + _counted(counted, "weight_sync")
            ax.add_patch(
                FancyArrowPatch(
                    (x["update"] + 0.95, y - 0.05),
                    (x["rollout"] + 0.95, y - 0.05),
                    connectionstyle="arc3,rad=-0.12",
                    arrowstyle="-|>",
                    mutation_scale=12,
                    color=COPY_COLOUR,
                )
            )
            ax.text(
                (x["update"] + x["rollout"]) / 2 + 0.95,
                y - 0.42,
                sync,
                ha="center",
                va="top",
                fontsize=7,
                color=COPY_COLOUR,
            )
    here = accelerator()
    where = str(here) if here is not None else "none on this machine: the presets run on the CPU"
    fig.suptitle(
        f"Where each phase runs (blue: CPU, orange: the accelerator, {where}); red: copies",
        fontsize=10,
    )
    fig.tight_layout()
    return fig
