"""Seconds per PPO iteration under several placements, interleaved; and over network widths.

Training to convergence is not needed to compare placements: every iteration
runs the same code, so a few timed iterations per placement (after a warm-up
iteration) give the cost. The placements' iterations are interleaved, so drift
in the machine's speed hits them alike (claim C9's width sweep, notebook 03;
the allocator comparison, notebook 05).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import Placement, placement
from hetero_tutorial.core.timing import Timing, torch_threads
from hetero_tutorial.rl.ppo import PPOConfig, PPOTrainer


class IterationTrainer(Protocol):
    """What :func:`interleaved_costs` needs of a trainer (PPOTrainer and CNNTrainer have it)."""

    placement: Placement
    iteration_seconds: list[float]

    def step(self) -> None: ...

    def close(self) -> None: ...


def interleaved_costs(
    make_trainer: Callable[[Placement], IterationTrainer],
    placements: Sequence[Placement],
    iterations: int = 3,
    warmup: int = 1,
    threads: int | None = None,
) -> dict[str, Timing]:
    """Seconds of each of ``iterations`` iterations per placement, interleaved after ``warmup``."""
    if iterations < 1:
        raise UsageError(f"time at least one iteration, got {iterations}")
    with torch_threads(threads):
        trainers = [make_trainer(plan) for plan in placements]
        for _ in range(iterations + warmup):
            for trainer in trainers:
                trainer.step()
        for trainer in trainers:
            trainer.close()
    return {t.placement.name: Timing(tuple(t.iteration_seconds[warmup:])) for t in trainers}


def iteration_costs(
    config: PPOConfig,
    placements: Sequence[Placement],
    iterations: int = 3,
    warmup: int = 1,
    seed: int = 0,
    threads: int | None = None,
) -> dict[str, Timing]:
    """Seconds of each of ``iterations`` PPO iterations per placement, after ``warmup`` untimed."""
    config = replace(config, total_steps=(iterations + warmup) * config.batch_size)
    return interleaved_costs(
        lambda plan: PPOTrainer(config, plan, seed, count_copies=False),
        placements,
        iterations,
        warmup,
        threads,
    )


def _thread_counts(threads: int | Sequence[int | None] | None) -> list[int]:
    """The distinct CPU thread counts asked for (None: PyTorch's current setting)."""
    asked = [threads] if threads is None or isinstance(threads, int) else list(threads)
    now = torch.get_num_threads()
    return list(dict.fromkeys(now if count is None else count for count in asked))


def width_sweep(
    env_id: str,
    widths: Sequence[int],
    placement_names: Sequence[str] = ("all-accelerator", "hybrid", "all-cpu"),
    iterations: int = 3,
    threads: int | Sequence[int | None] | None = None,
    **overrides: Any,
) -> list[dict[str, Any]]:
    """One row per (width, placement, CPU thread count): median and IQR of seconds per iteration.

    ``threads``: one CPU thread count, or several (None: PyTorch's setting). With
    several, every plan runs at each, and :func:`speedups` gives each plan its
    fastest: one thread suits small networks and all cores wide ones, so any one
    count would handicap the plans whose CPU work it does not suit (the hybrid's
    actor at large widths, say). ``overrides`` change the environment's tuned PPO
    settings (e.g. ``num_steps``).
    """
    plans = [placement(name) for name in placement_names]
    rows = []
    for width in widths:
        config = PPOConfig.tuned(env_id, hidden=width, **overrides)
        for count in _thread_counts(threads):
            costs = iteration_costs(config, plans, iterations, threads=count)
            for name, timing in costs.items():
                rows.append(
                    {
                        "width": width,
                        "placement": name,
                        "threads": count,
                        "seconds_per_iteration": timing.median,
                        "iqr_s": timing.iqr,
                        "env_steps_per_s": config.batch_size / timing.median,
                    }
                )
    return rows


def speedups(
    rows: list[dict[str, Any]], baseline: str = "all-accelerator"
) -> dict[int, dict[str, float]]:
    """Per width: each placement's speed relative to ``baseline`` (above 1: faster than it).

    Each placement counts at its fastest thread count where several were swept.
    """
    cost: dict[tuple[int, str], float] = {}
    for r in rows:
        key = (r["width"], r["placement"])
        cost[key] = min(cost.get(key, math.inf), r["seconds_per_iteration"])
    result: dict[int, dict[str, float]] = {}
    for width, name in cost:
        if (width, baseline) not in cost:
            raise UsageError(f"no {baseline!r} row for width {width} to compare against")
        result.setdefault(width, {})[name] = cost[(width, baseline)] / cost[(width, name)]
    return result


def hybrid_fields(
    env_id: str,
    runs: dict[str, Any],
    sweep: list[dict[str, Any]],
    copy_rows: list[dict[str, Any]],
) -> dict[str, Any]:
    """The fields of a ``bench.hybrid`` record (claims C6, C9): the side-by-side runs
    (:class:`~hetero_tutorial.rl.ppo.PPORun` by placement), the width sweep and the copy costs."""
    return {
        "env_id": env_id,
        "runs": {name: run.fields() for name, run in runs.items()},
        "width_sweep": sweep,
        "copy_costs": copy_rows,
    }
