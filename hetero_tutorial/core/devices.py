"""Which devices this machine has: finding the accelerator, checking device names, waiting for it.

The accelerator is CUDA, Apple MPS or Intel XPU, whichever PyTorch sees first.
:func:`resolve_device` turns what a learner types (``"cuda"``, ``"mps"``,
``"accelerator"``) into a device that exists here, or says what does.

Importing this module also fixes the float32 precision of every measurement
(:func:`use_full_float32`): the CPU computes in full FP32, so the accelerator must too.
"""

from __future__ import annotations

import torch

from hetero_tutorial.core.errors import UsageError

ACCELERATOR_TYPES = ("cuda", "mps", "xpu")
"""Accelerator device types we know how to find, in the order we look for them."""


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
            return torch.device(device_type, 0)  # "mps:0", as MPS tensors report it
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

    Accepts ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``, ``"xpu"``,
    ``"accelerator"`` (the accelerator :func:`accelerator` finds), and ``"meta"``:
    PyTorch's device without data, present everywhere, which stands in for an
    accelerator where copies are counted on a machine without one
    (:class:`~hetero_tutorial.core.transfers.MetaCopyCounter`); nothing can be learned on it.
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
    if device.type == "meta":
        return torch.device("meta")
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
    """``device`` with its index filled in: ``"cuda"`` and ``"cuda:0"`` name one device, and
    must compare equal wherever devices are grouped or looked up.

    ``torch.device("cuda") != torch.device("cuda", 0)``, and a tensor always reports its
    index (``mps:0``, ``cuda:0``), so a plan that named ``"mps"`` would otherwise count its
    device twice and copy between "two" devices that are one. MPS has one device, index 0;
    CUDA and XPU take the current one.
    """
    device = torch.device(device)
    if device.index is not None:
        return device
    if device.type == "cuda":
        return torch.device("cuda", torch.cuda.current_device())
    if device.type == "xpu":
        return torch.device("xpu", torch.xpu.current_device())
    if device.type == "mps":
        return torch.device("mps", 0)
    return device


def same_device(a: torch.device | str, b: torch.device | str) -> bool:
    """Whether ``a`` and ``b`` name one device: ``"mps"`` and ``mps:0`` do, and so do
    ``"cuda"`` and the current CUDA device (see :func:`with_index`)."""
    return with_index(a) == with_index(b)


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


def use_full_float32() -> dict[str, bool]:
    """Turn TensorFloat-32 off for CUDA matrix products and cuDNN convolutions; return the flags.

    TF32 rounds float32 inputs to a 10-bit mantissa on Ampere and later GPUs: faster,
    but no longer the arithmetic the CPU does. PyTorch leaves it off for matrix products
    and *on* for cuDNN convolutions (the CNN of notebook 05), so a CPU/GPU comparison
    would compare two precisions. Called once when this module is imported: every
    measurement (placements, timers, buffers, the benchmarks and the notebooks) imports
    it first, so none can start with another setting, and setting a flag initialises
    no device. :func:`hetero_tutorial.core.machine.fingerprint` records the flags, so a
    learner who turns TF32 back on gets records that say so.
    """
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return tf32_flags()


def tf32_flags() -> dict[str, bool]:
    """Whether CUDA matrix products and cuDNN convolutions may use TF32 now."""
    return {
        "cuda_matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
    }


use_full_float32()
