"""Host<->device copies: counting the real ones, and what each way of copying costs.

:class:`CopyCounter` is a PyTorch dispatch mode: inside ``with CopyCounter():``
every tensor operation PyTorch runs passes through it, and it records each
copy whose source and destination devices differ (``.to()``, ``.cpu()``,
``copy_()``, ``.item()``), with its bytes, direction and the phase of the loop
that made it. Because it sees the operations themselves, it cannot drift from
the code the way hand-written counters can. It costs a Python call per tensor
operation, so training loops count copies on one instrumented iteration and
time the others without it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from hetero_tutorial.core.devices import with_index
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.timing import compare

HOST_TO_DEVICE = "host_to_device"
DEVICE_TO_HOST = "device_to_host"
DEVICE_TO_DEVICE = "device_to_device"

_aten = torch.ops.aten
_SCALAR_READS = {_aten._local_scalar_dense.default, _aten.item.default}
"""``.item()``: under ``torch.inference_mode`` the dispatcher shows ``item`` itself."""


def _copy_of(func: Any, args: tuple, kwargs: dict) -> tuple[torch.Tensor, torch.device, int, bool]:
    """``(source tensor, destination device, bytes, non_blocking)`` when ``func`` copies a
    tensor to a device (perhaps its own), else None.

    Outside ``torch.inference_mode`` a ``.to(...)`` reaches a dispatch mode as
    ``aten._to_copy``; inside it (where the rollout acts) as one of ``aten.to``'s
    overloads, whose own ``_to_copy`` the mode never sees: both are read here.
    """
    if func in (_aten._to_copy.default, _aten.to.dtype_layout):
        source, target = args[0], kwargs.get("device")
        non_blocking = kwargs.get("non_blocking", False)
    elif func is _aten.to.device:  # (self, device, dtype, non_blocking=False, ...)
        source, target = args[0], args[1]
        non_blocking = args[3] if len(args) > 3 else kwargs.get("non_blocking", False)
    elif func is _aten.to.other:  # (self, other, non_blocking=False, ...)
        source, target = args[0], args[1].device
        non_blocking = args[2] if len(args) > 2 else kwargs.get("non_blocking", False)
    elif func in _SCALAR_READS:
        return args[0], torch.device("cpu"), args[0].element_size(), False
    elif func is _aten.copy_.default:  # (destination, source, non_blocking=False)
        destination, source = args[0], args[1]
        non_blocking = args[2] if len(args) > 2 else kwargs.get("non_blocking", False)
        nbytes = destination.element_size() * destination.numel()
        return source, destination.device, nbytes, bool(non_blocking)
    else:
        return None
    if target is None:  # a dtype or layout change on the same device
        return None
    nbytes = source.element_size() * source.numel()
    return source, with_index(target), nbytes, bool(non_blocking)  # "cuda" is cuda:0's name


@dataclass
class CopyStats:
    """How many copies, and how many bytes they moved."""

    count: int = 0
    bytes: int = 0
    non_blocking: int = 0
    """How many of the copies were asked to be asynchronous (``non_blocking=True``)."""

    def add(self, nbytes: int, non_blocking: bool) -> None:
        self.count += 1
        self.bytes += nbytes
        self.non_blocking += int(non_blocking)

    def as_dict(self) -> dict[str, int]:
        return {"count": self.count, "bytes": self.bytes, "non_blocking": self.non_blocking}


def _direction(source: torch.device, destination: torch.device) -> str | None:
    if source == destination:
        return None
    if source.type == "cpu":
        return HOST_TO_DEVICE
    if destination.type == "cpu":
        return DEVICE_TO_HOST
    return DEVICE_TO_DEVICE


class CopyCounter(TorchDispatchMode):
    """Counts every copy between devices made inside the ``with`` block, per phase and direction.

    >>> with CopyCounter() as counter:
    ...     _ = torch.ones(4).to("meta")  # the meta device stands in for an accelerator
    >>> counter.total().count, counter.total().bytes
    (1, 16)
    """

    def __init__(self) -> None:
        super().__init__()
        self.stats: dict[tuple[str, str], CopyStats] = defaultdict(CopyStats)
        """Copies keyed by (phase, direction)."""
        self.current_phase = "other"

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Attribute copies made inside the block to phase ``name``."""
        previous, self.current_phase = self.current_phase, name
        try:
            yield
        finally:
            self.current_phase = previous

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        copy = _copy_of(func, args, kwargs)
        if copy is not None:
            self.record(*copy)
        return func(*args, **kwargs)

    def record(
        self, source: torch.Tensor, destination: torch.device, nbytes: int, non_blocking: bool
    ) -> None:
        """Count one copy of ``source`` to ``destination`` (nothing if it stays on its device)."""
        direction = _direction(source.device, destination)
        if direction is not None:
            self.stats[(self.current_phase, direction)].add(nbytes, non_blocking)

    def total(self, phase: str | None = None, direction: str | None = None) -> CopyStats:
        """All copies, or only those of one phase and/or direction."""
        total = CopyStats()
        for (copy_phase, copy_direction), stats in self.stats.items():
            if phase in (None, copy_phase) and direction in (None, copy_direction):
                total.count += stats.count
                total.bytes += stats.bytes
                total.non_blocking += stats.non_blocking
        return total

    def by_phase(self) -> dict[str, dict[str, int]]:
        """``{phase: {"count", "bytes", "non_blocking"}}`` summed over directions."""
        phases = dict.fromkeys(phase for phase, _ in self.stats)
        return {phase: self.total(phase=phase).as_dict() for phase in phases}


META = torch.device("meta")
"""PyTorch's device without data: it stands in for an accelerator where there is none."""


