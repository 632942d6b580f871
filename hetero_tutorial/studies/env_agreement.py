"""The batched environments against Gymnasium's, one step at a time from the same states.

:func:`one_step_gaps` steps Gymnasium's ``SyncVectorEnv`` with random actions and,
before every step, copies each Gymnasium environment's state and step count into the
batched environment, then steps it with the same actions: every step then starts from
the same state, and what is left to compare is one step of physics, rewards and
episode ends. (The tests do the same over whole episodes, resynchronising every few
steps; see ``tests/test_device_envs.py``.)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch

from hetero_tutorial.rl.envs.batched import make_batched_env
from hetero_tutorial.rl.envs.vector import make_vector_env


def _elapsed_steps(env: gym.Env) -> int:
    """Steps of the episode so far, from the environment's TimeLimit wrapper."""
    while not isinstance(env, gym.wrappers.TimeLimit):
        env = env.env
    return env._elapsed_steps


def one_step_gaps(env_id: str, num_envs: int = 16, steps: int = 300, seed: int = 0) -> dict:
    """The largest differences over ``steps`` steps of ``num_envs`` environments, each from
    Gymnasium's own state: observations (the episode's last one where it ended), rewards,
    and how many steps the episode ends (terminated, truncated) disagreed."""
    reference = make_vector_env(env_id, num_envs)
    reference.reset(seed=seed)
    batched = make_batched_env(env_id, num_envs, check_actions=False)
    batched.reset(seed=seed)
    rng = np.random.default_rng(seed)
    gaps: dict[str, Any] = {"obs": 0.0, "reward": 0.0, "ends_disagreed": 0, "episodes_ended": 0}
    for _ in range(steps):
        batched.state = np.stack([env.unwrapped.state for env in reference.envs])
        batched.elapsed_steps = [_elapsed_steps(env) for env in reference.envs]
        if env_id == "CartPole-v1":
            actions = rng.integers(0, 2, num_envs)
        else:
            actions = rng.uniform(-2, 2, (num_envs, 1)).astype(np.float32)
        obs, reward, terminated, truncated, info = reference.step(actions)
        _, b_reward, b_terminated, b_truncated, b_info = batched.step(torch.as_tensor(actions))
        ended = terminated | truncated
        if ended.any():
            obs = obs.copy()
            obs[ended] = np.stack(info["final_obs"][ended])
        gaps["obs"] = max(gaps["obs"], float(np.abs(b_info["final_obs"].numpy() - obs).max()))
        gaps["reward"] = max(gaps["reward"], float(np.abs(b_reward.numpy() - reward).max()))
        same = (b_terminated.numpy() == terminated) & (b_truncated.numpy() == truncated)
        gaps["ends_disagreed"] += int((~same).sum())
        gaps["episodes_ended"] += int(ended.sum())
    reference.close()
    return {"env_id": env_id, "num_envs": num_envs, "steps": steps, **gaps}


def pendulum_step_cost(
    theta: torch.Tensor, theta_dot: torch.Tensor, torque: torch.Tensor
) -> torch.Tensor:
    """The cost the batched Pendulum charges for one step from these states (its reward,
    negated): what notebook 07's cost exercise is checked against."""
    env = make_batched_env("Pendulum-v1", len(theta), check_actions=False)
    env.reset(seed=0)
    env.state = torch.stack([theta, theta_dot], dim=1)
    _, reward, *_ = env.step(torque[:, None].float())
    return -reward


FLOAT32_GAPS = {"obs": 1e-5, "reward": 1e-4}
"""The largest absolute gaps one float32 step may show against Gymnasium's float64 and still
count as rounding: float32 keeps about 7 significant digits of values up to about 10."""


def gaps_sentence(gaps: dict[str, Any]) -> str:
    """What :func:`one_step_gaps` found: agreement to float32's rounding with every episode
    end on the same step, or which of them did not hold."""
    env_id, ended, disagreed = gaps["env_id"], gaps["episodes_ended"], gaps["ends_disagreed"]
    beyond = [
        f"{name} gap {gaps[name]:.1e} > {limit:.0e}"
        for name, limit in FLOAT32_GAPS.items()
        if gaps[name] > limit
    ]
    if disagreed:
        beyond.append(f"{disagreed} episode end(s) on different steps ({ended} ended)")
    if beyond:
        return f"- {env_id}: the batched step differs from Gymnasium's: " + "; ".join(beyond) + "."
    return (
        f"- {env_id}: one step agrees to float32's rounding (largest gaps: obs "
        f"{gaps['obs']:.1e}, reward {gaps['reward']:.1e}), and all {ended} episode ends fell "
        "on the same step."
    )
