"""Placements: the device of each phase of the training pipeline.

A :class:`Placement` names where the rollout, the storage and the update run. The
presets are the designs the series compares; algorithms take a placement and
never pick devices themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from hetero_tutorial.core.devices import DeviceError, accelerator, resolve_device

PLACEMENT_NAMES = ("all-accelerator", "hybrid", "all-cpu")
"""The placement presets the series compares (see :func:`placement`)."""


@dataclass(frozen=True)
class Placement:
    """The device of each phase of the training pipeline.

    ``rollout``: where the actor's forward pass runs while stepping the environments
    (the environments themselves always run on the CPU).
    ``storage``: where the rollout or replay data lives.
    ``update``: where the learner computes losses and gradients.
    """

    name: str
    rollout: torch.device
    storage: torch.device
    update: torch.device
    accelerator_missing: bool = False
    """True when a preset wanted an accelerator and fell back to the CPU."""

    @property
    def devices(self) -> tuple[torch.device, ...]:
        """The distinct devices this placement uses."""
        return tuple(dict.fromkeys((self.rollout, self.storage, self.update)))

    @property
    def pin_storage(self) -> bool:
        """Whether CPU storage should be page-locked (pinned): only when it feeds an accelerator."""
        return self.storage.type == "cpu" and self.update.type == "cuda"

    def describe(self) -> str:
        """One line a learner can read, saying where each phase runs."""
        text = (
            f"{self.name}: rollout on {self.rollout}, storage on {self.storage}"
            f"{' (pinned)' if self.pin_storage else ''}, update on {self.update}"
        )
        if self.accelerator_missing:
            text += " (no accelerator here, so the accelerator's phases run on the CPU)"
        return text


def placement(name: str, accelerator_device: str | torch.device | None = None) -> Placement:
    """One of the series' placement presets.

    ``"all-accelerator"``: everything on the accelerator (the article's baseline).
    ``"hybrid"``: rollout and storage on the CPU, update on the accelerator.
    ``"all-cpu"``: everything on the CPU.

    ``accelerator_device`` names the accelerator to use; by default the one
    :func:`accelerator` finds. On a machine without one the presets still run,
    on the CPU, and the placement says so (``accelerator_missing``). Naming an
    accelerator that is not here is an error.
    """
    if name not in PLACEMENT_NAMES:
        raise DeviceError(
            f"unknown placement {name!r}; choose one of {', '.join(PLACEMENT_NAMES)}."
        )
    cpu = torch.device("cpu")
    if accelerator_device is not None:
        fast, missing = resolve_device(accelerator_device), False
    else:
        found = accelerator()
        fast, missing = (found, False) if found is not None else (cpu, True)
    missing = missing and name != "all-cpu"
    if name == "all-accelerator":
        return Placement(name, fast, fast, fast, missing)
    if name == "hybrid":
        return Placement(name, cpu, cpu, fast, missing)
    return Placement(name, cpu, cpu, cpu)
