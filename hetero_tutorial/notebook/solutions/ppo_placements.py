"""Solutions for notebooks 01 and 03 (PPO under placements)."""

from __future__ import annotations

from hetero_tutorial.rl.envs import env_spec
from hetero_tutorial.rl.ppo_config import PPOConfig
from hetero_tutorial.rl.ppo_runs import PPOResult


def steady_steps_per_second(run: PPOResult) -> float:
    """Environment steps per second over every iteration but the first (warm-up, copy counting)."""
    if len(run.iteration_seconds) < 2:
        raise ValueError("need at least two iterations to leave the first one out")
    later = run.iteration_seconds[1:]
    return run.config.batch_size * len(later) / sum(later)


def rollout_bytes(config: PPOConfig) -> int:
    """Bytes the hybrid plan copies to the update device per iteration: the whole rollout.

    Every field is float32 (4 bytes): observation, action (one number for a
    discrete action), log-probability, value, reward, done, advantage, return.
    """
    spec = env_spec(config.env_id)
    action_width = 1 if spec.discrete else spec.action_dim
    return config.num_steps * config.num_envs * (spec.obs_dim + action_width + 6) * 4
