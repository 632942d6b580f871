"""A two-second calibration: how fast this machine runs the series' typical work.

The workload is a miniature of the notebooks: stepping CartPole environments,
a small MLP forward pass per step, and a gradient step every few steps, all on
the CPU with one thread. Its rate, compared with the rate recorded on a
reference machine next to that machine's notebook run times, estimates how long
the notebooks will take here (see ``python -m hetero_tutorial doctor``).
"""

from __future__ import annotations

import time

import gymnasium as gym
import torch
from torch import nn

from hetero_tutorial.core.timing import torch_threads


def calibrate(seconds: float = 2.0, seed: int = 0) -> float:
    """Work units per second here (a unit: 4 env steps, a forward, 1/8 of an update)."""
    envs = gym.make_vec("CartPole-v1", num_envs=4, vectorization_mode="sync")
    net = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    batch = torch.randn(256, 4)
    obs, _ = envs.reset(seed=seed)
    units = 0
    with torch_threads(1):
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            with torch.no_grad():
                actions = net(torch.as_tensor(obs, dtype=torch.float32)).argmax(dim=1)
            obs, *_ = envs.step(actions.numpy())
            if units % 8 == 0:
                loss = net(batch).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            units += 1
        elapsed = time.perf_counter() - start
    envs.close()
    return units / elapsed
