"""Which devices this machine has, where each phase of training runs, and what the machine is.

Three jobs, all about devices:

* discovery: the accelerator (CUDA, Apple MPS or Intel XPU), if any;
* placements: a :class:`Placement` names the device of each phase of the
  training pipeline (rollout, storage, update). The presets are the designs the
  series compares; algorithms take a placement and never pick devices themselves;
* provenance: :func:`fingerprint` describes the hardware and software, so every
  recorded number says where it came from.
"""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import psutil
import torch

from hetero_tutorial.errors import UsageError

ACCELERATOR_TYPES = ("cuda", "mps", "xpu")
"""Accelerator device types we know how to find, in the order we look for them."""

PLACEMENT_NAMES = ("all-accelerator", "hybrid", "all-cpu")
"""The placement presets the series compares (see :func:`placement`)."""


class DeviceError(UsageError):
    """A device that is unknown, or not present on this machine."""


def _type_is_available(device_type: str) -> bool:
    if device_type == "cpu":
        return True
    if device_type == "cuda":
        return torch.cuda.is_available()
    if device_type == "mps":
        return torch.backends.mps.is_available()
    if device_type == "xpu":
        return hasattr(torch, "xpu") and torch.xpu.is_available()
    return False


def _device_count(device_type: str) -> int:
    if not _type_is_available(device_type):
        return 0
    if device_type == "cuda":
        return torch.cuda.device_count()
    if device_type == "xpu":
        return torch.xpu.device_count()
    return 1


def accelerator() -> torch.device | None:
    """The first accelerator found (CUDA, then MPS, then XPU), or None on a CPU-only machine."""
    for device_type in ACCELERATOR_TYPES:
        if _type_is_available(device_type):
            return torch.device(device_type, 0) if device_type != "mps" else torch.device("mps")
    return None


def devices_here() -> list[torch.device]:
    """The devices worth measuring here: the CPU, then the accelerator if there is one."""
    found = accelerator()
    return [torch.device("cpu")] + ([found] if found is not None else [])


def available_devices() -> list[str]:
    """Every device string that :func:`resolve_device` accepts on this machine, CPU first."""
    names = ["cpu"]
    for device_type in ACCELERATOR_TYPES:
        count = _device_count(device_type)
        if device_type == "mps" and count:
            names.append("mps")
        else:
            names.extend(f"{device_type}:{index}" for index in range(count))
    return names


def _available() -> str:
    """The device strings :func:`resolve_device` accepts here, for error messages."""
    return ", ".join(available_devices())


def resolve_device(spec: str | torch.device) -> torch.device:
    """Turn a device string into a device that exists here, or explain what does.

    Accepts ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``, ``"xpu"``, and
    ``"accelerator"`` (the accelerator :func:`accelerator` finds).
    """
    if isinstance(spec, str) and spec.strip().lower() == "accelerator":
        found = accelerator()
        if found is None:
            raise DeviceError(
                "asked for 'accelerator' but this machine has none (no CUDA, MPS or XPU device "
                f"visible to PyTorch {torch.__version__}). Available: {_available()}. "
                "Use 'cpu', or the 'all-cpu' placement."
            )
        return found
    try:
        device = torch.device(spec.strip().lower() if isinstance(spec, str) else spec)
    except (RuntimeError, TypeError) as error:
        raise DeviceError(
            f"unknown device {spec!r}. Available on this machine: {_available()} "
            "(or 'accelerator' for the first accelerator found)."
        ) from error
    if device.type != "cpu" and device.type not in ACCELERATOR_TYPES:
        raise DeviceError(
            f"device type {device.type!r} is not one the tutorial uses. Available: {_available()}."
        )
    count = _device_count(device.type)
    index = device.index or 0
    if index >= count:
        present = "not present" if count == 0 else f"only {count} {device.type} device(s) here"
        raise DeviceError(
            f"asked for {str(device)!r}, which is {present} on this machine. "
            f"Available: {_available()}."
        )
    return with_index(device)


def with_index(device: torch.device | str) -> torch.device:
    """``device`` with CUDA's index filled in: ``"cuda"`` and ``"cuda:0"`` name one device,
    and must compare equal wherever devices are grouped or looked up."""
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


def synchronize(device: torch.device | str | None) -> None:
    """Wait until all work queued on ``device`` has finished (a no-op for the CPU and for None).

    Accelerators run kernels asynchronously: without this, a timer stops when the
    work is *queued*, not when it is *done*.
    """
    if device is None:
        return
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()
    elif device.type == "xpu":
        torch.xpu.synchronize(device)


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


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def accelerator_info(device: torch.device | None = None) -> dict[str, Any] | None:
    """Name, memory (bytes) and type of the accelerator, or None when there is none."""
    device = device if device is not None else accelerator()
    if device is None:
        return None
    info: dict[str, Any] = {"type": device.type, "device": str(device)}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info.update(
            name=props.name,
            memory_bytes=props.total_memory,
            capability=f"{props.major}.{props.minor}",
            cuda_version=torch.version.cuda,
        )
    elif device.type == "xpu":
        props = torch.xpu.get_device_properties(device)
        info.update(name=props.name, memory_bytes=props.total_memory)
    elif device.type == "mps":
        info.update(name=f"Apple {platform.machine()} GPU (MPS)", memory_bytes=None)
    return info


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def fingerprint() -> dict[str, Any]:
    """Hardware and software facts that a measured number depends on."""
    return {
        "cpu_model": _cpu_model(),
        "cpu_logical_cores": psutil.cpu_count(logical=True),
        "cpu_physical_cores": psutil.cpu_count(logical=False),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_bytes": psutil.virtual_memory().total,
        "torch_threads": torch.get_num_threads(),
        "accelerator": accelerator_info(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "versions": {
            name: _version(name) for name in ("torch", "gymnasium", "numpy", "hetero-tutorial")
        },
    }


def describe_machine(facts: dict[str, Any] | None = None) -> str:
    """A few lines a learner can read: CPU, memory, accelerator, library versions."""
    facts = facts or fingerprint()
    accel = facts["accelerator"]
    if accel is None:
        accel_line = "none (no CUDA, MPS or XPU device visible to PyTorch)"
    else:
        memory = accel.get("memory_bytes")
        accel_line = f"{accel.get('name', accel['type'])} ({accel['device']}"
        accel_line += f", {memory / 2**30:.0f} GiB)" if memory else ")"
    versions = facts["versions"]
    return "\n".join(
        [
            f"CPU:          {facts['cpu_model']}, {facts['usable_cores']} usable cores",
            f"Memory:       {facts['memory_bytes'] / 2**30:.0f} GiB",
            f"Accelerator:  {accel_line}",
            f"Software:     Python {facts['python']}, PyTorch {versions['torch']}, "
            f"Gymnasium {versions['gymnasium']}, {facts['torch_threads']} PyTorch threads",
        ]
    )
