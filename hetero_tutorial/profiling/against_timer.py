"""A sampler's share of a phase against its own run's phase timer: do the two agree?

py-spy samples stacks; the run it samples times its phases too. Where the timer's share lies
outside the sampler's two-standard-error interval, agreement did not hold, and the notebook
says so; :func:`dropped_stacks` asks whether sampling without pauses is what lost the
difference, against a recording that paused the program at each sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hetero_tutorial.core.findings import Outcome
from hetero_tutorial.profiling.pyspy import PySpyProfile
from hetero_tutorial.profiling.stacks import agresti_coull


def timer_shares(seconds: dict[str, float]) -> dict[str, float]:
    """Each phase's share of a phase timer's seconds."""
    total = sum(seconds.values())
    return {phase: s / total for phase, s in seconds.items()} if total else {}


def rollout_interval(profile: PySpyProfile) -> tuple[float, float, float]:
    """The rollout's share of a py-spy profile's training samples, and its two-standard-error
    interval (Agresti-Coull, so that few samples still show their uncertainty)."""
    count, total = profile.shares.samples.get("rollout", 0), profile.shares.total
    share = count / total if total else 0.0
    spread = 2 * agresti_coull(count, total)
    return share, max(share - spread, 0.0), min(share + spread, 1.0)


def points(share_gap: float) -> str:
    """A gap between two shares in percentage points: ``10.3 points``."""
    return f"{abs(share_gap) * 100:.1f} points"


@dataclass(frozen=True)
class Sampled:
    """One py-spy recording's rollout share (of its ``samples`` training samples), its
    two-standard-error interval ``low`` to ``high``, and the share its own run's phase timer
    gave the rollout (``timer``; None where the timer was not read back)."""

    share: float
    low: float
    high: float
    timer: float | None
    samples: int

    @classmethod
    def of(cls, profile: PySpyProfile) -> Sampled:
        share, low, high = rollout_interval(profile)
        timer = timer_shares(profile.phase_seconds).get("rollout")
        return cls(share, low, high, timer, profile.shares.total)

    def against_timer(self) -> Outcome:
        """``held`` where the timer's figure lies inside the sampler's interval (the two agree
        within sampling noise), ``did not hold`` where the interval excludes it."""
        if self.timer is None:
            return Outcome.NO_VERDICT
        return Outcome.HELD if self.low <= self.timer <= self.high else Outcome.NOT_HELD

    def timer_words(self, digits: int = 1) -> str:
        """Where the sampler's share lies against its timer's, and the outcome, in words."""
        share = f"{{:.{digits}%}}".format
        interval = f"{share(self.low)}-{share(self.high)}"
        if self.timer is None:
            return f"the sampler's {share(self.share)}: no timer read back, no verdict"
        if self.against_timer() is Outcome.HELD:
            return (
                f"the timer's {share(self.timer)} lies inside the sampler's {interval}: "
                f"agreement {Outcome.HELD.value}"
            )
        if self.high < self.timer:
            side, edge = "below", f"ends {points(self.timer - self.high)} short"
        else:
            side, edge = "above", f"starts {points(self.low - self.timer)} above it"
        return (
            f"the sampler's {share(self.share)} lies {points(self.timer - self.share)} {side} "
            f"its timer's {share(self.timer)}, and its interval ({interval}) {edge}: "
            f"agreement {Outcome.NOT_HELD.value}"
        )

    def short_words(self) -> str:
        """Where the timer lies against the sampler's interval, in a few words, once the
        figures are printed: ``inside it (agreement held)``, ``9.2 points past it (agreement
        did not hold)``."""
        if self.timer is None:
            return "no timer read back (no verdict)"
        if self.against_timer() is Outcome.HELD:
            return f"inside it (agreement {Outcome.HELD.value})"
        edge = self.timer - self.high if self.high < self.timer else self.low - self.timer
        return f"{points(edge)} past it (agreement {Outcome.NOT_HELD.value})"


def dropped_stacks(free: Sampled, paused: Sampled) -> tuple[Outcome, float, float]:
    """Whether sampling without pauses (``free``) drops rollout stacks, against the paused
    recording: the difference of each sampler's gap to its own run's timer, and its noise (the
    two intervals' half-widths added), both returned. "No stacks dropped" did not hold where
    ``free`` falls short by more than ``paused`` past that noise; held where by less."""
    if free.timer is None or paused.timer is None:
        return Outcome.NO_VERDICT, math.nan, math.nan
    difference = (free.share - free.timer) - (paused.share - paused.timer)
    noise = (free.high - free.low + paused.high - paused.low) / 2
    if difference + noise < 0:
        return Outcome.NOT_HELD, difference, noise
    if difference - noise > 0:
        return Outcome.HELD, difference, noise
    return Outcome.UNCLEAR, difference, noise
