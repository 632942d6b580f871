"""Placements: the device of each phase of the training pipeline.

A :class:`Placement` names where the environments, the rollout, the storage and the
update run. The presets are the designs the series compares; algorithms take a
placement and never pick devices themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from hetero_tutorial.core.devices import (
    DeviceError,
    accelerator,
    available_devices,
    resolve_device,
)

PLACEMENT_NAMES = ("all-accelerator", "hybrid", "all-cpu", "all-device")
"""The placement presets the series compares (see :func:`placement`)."""
ENV_ON_CPU_NAMES = PLACEMENT_NAMES[:3]
"""The presets whose environments run on the CPU: those an algorithm that steps Gymnasium's
environments (DDPG) can take. ``all-device`` needs environments written as tensors."""
CPU = torch.device("cpu")


@dataclass(frozen=True)
class Placement:
    """The device of each phase of the training pipeline (TorchRL names them alike).

    ``rollout_device``: where the actor's forward pass runs while stepping the environments.
    ``storage_device``: where the rollout or replay data lives.
    ``update_device``: where the learner computes losses and gradients.
    ``env_device``: where the environments are stepped. ``batched_envs``: they are batched
    tensors (:mod:`hetero_tutorial.rl.envs.batched`), as ``all-device`` has them, even
    where ``env_device`` is the CPU; False: Gymnasium's, one Python object each, on the CPU.
    This is the one switch between the two kinds of environments.
    """

    name: str
    rollout_device: torch.device
    storage_device: torch.device
    update_device: torch.device
    env_device: torch.device = CPU
    batched_envs: bool = False
    accelerator_missing: bool = False
    """True when a preset wanted an accelerator and fell back to the CPU."""

    def __post_init__(self) -> None:
        if self.env_device.type != "cpu" and not self.batched_envs:
            raise DeviceError(
                f"placement {self.name!r} puts the environments on {self.env_device}: only "
                "batched tensor environments run there. Pass batched_envs=True (PPO on "
                "CartPole-v1 or Pendulum-v1), or keep env_device on the CPU for Gymnasium's "
                "environments."
            )

    @property
    def devices(self) -> tuple[torch.device, ...]:
        """The distinct devices this placement uses."""
        phases = (self.env_device, self.rollout_device, self.storage_device, self.update_device)
        return tuple(dict.fromkeys(phases))

    @property
    def pin_storage(self) -> bool:
        """Whether CPU storage should be page-locked (pinned): only when it feeds an accelerator."""
        return self.storage_device.type == "cpu" and self.update_device.type == "cuda"

    def describe(self) -> str:
        """One line a learner can read, saying where each phase runs."""
        text = (
            f"{self.name}: {'batched ' if self.batched_envs else ''}environments on "
            f"{self.env_device}, rollout on {self.rollout_device}, "
            f"storage on {self.storage_device}"
            f"{' (pinned)' if self.pin_storage else ''}, update on {self.update_device}"
        )
        if self.accelerator_missing:
            text += " (no accelerator here, so the accelerator's phases run on the CPU)"
        return text


def placement(name: str, accelerator_device: str | torch.device | None = None) -> Placement:
    """One of the series' placement presets.

    ``"all-accelerator"``: everything on the accelerator (the article's baseline).
    ``"hybrid"``: rollout and storage on the CPU, update on the accelerator.
    ``"all-cpu"``: everything on the CPU.
    ``"all-device"``: the environments too on the accelerator (batched tensor
    environments, :mod:`hetero_tutorial.rl.envs.batched`): nothing crosses to the host
    while stepping. Only for algorithms that take such environments (PPO).

    ``accelerator_device`` names the accelerator to use; by default the one
    :func:`accelerator` finds. On a machine without one the presets still run,
    on the CPU, and the placement says so (``accelerator_missing``). Naming an
    accelerator that is not here is an error.
    """
    if name not in PLACEMENT_NAMES:
        raise DeviceError(
            f"unknown placement {name!r}; choose one of {', '.join(PLACEMENT_NAMES)}."
        )
    cpu = CPU
    if accelerator_device is not None:
        fast, missing = resolve_device(accelerator_device), False
    else:
        found = accelerator()
        fast, missing = (found, False) if found is not None else (cpu, True)
    missing = missing and name != "all-cpu"
    if name == "all-accelerator":
        return Placement(name, fast, fast, fast, accelerator_missing=missing)
    if name == "hybrid":
        return Placement(name, cpu, cpu, fast, accelerator_missing=missing)
    if name == "all-device":
        return Placement(name, fast, fast, fast, fast, True, accelerator_missing=missing)
    return Placement(name, cpu, cpu, cpu)


def as_placement(value: Placement | str) -> Placement:
    """``value`` itself, or the preset it names: ``"hybrid"`` is ``placement("hybrid")``.

    The training entry points (``train``, ``train_side_by_side``, ``train_overlapped``)
    take either and call this once, so ``train(config, "hybrid")`` works as a learner
    would expect; anything else is a clear error, not an AttributeError later. What they
    build from it (trainers, learners) takes the :class:`Placement` itself.
    """
    if isinstance(value, str):
        return placement(value)
    require_placement(value, "a training entry point")
    return value


def require_placement(value: object, who: str) -> None:
    """Raise a clear error unless ``value`` is a :class:`Placement` (``who`` takes one)."""
    if not isinstance(value, Placement):
        raise DeviceError(
            f'{who} takes a Placement, got {value!r}; e.g. placement("hybrid") (the '
            f"presets: {', '.join(PLACEMENT_NAMES)}; train() also takes a preset's name)"
        )


def require_data_devices(placement: Placement) -> None:
    """Raise a clear error if a phase of ``placement`` is on ``meta``, a device without data.

    ``meta`` stands in for an accelerator where copies are *counted*
    (:mod:`hetero_tutorial.studies.copies`); training on it would fail deep inside PyTorch.
    """
    if any(device.type == "meta" for device in placement.devices):
        raise DeviceError(
            f"placement {placement.name!r} puts a phase on the meta device, which holds no data: "
            "it only counts copies (hetero_tutorial.studies.copies), nothing can be trained on "
            f"it. Train on a real device: {', '.join(available_devices())}."
        )


def gym_envs_only(placement: Placement, algorithm: str) -> None:
    """Raise a clear error if ``placement`` has batched environments: ``algorithm`` steps
    Gymnasium's environments on the CPU and cannot take them (``all-device`` is PPO's)."""
    if placement.batched_envs:
        raise DeviceError(
            f"{algorithm} steps Gymnasium's environments on the CPU, so it cannot take placement "
            f"{placement.name!r}, whose environments are batched tensors (PPO takes it). Choose "
            f"one of {', '.join(ENV_ON_CPU_NAMES)}."
        )
