"""Step 5 of PPO: generalised advantage estimates, computed where the rollout is stored.

Between the rollout and the transfer: the advantages and returns are written into the
rollout's own storage (NumPy on the CPU, torch on an accelerator), so the one batched
copy of the transfer carries them with the rest.
"""

from __future__ import annotations

import numpy as np
import torch

from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.storage import RolloutStorage

Array = np.ndarray | torch.Tensor
"""A NumPy array or a tensor on any device: GAE runs on whichever holds the rollout."""


def gae(
    rewards: Array,
    values: Array,
    dones: Array,
    last_value: Array,
    gamma: float,
    lam: float,
    out: Array,
) -> Array:
    """Generalised advantage estimates, written into ``out`` and returned.

    All arguments are (T, N) arrays (NumPy or torch, on any device) except
    ``last_value`` (N,), the value of the observation after the last step.
    ``dones[t]`` marks that the episode ended at step ``t`` (truncations have
    already had ``gamma * V(final observation)`` added to their reward), so no
    value or advantage flows back across it. NumPy and torch share the
    indexing used here, so one function serves CPU and accelerator storage.
    """
    next_value, next_advantage = last_value, 0.0
    for t in reversed(range(len(rewards))):
        not_done = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * not_done - values[t]
        out[t] = delta + gamma * lam * not_done * next_advantage
        next_value, next_advantage = values[t], out[t]
    return out


def compute_advantages(storage: RolloutStorage, last_value: torch.Tensor, c: PPOConfig) -> None:
    """GAE and the returns of a filled rollout, where it is stored."""
    s = storage
    arrays = (s.rewards, s.values, s.dones, last_value, s.advantages)
    if s.data.device.type == "cpu":
        # NumPy runs this short sequential loop several times faster than torch on the CPU.
        arrays = tuple(a.numpy() for a in arrays)
    gae(*arrays[:4], c.gamma, c.gae_lambda, out=arrays[4])
    s.returns.copy_(s.advantages + s.values)
