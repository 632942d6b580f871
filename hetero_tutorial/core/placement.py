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
    """The device of each phase of the training pipeline.

    ``rollout``: where the actor's forward pass runs while stepping the environments.
    ``storage``: where the rollout or replay data lives.
    ``update``: where the learner computes losses and gradients.
    ``env``: where the environments are stepped. ``batched_envs``: they are batched
    tensors (:mod:`hetero_tutorial.rl.device_envs`), as ``all-device`` has them, even
    where ``env`` is the CPU; False: Gymnasium's, one Python object each, on the CPU.
    """

    name: str
    rollout: torch.device
    storage: torch.device
    update: torch.device
    env: torch.device = CPU
    batched_envs: bool = False
    accelerator_missing: bool = False
    """True when a preset wanted an accelerator and fell back to the CPU."""

    def __post_init__(self) -> None:
        if self.env.type != "cpu" and not self.batched_envs:
            raise DeviceError(
                f"placement {self.name!r} puts the environments on {self.env}: only batched "
                "tensor environments run there. Pass batched_envs=True (PPO on CartPole-v1 or "
                "Pendulum-v1), or keep env on the CPU for Gymnasium's environments."
            )

    @property
    def devices(self) -> tuple[torch.device, ...]:
        """The distinct devices this placement uses."""
        return tuple(dict.fromkeys((self.env, self.rollout, self.storage, self.update)))

    @property
    def pin_storage(self) -> bool:
        """Whether CPU storage should be page-locked (pinned): only when it feeds an accelerator."""
        return self.storage.type == "cpu" and self.update.type == "cuda"

    def describe(self) -> str:
        """One line a learner can read, saying where each phase runs."""
        text = (
            f"{self.name}: {'batched ' if self.batched_envs else ''}environments on {self.env}, "
            f"rollout on {self.rollout}, "
            f"storage on {self.storage}"
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
    ``"all-device"``: the environments too on the accelerator (batched tensor
    environments, :mod:`hetero_tutorial.rl.device_envs`): nothing crosses to the host
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


def as_placement(plan: Placement | str) -> Placement:
    """``plan`` itself, or the preset it names: ``"hybrid"`` is ``placement("hybrid")``.

    The training entry points take either, so ``train(config, "hybrid")`` works as a
    learner would expect; anything else is a clear error, not an AttributeError later.
    """
    if isinstance(plan, Placement):
        return plan
    if isinstance(plan, str):
        return placement(plan)
    raise DeviceError(
        f"expected a Placement or a preset's name ({', '.join(PLACEMENT_NAMES)}), got {plan!r}; "
        'e.g. placement("hybrid")'
    )


def require_data_devices(plan: Placement) -> None:
    """Raise a clear error if a phase of ``plan`` is on ``meta``, a device without data.

    ``meta`` stands in for an accelerator where copies are *counted*
    (:mod:`hetero_tutorial.studies.copies`); training on it would fail deep inside PyTorch.
    """
    if any(device.type == "meta" for device in plan.devices):
        raise DeviceError(
            f"placement {plan.name!r} puts a phase on the meta device, which holds no data: "
            "it only counts copies (hetero_tutorial.studies.copies), nothing can be trained on "
            f"it. Train on a real device: {', '.join(available_devices())}."
        )


def gym_envs_only(plan: Placement, algorithm: str) -> None:
    """Raise a clear error if ``plan`` has batched environments: ``algorithm`` steps
    Gymnasium's environments on the CPU and cannot take them (``all-device`` is PPO's)."""
    if plan.batched_envs:
        raise DeviceError(
            f"{algorithm} steps Gymnasium's environments on the CPU, so it cannot take placement "
            f"{plan.name!r}, whose environments are batched tensors (PPO takes it). Choose one "
            f"of {', '.join(ENV_ON_CPU_NAMES)}."
        )
