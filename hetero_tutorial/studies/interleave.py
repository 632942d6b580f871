"""Configurations timed side by side: one iteration each in turn, every turn at its own threads.

Shared machines drift in speed over minutes, so configurations are compared only when
they ran interleaved (A, B, A, B, ...): a slow minute then costs each of them alike,
and the ratio of two configurations' seconds in the same turn is one paired sample of
their ratio. :func:`interleaved_iterations` keeps every timed iteration, in total and
per phase, so that the spread of those paired ratios can be reported with the median.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import PhaseTimer, torch_threads
from hetero_tutorial.rl.ppo.trainer import PHASES


class Trainer(Protocol):
    """What a timed configuration needs of a trainer (PPO's :class:`PPOTrainer` has it)."""

    timer: PhaseTimer
    iteration_seconds: list[float]

    def run_iteration(self) -> None: ...

    def close(self) -> None: ...


def interleaved_iterations(
    make_trainer: Callable[[Placement], Trainer],
    runs: Sequence[tuple[Placement, int | None]],
    timed: int,
    warmup: int = 1,
) -> list[dict[str, Any]]:
    """Time ``timed`` iterations of each ``(placement, CPU threads)``, interleaved, after
    ``warmup`` untimed ones each (first calls, allocator growth, a device's start-up).

    Returns, per run in order: ``threads``, ``iteration_seconds`` (each timed iteration)
    and ``phase_seconds`` (per phase, each timed iteration's seconds in it).
    """
    if timed < 1 or warmup < 0:
        raise UsageError(f"need timed >= 1 and warmup >= 0 iterations, got {timed}, {warmup}")
    trainers = [make_trainer(placement) for placement, _ in runs]
    found: list[dict[str, Any]] = [
        {"threads": threads, "iteration_seconds": [], "phase_seconds": {}} for _, threads in runs
    ]
    for index in range(warmup + timed):
        for (_, threads), trainer, record in zip(runs, trainers, found, strict=True):
            with torch_threads(threads):
                before = dict(trainer.timer.seconds)
                trainer.run_iteration()
            if index < warmup:
                continue
            record["iteration_seconds"].append(trainer.iteration_seconds[-1])
            for phase in PHASES:
                if phase in trainer.timer.seconds:
                    spent = trainer.timer.seconds[phase] - before.get(phase, 0.0)
                    record["phase_seconds"].setdefault(phase, []).append(spent)
    for trainer in trainers:
        trainer.close()
    return found
