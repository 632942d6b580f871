"""Greedy evaluation: a policy's undiscounted returns on fresh, seeded environments.

PPO and DDPG evaluate the same way, on Gymnasium's vector environments and with one
seed rule: a run seeded ``seed`` is evaluated on environments seeded from
``seed + EVAL_SEED_OFFSET`` on, apart from every seed its training used.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.rl.envs.vector import make_vector_env

EVAL_SEED_OFFSET = 10_000
"""A run seeded ``seed`` evaluates on environments seeded ``seed + EVAL_SEED_OFFSET + i``."""


def evaluate(
    policy: Callable[[np.ndarray], np.ndarray], env_id: str, episodes: int, seed: int
) -> list[float]:
    """Undiscounted return of one episode in each of ``episodes`` environments run side by side.

    ``policy`` maps a batch of observations (episodes, obs_dim) to a batch of
    actions, e.g. a greedy policy. ``seed`` is the run's own: environment ``i`` is
    seeded ``seed + EVAL_SEED_OFFSET + i``, apart from the seeds of training.
    """
    if episodes < 1:
        raise UsageError(f"evaluate at least one episode, got {episodes}")
    envs = make_vector_env(env_id, episodes)
    obs, _ = envs.reset(seed=seed + EVAL_SEED_OFFSET)
    returns = np.zeros(episodes)
    running = np.ones(episodes, dtype=bool)
    while running.any():
        obs, reward, terminated, truncated, _ = envs.step(policy(obs))
        returns += reward * running
        running &= ~(terminated | truncated)
    envs.close()
    return returns.tolist()
