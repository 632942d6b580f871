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

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.timing import compare

HOST_TO_DEVICE = "host_to_device"
DEVICE_TO_HOST = "device_to_host"
DEVICE_TO_DEVICE = "device_to_device"

_aten = torch.ops.aten
_SOURCE_IS_FIRST_ARG = {_aten._to_copy.default, _aten._local_scalar_dense.default}
_DESTINATION_IS_FIRST_ARG = {_aten.copy_.default}


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
        result = func(*args, **kwargs)
        if func in _SOURCE_IS_FIRST_ARG:
            source = args[0]
            destination = result if isinstance(result, torch.Tensor) else torch.empty(0)
            nbytes = source.element_size() * source.numel()
        elif func in _DESTINATION_IS_FIRST_ARG:
            destination, source = args[0], args[1]
            nbytes = destination.element_size() * destination.numel()
        else:
            return result
        direction = _direction(source.device, destination.device)
        if direction is not None:
            non_blocking = bool(kwargs.get("non_blocking", args[2] if len(args) > 2 else False))
            self.stats[(self.current_phase, direction)].add(nbytes, non_blocking)
        return result

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


COPY_MODES = ("pageable", "pinned", "pinned non_blocking", "pin on the fly")
"""How a host tensor can be copied to a CUDA GPU (see :func:`copy_costs`)."""

PAGEABLE_ONLY_NOTE = (
    "{device}: pageable copies only. Pinned (page-locked) memory and non_blocking copies "
    "are CUDA semantics; on MPS (unified memory) and XPU PyTorch gives them no such meaning, "
    "so those rows would time something else under CUDA's names."
)


def copy_modes(device: torch.device | str) -> tuple[str, ...]:
    """The modes of :data:`COPY_MODES` that mean what they say on ``device``: all on CUDA,
    ``pageable`` alone elsewhere (MPS, XPU)."""
    return COPY_MODES if torch.device(device).type == "cuda" else COPY_MODES[:1]


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
    """Seconds and GB/s of one host-to-device copy of each size, in each of :func:`copy_modes`.

    ``pageable``: ``tensor.to(device)`` from ordinary memory (the driver stages it
    through a pinned buffer of its own). ``pinned``: from memory pinned once in
    advance. ``pinned non_blocking``: the same, queued asynchronously (the timer
    still waits for it, so this shows the cost of the copy, not the overlap it
    allows). ``pin on the fly``: ``tensor.pin_memory().to(device, non_blocking=True)``,
    as the article writes it: pinning allocates and fills a new pinned buffer
    every time, an extra host copy that can cost more than it saves.

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
        timings = compare(_copy_candidates(pageable, device), device=device, repeats=repeats)
        for mode, timing in timings.items():
            rows.append(
                {
                    "size_bytes": pageable.numel() * 4,
                    "mode": mode,
                    "seconds": timing.median,
                    "iqr_s": timing.iqr,
                    "gb_per_s": pageable.numel() * 4 / timing.median / 1e9,
                    "note": note,
                }
            )
    return rows
