"""Seconds per PPO iteration of every placement over network widths and CPU thread counts.

A few timed iterations per placement (after a warm-up iteration), interleaved so
that drift in the machine's speed hits them alike, give each cost
(:func:`~hetero_tutorial.rl.ppo_runs.iteration_costs`): claim C9's width sweep,
notebook 03.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.ppo_config import PPOConfig
from hetero_tutorial.rl.ppo_runs import iteration_costs


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
    (:class:`~hetero_tutorial.rl.ppo_runs.PPOResult` by placement), the width sweep and
    the copy costs."""
    return {
        "env_id": env_id,
        "runs": {name: run.fields() for name, run in runs.items()},
        "width_sweep": sweep,
        "copy_costs": copy_rows,
    }
