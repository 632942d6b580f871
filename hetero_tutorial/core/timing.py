"""Honest timing: warm-up, synchronisation, repeats, and medians with their spread.

Two tools, used by every measurement in the series:

* :func:`measure` times one callable: it warms up (first calls pay for lazy
  initialisation, allocator growth and caches), synchronises the device before
  starting the clock and before stopping it (accelerators queue work
  asynchronously), repeats, and returns every sample so the median and the
  inter-quartile range can be reported. :func:`compare` does the same for
  several designs, interleaved, because these machines drift in speed over
  minutes and only side-by-side ratios are trustworthy.
* :class:`PhaseTimer` adds up the wall time of the phases of a training loop
  (rollout, transfer, update, ...), synchronising at every phase boundary so
  that the time of queued accelerator work lands in the phase that queued it.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from hetero_tutorial.core.devices import synchronize, with_index
from hetero_tutorial.core.errors import UsageError

SyncHook = Callable[[], None]


@dataclass(frozen=True)
class Timing:
    """Repeated timings of one thing, in seconds per call."""

    samples: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.samples:
            raise UsageError("a Timing needs at least one sample")

    @property
    def median(self) -> float:
        return float(np.median(self.samples))

    @property
    def q1(self) -> float:
        """First quartile (25th percentile, linear interpolation)."""
        return float(np.percentile(self.samples, 25))

    @property
    def q3(self) -> float:
        """Third quartile (75th percentile, linear interpolation)."""
        return float(np.percentile(self.samples, 75))

    @property
    def iqr(self) -> float:
        """Inter-quartile range: the spread of the middle half of the samples."""
        return self.q3 - self.q1

    @property
    def minimum(self) -> float:
        return min(self.samples)

    def __str__(self) -> str:
        return (
            f"{format_seconds(self.median)} (IQR {format_seconds(self.iqr)}, n={len(self.samples)})"
        )


def format_seconds(seconds: float) -> str:
    """A duration with a unit a person can read: ns, us, ms or s."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


@contextmanager
def torch_threads(count: int | None) -> Iterator[None]:
    """Run the block with ``count`` intra-op PyTorch threads (None: leave the setting alone)."""
    if count is None:
        yield
        return
    if count < 1:
        raise UsageError(f"thread count must be at least 1, got {count}")
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _sync_hook(device: torch.device | str | None, sync: SyncHook | None) -> SyncHook:
    if sync is not None:
        return sync
    return lambda: synchronize(device)


def measure(
    fn: Callable[[], object],
    *,
    device: torch.device | str | None = None,
    warmup: int = 3,
    repeats: int = 20,
    inner: int = 1,
    threads: int | None = None,
    sync: SyncHook | None = None,
) -> Timing:
    """Time ``fn`` honestly and return the seconds per call of every repeat.

    Each repeat calls ``fn`` ``inner`` times between two synchronisations of
    ``device`` (use ``inner`` > 1 for calls far shorter than the timer's
    resolution or the cost of a synchronisation). ``sync`` replaces the device
    synchronisation (tests inject a hook to prove where it is called).
    """
    options = {"warmup": warmup, "repeats": repeats, "inner": inner, "threads": threads}
    return compare({"fn": fn}, device=device, sync=sync, **options)["fn"]


def compare(
    candidates: dict[str, Callable[[], object]],
    *,
    device: torch.device | str | None = None,
    warmup: int = 3,
    repeats: int = 20,
    inner: int = 1,
    threads: int | None = None,
    sync: SyncHook | None = None,
) -> dict[str, Timing]:
    """Time several designs side by side, interleaving their repeats (A, B, A, B, ...).

    Interleaving spreads any drift in machine speed evenly over the designs, so
    the ratio of their medians is fair even when absolute times are not. Options
    as in :func:`measure`; every design is warmed up before any is timed.
    """
    if not candidates:
        raise UsageError("compare() needs at least one candidate")
    if repeats < 1 or inner < 1 or warmup < 0:
        raise UsageError(
            f"need repeats >= 1, inner >= 1, warmup >= 0; got {repeats}, {inner}, {warmup}"
        )
    wait = _sync_hook(device, sync)
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    with torch_threads(threads):
        for fn in candidates.values():
            for _ in range(warmup):
                fn()
        for _ in range(repeats):
            for name, fn in candidates.items():
                wait()
                start = time.perf_counter()
                for _ in range(inner):
                    fn()
                wait()
                samples[name].append((time.perf_counter() - start) / inner)
    return {name: Timing(tuple(values)) for name, values in samples.items()}


class PhaseTimer:
    """Accumulates wall time per phase of a loop, synchronising at every phase boundary.

    >>> timer = PhaseTimer(devices=[torch.device("cpu")])
    >>> with timer.phase("rollout"):
    ...     pass
    >>> sorted(timer.seconds)
    ['rollout']
    """

    def __init__(
        self,
        devices: Iterable[torch.device | str] = (),
        sync: SyncHook | None = None,
    ) -> None:
        # "mps" and "mps:0" (or "cuda" and "cuda:0") are one device, synchronised once
        self._devices = tuple(dict.fromkeys(with_index(d) for d in devices))
        self._sync = sync
        self.seconds: dict[str, float] = defaultdict(float)
        """Total seconds spent in each phase."""
        self.calls: dict[str, int] = defaultdict(int)
        """How many times each phase was entered."""

    def synchronize(self) -> None:
        if self._sync is not None:
            self._sync()
            return
        for device in self._devices:
            synchronize(device)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        self.synchronize()
        start = time.perf_counter()
        try:
            yield
        finally:
            self.synchronize()
            self.seconds[name] += time.perf_counter() - start
            self.calls[name] += 1

    @property
    def total(self) -> float:
        return sum(self.seconds.values())

    def shares(self) -> dict[str, float]:
        """Each phase's fraction of the total timed seconds."""
        total = self.total
        return {name: (s / total if total else 0.0) for name, s in self.seconds.items()}
