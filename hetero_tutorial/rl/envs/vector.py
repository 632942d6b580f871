"""Gymnasium's vector environments, checked and seeded, on the CPU.

Gymnasium's environments are Python objects, so they step on the CPU in every
placement that uses them; the batched tensor environments (a placement with
``batched_envs``, as ``all-device`` has) are :mod:`~hetero_tutorial.rl.envs.batched`'s.
The vector environments use ``SAME_STEP`` autoreset: when an episode ends, ``step``
returns the first observation of the next episode and puts the true last observation
in ``info["final_obs"]``, so every step is a real transition (with the default
``NEXT_STEP`` mode, the step after an episode's end is a reset that must be masked
out of training).
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.rl.envs.spec import env_spec


def make_vector_env(env_id: str, num_envs: int) -> SyncVectorEnv:
    """``num_envs`` copies of ``env_id`` stepped in this process, with SAME_STEP autoreset.

    Seed it with ``envs.reset(seed=seed)``: environment ``i`` gets ``seed + i``.
    """
    if num_envs < 1:
        raise UsageError(f"num_envs must be at least 1, got {num_envs}")
    env_spec(env_id)
    return SyncVectorEnv(
        [lambda: _float32_observations(gym.make(env_id)) for _ in range(num_envs)],
        autoreset_mode=AutoresetMode.SAME_STEP,
    )


def _float32_observations(env: gym.Env) -> gym.Env:
    """The networks are float32; MuJoCo-style float64 observations are cast as they arrive."""
    if env.observation_space.dtype == np.float32:
        return env
    with warnings.catch_warnings():  # gymnasium warns that the bounds lose precision: intended
        warnings.simplefilter("ignore")
        return gym.wrappers.DtypeObservation(env, np.float32)
