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

:class:`Spread` carries a measured ratio with the range its repeats span, so that a
verdict can tell an effect from this machine's run-to-run noise.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from hetero_tutorial.core.devices import synchronize, with_index
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import withheld

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


def quartiles(timing: dict[str, float]) -> tuple[float, float]:
    """A timing's middle half: its quartiles where recorded, else its median +- IQR / 2."""
    if "q1_s" in timing and "q3_s" in timing:
        return timing["q1_s"], timing["q3_s"]
    return timing["median_s"] - timing["iqr_s"] / 2, timing["median_s"] + timing["iqr_s"] / 2


TOUCHING = 0.005
"""How close, relative to it, a range's bound may come to "no effect" and still reach it: half
of the last digit a ratio is printed with (1.00x), so a bound of 1.0000056 is no side of 1."""

MIN_REPEATS = 5
"""Repeats (paired rounds, iterations, seeds) a range needs before it names an effect. An
effect is named only where every repeat lies on one side of the threshold; with no effect at
all, noise alone does that with chance 2 x 0.5^n for n repeats: one in two for 2, one in four
for 3, one in sixteen for 5. Fewer repeats give *no verdict*, whatever their range."""


@dataclass(frozen=True)
class Spread:
    """A measured ratio and the range of its repeats: how far noise alone moved it.

    ``low`` and ``high`` are None when there was one repeat, so no spread was measured.
    ``count``: how many repeats the range spans, where it is the range of repeats (None
    where it comes from quartiles or IQRs, which summarise many timings).
    """

    value: float
    low: float | None = None
    high: float | None = None
    how: str = "one repeat"
    """how the range was taken: ``per seed`` (min to max of the per-seed ratios),
    ``from the two medians' IQRs``"""
    count: int | None = None

    @classmethod
    def of_ratios(cls, ratios: Sequence[float], value: float | None = None, per: str = "round"):
        """The spread of paired ratios (one per interleaved repeat): their whole range, min to
        max, however many there are. ``value``: the headline figure (default: the median ratio).

        The whole range, not a quartile range, because a verdict names an effect only when
        every repeat agrees on its side of the threshold: a conservative reading of few
        repeats, and the one the verdicts' prose promises. One ratio measures no spread.
        """
        ratios = sorted(r for r in ratios if math.isfinite(r))
        if value is None:
            value = float(np.median(ratios)) if ratios else math.nan
        if len(ratios) < 2:
            return cls(value, how=f"one {per}" if ratios else f"no per-{per} figures recorded")
        return cls(value, ratios[0], ratios[-1], f"per {per}", len(ratios))

    @classmethod
    def of_pairs(
        cls, tops: Sequence[float], bottoms: Sequence[float], value: float, per: str = "round"
    ) -> Spread:
        """:meth:`of_ratios` of repeats that ran side by side, ``tops[i] / bottoms[i]``.

        The two must hold as many repeats: unequal counts mean they did not run in pairs,
        and zipping them would pair the wrong repeats (or drop some) without a word."""
        if len(tops) != len(bottoms):
            raise UsageError(
                f"paired repeats need as many on each side, got {len(tops)} and {len(bottoms)}: "
                "measure the two side by side (interleaved) in one run"
            )
        return cls.of_ratios([t / b for t, b in zip(tops, bottoms, strict=True)], value, per)

    @classmethod
    def of_medians(cls, top: dict[str, float], bottom: dict[str, float]) -> Spread:
        """``top`` / ``bottom`` (each ``{"median_s", "iqr_s"}``), spread by their IQRs: from
        the low quartile over the high one to the high over the low."""
        value = top["median_s"] / bottom["median_s"]
        if top.get("iqr_s") is None or bottom.get("iqr_s") is None:
            return cls(value)
        floor = max(bottom["median_s"] - bottom["iqr_s"] / 2, 1e-12)
        low = (top["median_s"] - top["iqr_s"] / 2) / (bottom["median_s"] + bottom["iqr_s"] / 2)
        high = (top["median_s"] + top["iqr_s"] / 2) / floor
        return cls(value, low, high, "from the two medians' IQRs")

    @classmethod
    def of_quotient(cls, value: float, parts: Iterable[tuple[float, float | None]]) -> Spread:
        """``value``, a product and quotient of medians, spread by their IQRs: to first order,
        each part's IQR relative to its median adds up in ``value``. ``parts``: (median, IQR)."""
        relative = 0.0
        for median, iqr in parts:
            if iqr is None:
                return cls(value)
            relative += iqr / median
        return cls.about(value, value * relative, "from the timings' IQRs")

    @classmethod
    def about(cls, value: float, width: float | None, how: str = "") -> Spread:
        """``value`` +- ``width`` / 2 (``width`` None: not measured)."""
        if width is None:
            return cls(value)
        return cls(value, value - width / 2, value + width / 2, how)

    @classmethod
    def of_timings(cls, first: dict[str, float], second: dict[str, float]) -> Spread:
        """Two timings of one piece (median and IQR in seconds, quartiles where recorded) as
        one error bar: from the lower of their middle halves' bottoms to the higher of their
        tops. Where the medians drifted apart by more than their IQRs it spans both; where
        they agree it is about one IQR wide (never below zero). Its value is the mean of the
        two medians."""
        low = max(0.0, min(quartiles(t)[0] for t in (first, second)))
        high = max(quartiles(t)[1] for t in (first, second))
        value = (first["median_s"] + second["median_s"]) / 2
        return cls(value, low, high, "two timings, middle halves")

    @classmethod
    def across_runs(cls, first: dict[str, float], second: dict[str, float]) -> Spread:
        """Two timings of one piece as another run could find it: :meth:`of_timings`' range,
        widened on each side by the drift between the two medians (a third timing could
        drift as far again). For a figure set against another run's, the article's or a
        rule's: notebook 00 shows runs drift past one timing's IQR."""
        both, drift = cls.of_timings(first, second), cls.drift(first, second)
        return cls(
            both.value,
            both.low / drift,
            both.high * drift,
            "two timings' middle halves, widened by their drift",
        )

    @staticmethod
    def drift(first: dict[str, float], second: dict[str, float]) -> float:
        """How far apart two timings' medians lie, as a factor of at least 1."""
        medians = sorted((first["median_s"], second["median_s"]))
        return medians[1] / medians[0]

    @property
    def measured(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def too_few(self) -> bool:
        """A range of fewer than :data:`MIN_REPEATS` repeats: measured, but no verdict."""
        return self.measured and self.count is not None and self.count < MIN_REPEATS

    @property
    def decides(self) -> bool:
        """Whether this spread may name an effect: measured, from enough repeats."""
        return self.measured and not self.too_few

    def too_few_words(self) -> str:
        """``3 repeats, and a verdict needs 5``: why a measured range gives no verdict."""
        return f"{self.count} repeats, and a verdict needs {MIN_REPEATS}"

    def side(self, threshold: float, above: bool = True) -> bool | None:
        """Whether the whole spread lies at or above ``threshold`` (below it, for ``above``
        False): True if so, False if it lies wholly on the other side, None if it straddles
        the threshold or no spread was measured, or the guard withholds the verdict (the
        study whose figures are being judged ran busy:
        :func:`~hetero_tutorial.core.machine_load.withheld`). Fewer than :data:`MIN_REPEATS`
        repeats decide nothing either."""
        if not self.decides or withheld():
            return None
        low, high = sorted((self.low, self.high))
        if (low >= threshold) if above else (high < threshold):
            return True
        if (high < threshold) if above else (low >= threshold):
            return False
        return None

    def beyond(self, no_effect: float = 1.0) -> bool | None:
        """Whether the whole spread lies strictly above ``no_effect`` (True) or strictly below
        it (False); None if it touches or straddles it, or no spread was measured.

        For naming an effect against "no effect" (1.0 for a ratio): a spread that reaches
        ``no_effect`` itself, as identical repeats (ratios of exactly 1) do, names none,
        where :meth:`side`, for thresholds a claim sets, counts reaching it as lying at it.
        A busy machine's study names none either, nor do fewer than :data:`MIN_REPEATS`.
        A bound within half a percent of ``no_effect`` (a ratio that prints as 1.00x) reaches
        it: printed to two decimals, it could not be told apart from no effect.
        """
        if not self.decides or withheld():
            return None
        low, high = sorted((self.low, self.high))
        touch = abs(no_effect) * TOUCHING
        return True if low > no_effect + touch else False if high < no_effect - touch else None

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2 if self.measured else math.nan

    def noise(self, unit: str = "{:.2f}x") -> str:
        """What a verdict says when it cannot tell an effect from this spread (or was not
        allowed to: the study whose figures are being judged ran busy)."""
        busy = withheld()
        if busy:
            return f"; {busy.line()}"
        if not self.measured:
            return (
                f"; no spread measured ({self.how}), so no telling an effect from noise: no verdict"
            )
        if self.too_few:
            return f"; {self.too_few_words()}: no verdict"
        return f" (within the measured noise, +-{unit.format(self.half_width)})"

    def __str__(self) -> str:
        if not self.measured:
            return f"{self.value:.2f}x ({self.how})"
        return f"{self.value:.2f}x ({self.how} {self.low:.2f}-{self.high:.2f}x)"
