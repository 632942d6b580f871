import os

import gymnasium as gym
import numpy as np
import pytest
import torch

from hetero_tutorial.core import machine_load

# Small networks run fastest on one thread here, and one thread keeps the timing-free tests
# quick even when other processes share the machine's cores.
torch.set_num_threads(1)

# The busy-machine guard is off in the tests: two test workers share two cores, so each is
# "another program" to the other. tests/test_busy_guard.py switches it on, run alone.
os.environ.setdefault("HETERO_TUTORIAL_LOAD_GUARD", "0")


class Float64Pendulum(gym.Wrapper):
    """Pendulum-v1 with float64 observation and action spaces, as MuJoCo environments have."""

    def __init__(self) -> None:
        super().__init__(gym.make("Pendulum-v1"))
        for name in ("observation_space", "action_space"):
            space = getattr(self.env, name)
            low, high = space.low.astype(np.float64), space.high.astype(np.float64)
            setattr(self, name, gym.spaces.Box(low, high, dtype=np.float64))

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return obs.astype(np.float64), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(np.asarray(action, np.float32))
        return obs.astype(np.float64), reward, terminated, truncated, info


@pytest.fixture(autouse=True)
def _a_fresh_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no study read: a busy reading one test left (the guard's own
    tests make them) would withhold the next test's verdicts in the same process."""
    monkeypatch.setattr(machine_load, "_readings", [])
    monkeypatch.setattr(machine_load, "_filed", {})
    monkeypatch.setattr(machine_load, "_said", set())
    monkeypatch.setattr(machine_load, "_recorded", 0)


@pytest.fixture(scope="session")
def float64_env_id() -> str:
    """The id of a registered environment whose spaces are float64."""
    env_id = "Float64Pendulum-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=Float64Pendulum, max_episode_steps=200)
    return env_id


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first, each in collection order: two xdist workers then share them out
    at the start, instead of one running a minutes-long test alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
