"""Solutions for notebooks 01 and 03 (PPO under placements)."""

from __future__ import annotations

from hetero_tutorial.ppo import PPORun


def steady_steps_per_second(run: PPORun) -> float:
    """Environment steps per second over every iteration but the first (warm-up, copy counting)."""
    if len(run.iteration_seconds) < 2:
        raise ValueError("need at least two iterations to leave the first one out")
    later = run.iteration_seconds[1:]
    return run.config.batch_size * len(later) / sum(later)
