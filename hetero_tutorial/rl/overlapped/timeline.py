"""What an overlapped run measured: speed, who waited for whom, policy lag, and its timeline.

The timeline is the record everything else is read from: one interval per thing each
process did (``rollout``, ``update``) or waited for (``wait_rollout``, ``wait_slot``,
``wait_weights``), on one clock (``time.time()``, see ``worker.py``), as seconds
from the moment every worker was ready. Idle shares are measured over the *steady
window*, from the end of the learner's first rollout to the end of its last, the
window over which ``env_steps_per_s`` counts too (as in ``ppo/runs.py``, the first
iteration pays start-up costs and is left out).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from hetero_tutorial.rl.overlapped.worker import CLOCK, WAIT_KINDS
from hetero_tutorial.rl.ppo.runs import PPOResult

LEARNER = "learner"
LEARNER_WAIT = "wait_rollout"
"""The learner's kind of interval while no rollout is ready for it."""


def worker_name(index: int) -> str:
    return f"worker {index}"


def configuration_label(backend: str, workers: int, max_policy_lag: int) -> str:
    """An overlapped configuration's name, e.g. ``mp, 1 worker, lag 1``."""
    return f"{backend}, {workers} worker{'s' if workers > 1 else ''}, lag {max_policy_lag}"


class Timeline:
    """Intervals ``{process, kind, start, end}`` of every process, in seconds from ``origin``."""

    def __init__(self, origin: float | None = None) -> None:
        self.origin = CLOCK() if origin is None else origin
        self.intervals: list[dict[str, Any]] = []

    def add(self, process: str, kind: str, start: float, end: float) -> None:
        """Record an interval given in CLOCK seconds (a worker's, say)."""
        self.intervals.append(
            {
                "process": process,
                "kind": kind,
                "start": start - self.origin,
                "end": end - self.origin,
            }
        )

    @contextmanager
    def interval(self, process: str, kind: str) -> Iterator[None]:
        """Record the block as one interval of ``process``."""
        start = CLOCK()
        try:
            yield
        finally:
            self.add(process, kind, start, CLOCK())


def busy_seconds(
    timeline: Sequence[dict[str, Any]],
    process: str,
    kinds: Sequence[str],
    window: tuple[float, float],
) -> float:
    """Seconds ``process`` spent in intervals of ``kinds`` inside ``window`` (start, end)."""
    low, high = window
    return sum(
        max(0.0, min(i["end"], high) - max(i["start"], low))
        for i in timeline
        if i["process"] == process and i["kind"] in kinds
    )


@dataclass
class OverlappedResult:
    """An overlapped PPO run: the usual :class:`PPOResult` plus what overlapping measured."""

    run: PPOResult
    """speed, phases, episodes and greedy returns, as for a sequential run"""
    backend: str
    workers: int
    max_policy_lag: int
    slots_per_worker: int
    cores: int
    """CPU cores this process may use"""
    startup_seconds: float
    """seconds to start the workers (and Ray, where this run started it); not in the speed"""
    timeline: list[dict[str, Any]]
    window: tuple[float, float]
    """the steady window (start, end) of the timeline, seconds"""
    lags: list[int]
    """policy lag of every rollout the learner updated on, in order"""
    dropped_lags: list[int]
    """policy lag of every rollout dropped as too stale"""
    updates: list[dict[str, float]] = field(default_factory=list)
    """per update: its lag, and approx KL and clip fraction at its first and last minibatch"""
    worker_pids: list[int] = field(default_factory=list)
    worker_cpu_percent: list[float] = field(default_factory=list)
    """each worker's CPU use over its rollouts, percent of one core"""

    @property
    def env_steps_per_s(self) -> float:
        """Environment steps collected per second over the steady window (dropped ones too)."""
        return self.run.env_steps_per_s

    @property
    def trained_env_steps_per_s(self) -> float:
        """Environment steps the learner updated on, per second (dropped rollouts left out)."""
        share = len(self.lags) / max(len(self.lags) + len(self.dropped_lags), 1)
        return self.env_steps_per_s * share

    @property
    def dropped_rollouts(self) -> int:
        return len(self.dropped_lags)

    @property
    def policy_lag_histogram(self) -> dict[int, int]:
        """How many rollouts learned from had each policy lag (0: with the newest weights)."""
        return dict(sorted(Counter(self.lags).items()))

    @property
    def window_seconds(self) -> float:
        return self.window[1] - self.window[0]

    @property
    def learner_idle_share(self) -> float:
        """Share of the steady window the learner spent waiting for a rollout."""
        waited = busy_seconds(self.timeline, LEARNER, [LEARNER_WAIT], self.window)
        return waited / self.window_seconds if self.window_seconds > 0 else 0.0

    def phase_seconds(self) -> tuple[float, float]:
        """(rollout, update) seconds, the mean interval of each that ended inside the steady
        window: this run's own R and U, to set beside the sequential run's."""
        low, high = self.window

        def mean(kind: str) -> float:
            spans = [
                i["end"] - i["start"]
                for i in self.timeline
                if i["kind"] == kind and low < i["end"] <= high
            ]
            return sum(spans) / len(spans) if spans else float("nan")

        return mean("rollout"), mean("update")

    def worker_wait_shares(self) -> dict[str, float]:
        """Share of the steady window the workers (on average) waited, by what they waited for."""
        total = self.window_seconds * self.workers
        return {
            kind: sum(
                busy_seconds(self.timeline, worker_name(w), [kind], self.window)
                for w in range(self.workers)
            )
            / total
            if total > 0
            else 0.0
            for kind in WAIT_KINDS
        }

    def worker_idle_shares(self) -> list[float]:
        """Each worker's share of the steady window spent waiting (for a slot or weights)."""
        if self.window_seconds <= 0:
            return [0.0] * self.workers
        return [
            busy_seconds(self.timeline, worker_name(w), WAIT_KINDS, self.window)
            / self.window_seconds
            for w in range(self.workers)
        ]

    @property
    def worker_idle_share(self) -> float:
        """Share of the steady window the workers (on average) waited, for a slot or weights."""
        return sum(self.worker_wait_shares().values())

    @property
    def label(self) -> str:
        """e.g. ``mp, 1 worker, lag 1``."""
        return configuration_label(self.backend, self.workers, self.max_policy_lag)

    def fields(self) -> dict[str, Any]:
        """The run as the fields of a results record (``bench.overlap``'s runs)."""
        return {
            **self.run.fields(),
            "backend": self.backend,
            "workers": self.workers,
            "max_policy_lag": self.max_policy_lag,
            "slots_per_worker": self.slots_per_worker,
            "cores": self.cores,
            "startup_seconds": self.startup_seconds,
            "trained_env_steps_per_s": self.trained_env_steps_per_s,
            "learner_idle_share": self.learner_idle_share,
            "worker_idle_share": self.worker_idle_share,
            "worker_wait_shares": self.worker_wait_shares(),
            "worker_idle_shares": self.worker_idle_shares(),
            "policy_lag_histogram": {str(k): v for k, v in self.policy_lag_histogram.items()},
            "dropped_rollouts": self.dropped_rollouts,
            "dropped_lags": self.dropped_lags,
            "updates": self.updates,
            "worker_cpu_percent": self.worker_cpu_percent,
            "window": list(self.window),
            "timeline": self.timeline,
        }
