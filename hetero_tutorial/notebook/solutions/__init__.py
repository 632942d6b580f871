"""Solutions to the notebooks' exercises, one module per notebook topic, each tested.

A notebook never imports them: its exercise cell names the exercise, and
:func:`hetero_tutorial.notebook.exercises.check` looks the solution up here, so the
answer stays out of sight until a learner opens this folder.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from hetero_tutorial.core.errors import UsageError

SOLUTIONS = {
    "best_batch_per_width": "devices_and_timing",
    "rollout_copies": "ppo_placements",
    "inclusive_share": "profiling",
    "rollout_bytes": "ppo_placements",
    "ring_slots": "replay_buffers",
    "td_target": "replay_buffers",
    "plan_seconds": "dynamic_allocator",
    "speedup_and_time_saved": "claims_ledger",
    "wrap_angle": "device_envs",
    "pendulum_cost": "device_envs",
    "ideal_speedup": "overlapped",
    "predicted_lags": "overlapped",
    "largest_gain": "compile_and_graphs",
}
"""Each exercise's name, and the module (under this package) that holds its solution."""


def _module(name: str) -> Any:
    if name not in SOLUTIONS:
        raise UsageError(f"no exercise {name!r}; the exercises are {', '.join(SOLUTIONS)}")
    return importlib.import_module(f"{__name__}.{SOLUTIONS[name]}")


def solution(name: str) -> Callable[..., Any]:
    """The solution function of exercise ``name``."""
    return getattr(_module(name), name)


def hints(name: str) -> tuple[str, ...]:
    """Exercise ``name``'s hint ladder: the idea first, then the shape of the code."""
    return _module(name).HINTS[name]
