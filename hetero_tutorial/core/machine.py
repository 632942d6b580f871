"""What this machine is: hardware and software facts that every recorded number depends on.

:func:`fingerprint` goes into the provenance of every record; :func:`describe_machine`
is the few lines a notebook prints about the machine it runs on. :func:`usable_cores` is
what the series means by "all cores" (the process's share, capped by
``HETERO_TUTORIAL_THREADS``), and importing this module caps PyTorch's threads at it
(:func:`cap_torch_threads`), so every notebook and bench that records a number uses it.
"""

from __future__ import annotations

import math
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil
import torch

from hetero_tutorial.core.contention import quota_cpus
from hetero_tutorial.core.devices import accelerator, tf32_flags
from hetero_tutorial.core.errors import UsageError

CPUINFO = Path("/proc/cpuinfo")
"""Where Linux says which CPU this is."""


def _cpuinfo() -> dict[str, str]:
    """The first processor's lines of :data:`CPUINFO`, by name (empty where there is none)."""
    try:
        text = CPUINFO.read_text(encoding="utf-8")
    except OSError:
        return {}
    fields = {}
    for line in text.splitlines():
        if not line.strip():  # the end of the first processor's block
            break
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def _cpu_model(cpuinfo: dict[str, str]) -> str:
    return cpuinfo.get("model name") or platform.processor() or platform.machine()


CPUINFO_FIELDS = {
    "vendor_id": "vendor",
    "cpu family": "family",
    "model": "model",
    "stepping": "stepping",
}
"""The lines of /proc/cpuinfo that say which CPU this is, and the fingerprint's names for them."""


def _cpu_identity(cpuinfo: dict[str, str]) -> dict[str, str]:
    """Which CPU this is, beyond its model name: under a hypervisor every generation of a
    family can show one name ("AMD EPYC"), and a generation's vector units change what a
    matrix product or a generated kernel costs, so two records under one name may come from
    different CPUs. ``vendor``, ``family``, ``model`` and ``stepping`` from /proc/cpuinfo's
    lines (``cpuinfo``) where it has them, and ``vector_isa``: the widest vector
    instructions PyTorch's CPU kernels use here (``torch.backends.cpu.get_cpu_capability``:
    AVX512, AVX2, ...; PyTorch's choice, so its build and ``ATEN_CPU_CAPABILITY`` count too,
    as they do for the kernels' speed)."""
    identity = {name: cpuinfo[key] for key, name in CPUINFO_FIELDS.items() if key in cpuinfo}
    return identity | {"vector_isa": torch.backends.cpu.get_cpu_capability()}


PLAIN_ISA = ("DEFAULT", "NO AVX")
"""PyTorch's names for kernels without wide vectors (an ARM CPU's, or x86 without AVX), which
say nothing about the CPU in a label."""


def cpu_details(facts: dict[str, Any]) -> str:
    """What tells the fingerprint's CPU from others of its name: ``family 25, model 17,
    AVX512``, or as much of it as ``facts`` has ("" for a record from before it was kept)."""
    identity = facts.get("cpu_identity") or {}
    parts = [f"{name} {identity[name]}" for name in ("family", "model") if name in identity]
    if identity.get("vector_isa") not in (None, *PLAIN_ISA):
        parts.append(identity["vector_isa"])
    return ", ".join(parts)


def cpu_label(facts: dict[str, Any]) -> str:
    """The CPU as a learner reads it: ``AMD EPYC (family 25, model 17, AVX512)``, the model
    name alone where the fingerprint has no more."""
    details = cpu_details(facts)
    model = facts.get("cpu_model", "unknown CPU")
    return f"{model} ({details})" if details else model


