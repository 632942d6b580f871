"""What an algorithm needs to know about an environment: its shapes, checked once.

:class:`EnvSpec` describes one environment's observations and actions, whichever kind
steps it (Gymnasium's vector environments, :mod:`~hetero_tutorial.rl.envs.vector`, or
the batched tensor ones, :mod:`~hetero_tutorial.rl.envs.batched`); :func:`space_spec`
refuses the spaces these algorithms cannot take, with what to do instead.
:class:`VectorEnvs` is what PPO's trainer and collectors ask of the environments they
step, whichever kind steps them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from hetero_tutorial.core.errors import UsageError


class VectorEnvs(Protocol):
    """N copies of one environment, stepped together: what PPO's trainer and collectors use.

    Gymnasium's vector environments satisfy it with NumPy arrays (``SyncVectorEnv`` from
    :func:`~hetero_tutorial.rl.envs.vector.make_vector_env`, ale-py's ``AtariVectorEnv``),
    and so do the package's batched tensor environments (``BatchedCartPole``,
    ``BatchedPendulum``), with tensors on their device, and the CNN workload's
    ``SyntheticFrames``. The batched collector asks more of its environments (their
    device and, compiled, their traceable transition): see
    :mod:`~hetero_tutorial.rl.ppo.collectors`.
    """

    single_observation_space: gym.Space
    """one environment's observations, as :func:`spec_of` reads them"""
    single_action_space: gym.Space
    """one environment's actions"""

    def reset(self, *, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        """Every environment's first observation (N, ...) and an info dict."""

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """One step of every environment: observations, rewards, terminated, truncated
        (each with N rows) and an info dict whose ``"final_obs"`` holds the observations
        before an autoreset."""

    def close(self) -> None:
        """Release the environments (processes, emulators, device memory)."""


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


def make_env(env_id: str) -> gym.Env:
    """``gym.make(env_id)``, or a clear error naming the ids the series uses."""
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
    env = make_env(env_id)
    obs_space, action_space = env.observation_space, env.action_space
    env.close()
    return space_spec(env_id, obs_space, action_space)


def spec_of(envs: VectorEnvs, label: str) -> EnvSpec:
    """The spec of a vector environment, from its ``single_*_space`` attributes."""
    flat = len(envs.single_observation_space.shape) == 1
    return space_spec(label, envs.single_observation_space, envs.single_action_space, flat)
