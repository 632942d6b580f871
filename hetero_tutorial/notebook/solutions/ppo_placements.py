"""Solutions for notebooks 01 and 03 (PPO under placements)."""

from __future__ import annotations

from hetero_tutorial.rl.envs.spec import env_spec
from hetero_tutorial.rl.ppo.config import PPOConfig


def rollout_copies(num_envs: int, num_steps: int) -> int:
    """Host<->device copies the all-accelerator baseline's rollout makes per iteration.

    Two per *vector* step, whatever the number of environments (the observations of all
    of them in, their actions out: ``Collector.act``), plus three per rollout
    (``Collector.collect``): the sampling noise in, the rewards and dones in, the last
    observation in (for the advantages' bootstrap). Episodes cut off by a time limit
    add two more each (their final observation in, its value out), left out here.
    """
    return 2 * num_steps + 3


def rollout_bytes(config: PPOConfig) -> int:
    """Bytes the hybrid plan copies to the update device per iteration: the whole rollout.

    Every field is float32 (4 bytes): observation, action (one number for a
    discrete action), log-probability, value, reward, done, advantage, return.
    """
    spec = env_spec(config.env_id)
    action_width = 1 if spec.discrete else spec.action_dim
    return config.num_steps * config.num_envs * (spec.obs_dim + action_width + 6) * 4


HINTS = {
    "rollout_copies": (
        "Read `GymCollector.act` and find the lines that move a tensor between the host and "
        "the device: they run once per *vector* step, for all the environments at once.",
        "The count is (copies per vector step) x `num_steps`, plus the few copies `collect` "
        "makes once per rollout, outside its loop. Count those lines in the source; nothing "
        "is multiplied by `num_envs`.",
    ),
    "rollout_bytes": (
        "The hybrid plan's transfer copies the whole rollout storage, so count the float32 "
        "numbers it holds, then turn numbers into bytes.",
        "Count steps times environments times the numbers each transition stores. "
        "`env_spec(config.env_id)` gives `obs_dim`, `discrete` and `action_dim` (a discrete "
        "action is stored as one number); the markdown above lists the scalars each "
        "transition adds.",
    ),
}
"""Each exercise's hint ladder: first the idea, then the shape of the code (never the formula)."""