THREADS_VARIABLE = "HETERO_TUTORIAL_THREADS"
"""Set it to cap "all cores" (e.g. one seat's share of a shared classroom server)."""
CGROUP_QUOTAS = (
    (Path("/sys/fs/cgroup/cpu.max"), None),  # cgroup v2: "QUOTA PERIOD" or "max PERIOD"
    (Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us")),
)
"""Where a container's CPU quota is read: cgroup v2's file, then cgroup v1's pair."""


def _cgroup_cores(quotas: Sequence[tuple[Path, Path | None]]) -> int | None:
    """The cores a cgroup CPU quota allows (rounded up), or None where there is no quota."""
    cpus = quota_cpus(quotas)
    return max(1, math.ceil(cpus)) if cpus is not None else None


def _affinity_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _asked_cores(environ: Mapping[str, str]) -> int | None:
    value = environ.get(THREADS_VARIABLE, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise UsageError(
            f"{THREADS_VARIABLE}={value!r} is not a number of cores; set it to a whole number "
            "of 1 or more (or unset it to use every core this process may run on)"
        )
    return int(value)


def core_limits(
    environ: Mapping[str, str] | None = None,
    affinity: int | None = None,
    quotas: Sequence[tuple[Path, Path | None]] | None = None,
) -> dict[str, int]:
    """Each limit on the cores this process may use, by what sets it: ``affinity`` (the
    CPUs it may run on), ``cgroup quota`` (a container's CPU time, rounded up to cores)
    and ``HETERO_TUTORIAL_THREADS`` (the learner's cap), where each is set. The arguments
    stand in for the process's own (tests): its environment, its affinity's size, the
    cgroup files (default :data:`CGROUP_QUOTAS`)."""
    limits = {"affinity": affinity if affinity is not None else _affinity_cores()}
    quota = _cgroup_cores(CGROUP_QUOTAS if quotas is None else quotas)
    if quota is not None:
        limits["cgroup quota"] = quota
    asked = _asked_cores(os.environ if environ is None else environ)
    if asked is not None:
        limits[THREADS_VARIABLE] = asked
    return limits


def usable_cores(
    environ: Mapping[str, str] | None = None,
    affinity: int | None = None,
    quotas: Sequence[tuple[Path, Path | None]] | None = None,
) -> int:
    """CPU cores this process may use: "all cores" everywhere in the series. The smallest of
    its affinity mask, its cgroup's CPU quota and ``HETERO_TUTORIAL_THREADS``
    (:func:`core_limits`): on a shared server, a container or ``taskset`` can give fewer
    than the machine has, and a class can give each seat its share."""
    return min(core_limits(environ, affinity, quotas).values())


def cores_line(environ: Mapping[str, str] | None = None) -> str:
    """What a notebook prints about the cores it uses, and what caps them."""
    limits = core_limits(environ)
    used = min(limits.values())
    capped = [name for name, count in limits.items() if count == used and name != "affinity"]
    logical = psutil.cpu_count(logical=True) or used
    why = f" (capped by {' and '.join(capped)})" if capped else ""
    return (
        f"Cores used as 'all cores': {used} of this machine's {logical}{why}; "
        f"set {THREADS_VARIABLE} to use fewer"
    )


def cap_torch_threads() -> int:
    """Lower PyTorch's intra-op threads to :func:`usable_cores` where it starts above
    (its default counts the machine's cores, not the process's share); returns the count."""
    cores = usable_cores()
    if torch.get_num_threads() > cores:
        torch.set_num_threads(cores)
    return torch.get_num_threads()


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
    cpuinfo = _cpuinfo()
    return {
        "cpu_model": _cpu_model(cpuinfo),
        "cpu_identity": _cpu_identity(cpuinfo),
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
            f"CPU:          {cpu_label(facts)}, {facts['usable_cores']} usable cores",
            f"Memory:       {facts['memory_bytes'] / 2**30:.0f} GiB",
            f"Accelerator:  {accel_line}",
            f"Software:     Python {facts['python']}, PyTorch {versions['torch']}, "
            f"Gymnasium {versions['gymnasium']}, {facts['torch_threads']} PyTorch threads",
        ]
    )


cap_torch_threads()
