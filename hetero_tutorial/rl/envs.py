"""Vectorised Gymnasium environments, checked and seeded, on the CPU.

Gymnasium's environments are Python objects, so they step on the CPU in every
placement that uses them; the batched tensor environments of ``all-device`` (or of
``PPOConfig(batched_envs=True)``) are :mod:`~hetero_tutorial.rl.device_envs`'s.
The vector environments use ``SAME_STEP`` autoreset: when an episode ends, ``step``
returns the first observation of the next episode and puts the true last observation
in ``info["final_obs"]``, so every step is a real transition (with the default
``NEXT_STEP`` mode, the step after an episode's end is a reset that must be masked
out of training).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from hetero_tutorial.core.errors import UsageError


@dataclass(frozen=True)
class EnvSpec:
    """The shapes an algorithm needs to know about an environment."""

    env_id: str
    obs_shape: tuple[int, ...]
    """one observation's shape: (features,) for a vector, (4, 84, 84) for Atari frames"""
    obs_dtype: np.dtype
    """float32 (wider floats arrive cast, see make_vector_env), or uint8 for frames"""
    discrete: bool
    action_dim: int
    """Number of actions (discrete) or the size of the action vector (continuous)."""
    action_low: np.ndarray | None = None
    action_high: np.ndarray | None = None

    @property
    def obs_dim(self) -> int:
        """The number of numbers in one observation."""
        return int(np.prod(self.obs_shape))


def _make(env_id: str) -> gym.Env:
    try:
        return gym.make(env_id)
    except gym.error.Error as error:
        raise UsageError(
            f"unknown environment {env_id!r} ({error}). The series uses 'CartPole-v1' and "
            "'Pendulum-v1'; `gymnasium.pprint_registry()` lists every registered id."
        ) from None


def space_spec(
    env_id: str, obs_space: gym.Space, action_space: gym.Space, flat: bool = True
) -> EnvSpec:
    """Check the spaces (a Box of observations, Discrete or 1-D Box actions) and describe them.

    ``flat``: the observations must be a vector (the MLPs' input); False admits images.
    """
    if not isinstance(obs_space, gym.spaces.Box) or (flat and len(obs_space.shape) != 1):
        raise UsageError(
            f"{env_id} has observations {obs_space}; these algorithms take a flat vector (a 1-D "
            "Box). Flatten them with gymnasium.wrappers.FlattenObservation first."
        )
    dtype = np.dtype(np.uint8 if obs_space.dtype == np.uint8 else np.float32)
    shape = tuple(obs_space.shape)
    if isinstance(action_space, gym.spaces.Discrete):
        return EnvSpec(env_id, shape, dtype, True, int(action_space.n))
    if isinstance(action_space, gym.spaces.Box) and len(action_space.shape) == 1:
        low, high = (bound.astype(np.float32) for bound in (action_space.low, action_space.high))
        return EnvSpec(env_id, shape, dtype, False, action_space.shape[0], low, high)
    raise UsageError(
        f"{env_id} has action space {action_space}; supported are Discrete (e.g. CartPole-v1) "
        "and a 1-D Box (e.g. Pendulum-v1)."
    )


def env_spec(env_id: str) -> EnvSpec:
    """The spec of a registered environment (which must have flat observations)."""
    env = _make(env_id)
    obs_space, action_space = env.observation_space, env.action_space
    env.close()
    return space_spec(env_id, obs_space, action_space)


def spec_of(envs: Any, label: str) -> EnvSpec:
    """The spec of a vector environment, from its ``single_*_space`` attributes."""
    flat = len(envs.single_observation_space.shape) == 1
    return space_spec(label, envs.single_observation_space, envs.single_action_space, flat)


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


def evaluate(
    policy: Callable[[np.ndarray], np.ndarray], env_id: str, episodes: int = 10, seed: int = 10_000
) -> list[float]:
    """Undiscounted return of one episode in each of ``episodes`` environments run side by side.

    ``policy`` maps a batch of observations (episodes, obs_dim) to a batch of
    actions, e.g. a greedy policy. Environment ``i`` is seeded ``seed + i``;
    the default keeps evaluation seeds apart from training seeds.
    """
    if episodes < 1:
        raise UsageError(f"evaluate at least one episode, got {episodes}")
    envs = make_vector_env(env_id, episodes)
    obs, _ = envs.reset(seed=seed)
    returns = np.zeros(episodes)
    running = np.ones(episodes, dtype=bool)
    while running.any():
        obs, reward, terminated, truncated, _ = envs.step(policy(obs))
        returns += reward * running
        running &= ~(terminated | truncated)
    envs.close()
    return returns.tolist()
