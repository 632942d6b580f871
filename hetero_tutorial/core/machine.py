"""What this machine is: hardware and software facts that every recorded number depends on.

:func:`fingerprint` goes into the provenance of every record; :func:`describe_machine`
is the few lines a notebook prints about the machine it runs on.
"""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from typing import Any

import psutil
import torch

from hetero_tutorial.core.devices import accelerator, tf32_flags


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    """CPU cores this process may run on: its affinity mask where the OS has one (Linux),
    else every logical core. A container or ``taskset`` can give fewer than the machine has."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


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
        "usable_cores": usable_cores(),
        "memory_bytes": psutil.virtual_memory().total,
        "torch_threads": torch.get_num_threads(),
        "accelerator": accelerator_info(),
        "float32": tf32_flags(),  # TF32 off: the accelerator computes in FP32, as the CPU does
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