class MetaCopyCounter(CopyCounter):
    """A :class:`CopyCounter` that lets code written for an accelerator run on the ``meta`` device.

    The meta device holds shapes and dtypes but no data, so every operation on it costs
    next to nothing, and a copy *out* of it cannot run. This counter records such a copy
    like any other and answers it with zeros of the right shape and dtype on the
    destination (``.cpu()``, ``.item()``, ``copy_`` into a host tensor). A PPO iteration,
    or a DDPG step, with its accelerator phases placed on ``meta`` then runs end to end on
    a machine without an accelerator: the actions it sends to the environments are zeros,
    and every cross-device copy the code makes is counted, by phase. Counts that depend on
    what the environments do (bootstrapping an episode cut off by a time limit) follow
    the zero actions; the rest are the code's own, as on an accelerator. Copies
    that leave ``meta`` return zeros, so weights synced back to a CPU actor are zeros too:
    count with it, never learn with it.
    """

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        copy = _copy_of(func, args, kwargs)
        if copy is None:
            return func(*args, **kwargs)
        source, destination, nbytes, non_blocking = copy
        self.record(source, destination, nbytes, non_blocking)
        if source.device.type != "meta" or destination.type == "meta":
            return func(*args, **kwargs)
        if func in _SCALAR_READS:
            return torch.zeros((), dtype=source.dtype).item()
        if func is _aten.copy_.default:
            return args[0].zero_()
        dtype = {_aten.to.device: lambda: args[2], _aten.to.other: lambda: args[1].dtype}.get(
            func, lambda: kwargs.get("dtype")
        )()
        return torch.zeros(source.shape, dtype=dtype or source.dtype, device=destination)


COPY_MODES = ("pageable", "pinned", "pinned non_blocking", "pin on the fly")
"""How a host tensor can be copied to a CUDA GPU (see :func:`copy_costs`)."""

PAGEABLE_ONLY_NOTE = (
    "{device}: pageable copies only. Pinned (page-locked) memory and non_blocking copies "
    "are CUDA semantics; on MPS (unified memory) and XPU PyTorch gives them no such meaning, "
    "so those rows would time something else under CUDA's names."
)


def _copy_candidates(pageable: torch.Tensor, device: torch.device) -> dict[str, Any]:
    candidates = {"pageable": lambda: pageable.to(device)}
    if device.type == "cuda":
        pinned = pageable.pin_memory()
        candidates["pinned"] = lambda: pinned.to(device)
        candidates["pinned non_blocking"] = lambda: pinned.to(device, non_blocking=True)
        candidates["pin on the fly"] = lambda: pageable.pin_memory().to(device, non_blocking=True)
    return candidates


def copy_costs(
    sizes_bytes: Sequence[int], device: torch.device | str, repeats: int = 10
) -> list[dict[str, Any]]:
    """Seconds and GB/s of one host-to-device copy of each size, in each mode of :data:`COPY_MODES`.

    ``pageable``: ``tensor.to(device)`` from ordinary memory (the driver stages it
    through a pinned buffer of its own). ``pinned``: from memory pinned once in
    advance. ``pinned non_blocking``: the same, queued asynchronously (the timer
    still waits for it, so this shows the cost of the copy, not the overlap it
    allows). ``pin on the fly``: ``tensor.pin_memory().to(device, non_blocking=True)``,
    as the article writes it: every call first copies the tensor into a pinned block,
    an extra host copy that can cost more than it saves. The block comes from PyTorch's
    caching host allocator, which hands the same one out again once the last copy from
    it has finished, so pinning allocates new page-locked memory only at the first
    calls, not every time: the row's ``new_pinned_blocks`` counts how many of its
    ``calls`` (warm-up included) did (None where this PyTorch keeps no such count).

    The last three are CUDA's: on MPS and XPU only ``pageable`` is timed, and every
    row carries a ``note`` that says so (None on CUDA).
    """
    device = torch.device(device)
    if device.type == "cpu":
        raise UsageError(
            "copy_costs measures copies from the host to an accelerator; this machine has none "
            "(see data/reference/ for recorded figures)."
        )
    note = None if device.type == "cuda" else PAGEABLE_ONLY_NOTE.format(device=device.type)
    rows = []
    for size in sizes_bytes:
        pageable = torch.ones(max(1, size // 4))
        candidates = _copy_candidates(pageable, device)
        blocks_before = _pinned_blocks(device)
        timings = compare(candidates, device=device, warmup=COPY_WARMUP, repeats=repeats)
        blocks_after = _pinned_blocks(device)
        for mode, timing in timings.items():
            on_the_fly = mode == "pin on the fly" and blocks_before is not None
            rows.append(
                {
                    "size_bytes": pageable.numel() * 4,
                    "mode": mode,
                    "seconds": timing.median,
                    "iqr_s": timing.iqr,
                    "gb_per_s": pageable.numel() * 4 / timing.median / 1e9,
                    # only pinning on the fly allocates while timed: the others pinned before
                    "new_pinned_blocks": blocks_after - blocks_before if on_the_fly else None,
                    "calls": COPY_WARMUP + repeats,
                    "note": note,
                }
            )
    return rows


COPY_WARMUP = 3
"""Untimed calls of each copy mode before the timed ones."""


def _pinned_blocks(device: torch.device) -> int | None:
    """How many page-locked blocks PyTorch's caching host allocator has allocated so far
    (None off CUDA, or where this PyTorch does not count them)."""
    if device.type != "cuda" or not hasattr(torch.cuda, "host_memory_stats"):
        return None
    return int(torch.cuda.host_memory_stats().get("num_host_alloc", 0))
