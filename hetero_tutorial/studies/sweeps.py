"""Seconds per PPO iteration, and per phase, over network widths, placements and CPU threads.

A few timed iterations per configuration (after a warm-up iteration), interleaved so
that drift in the machine's speed hits them alike: claim C9's width sweep and the
thread question of notebook 03. A *configuration* is a placement's devices at one CPU
thread count; placements that resolve to the same devices (every preset, on a machine
without an accelerator) run once and stand for each other
(:func:`~hetero_tutorial.core.configurations.distinct_placements`), so no time is spent
timing the same code twice. Every row keeps each timed iteration's seconds, in total and
per phase, so ratios between configurations pair up iteration by iteration (their spread
is the noise an effect must beat: :mod:`hetero_tutorial.studies.threads`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from hetero_tutorial.core.configurations import distinct_placements
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine import usable_cores
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.trainer import PPOTrainer
from hetero_tutorial.studies.interleave import interleaved_iterations


def thread_counts(threads: int | Sequence[int | None] | None) -> list[int]:
    """The distinct CPU thread counts asked for (None: all cores, :func:`usable_cores`)."""
    asked = [threads] if threads is None or isinstance(threads, int) else list(threads)
    every = usable_cores()
    return list(dict.fromkeys(every if count is None else count for count in asked))


@guarded("the width sweep")
def width_sweep(
    env_id: str,
    widths: Sequence[int],
    placement_names: Sequence[str] = ("all-accelerator", "hybrid", "all-cpu"),
    iterations: int = 3,
    threads: int | Sequence[int | None] | None = None,
    warmup: int = 1,
    progress: Callable[[int], None] | None = None,
    **overrides: Any,
) -> list[dict[str, Any]]:
    """One row per (width, distinct placement, CPU thread count): seconds per iteration.

    ``threads``: one CPU thread count, or several (None: all usable cores); every
    configuration runs at each, interleaved with the others, iteration by iteration.
    A row's ``stands_for`` lists the placements that resolved to its devices (measured
    once, as the first). ``seconds_per_iteration`` and ``iqr_s``: median and IQR of its
    timed iterations; ``iteration_seconds`` and ``phase_seconds`` (per phase, a list)
    each timed iteration. ``overrides`` change the environment's tuned PPO settings.
    ``progress(width)`` is called as each width is done (a bar's estimate of the time left).
    """
    if iterations < 1:
        raise UsageError(f"time at least one iteration per width, got {iterations}")
    groups = distinct_placements([placement(name) for name in placement_names])
    counts = thread_counts(threads)
    rows = []
    for width in widths:
        config = PPOConfig.tuned(env_id, hidden=width, **overrides)
        config = replace(config, total_steps=(iterations + warmup) * config.batch_size)
        asked = [(group, count) for count in counts for group in groups]
        runs = interleaved_iterations(
            lambda placement, c=config: PPOTrainer(c, placement),
            [(group[0], count) for group, count in asked],
            iterations,
            warmup,
        )
        for run, (group, _) in zip(runs, asked, strict=True):
            timed = run["iteration_seconds"]
            median = float(np.median(timed))
            q1, q3 = np.percentile(timed, [25, 75])
            rows.append(
                {
                    "width": width,
                    "placement": group[0].name,
                    "stands_for": [p.name for p in group],
                    "threads": run["threads"],
                    "seconds_per_iteration": median,
                    "iqr_s": float(q3 - q1),
                    "env_steps_per_s": config.batch_size / median,
                    "iteration_seconds": timed,
                    "phase_seconds": run["phase_seconds"],
                }
            )
        if progress is not None:
            progress(width)
    return rows


def speedups(
    rows: list[dict[str, Any]], baseline: str = "all-accelerator"
) -> dict[int, dict[str, float]]:
    """Per width: each placement's speed relative to ``baseline`` (above 1: faster than it).

    Each placement counts at its fastest thread count where several were swept; a row
    measured once for several placements (``stands_for``) counts for each of them.
    """
    cost: dict[tuple[int, str], float] = {}
    for r in rows:
        for name in r.get("stands_for", [r["placement"]]):
            key = (r["width"], name)
            cost[key] = min(cost.get(key, math.inf), r["seconds_per_iteration"])
    result: dict[int, dict[str, float]] = {}
    for width, name in cost:
        if (width, baseline) not in cost:
            raise UsageError(f"no {baseline!r} row for width {width} to compare against")
        result.setdefault(width, {})[name] = cost[(width, baseline)] / cost[(width, name)]
    return result


def distinct_plans_measured(rows: list[dict[str, Any]]) -> int:
    """How many distinct placements a sweep measured (1 on a machine without an accelerator)."""
    return len({r["placement"] for r in rows})


def hybrid_fields(
    env_id: str,
    runs: dict[str, Any],
    sweep: list[dict[str, Any]],
    copy_rows: list[dict[str, Any]],
    counted_copies: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The fields of a ``bench.hybrid`` record (claims C6, C9): the side-by-side runs
    (:class:`~hetero_tutorial.rl.ppo.runs.PPOResult` by placement; one run standing for
    every placement when they resolved to the same devices), the width and thread sweep,
    the copy costs, and the copies each plan makes counted by phase (``counted_copies``)."""
    return {
        "env_id": env_id,
        "runs": {name: run.fields() for name, run in runs.items()},
        "width_sweep": sweep,
        "copy_costs": copy_rows,
        "counted_copies": counted_copies or {},
    }
