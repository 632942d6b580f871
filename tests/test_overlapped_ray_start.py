"""The Ray engine without starting Ray: a Ctrl-C while Ray starts leaves none running, and a
rollout is read into the learner's storage on any device. (Runs with Ray:
test_overlapped_ray.py.)"""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

ray = pytest.importorskip("ray", reason="Ray is the optional extra [ray] (make setup installs it)")

from hetero_tutorial.rl.envs.spec import env_spec  # noqa: E402
from hetero_tutorial.rl.overlapped import ray_engine  # noqa: E402
from hetero_tutorial.rl.ppo.config import PPOConfig  # noqa: E402
from hetero_tutorial.rl.ppo.storage import RolloutStorage  # noqa: E402

CONFIG = PPOConfig(env_id="CartPole-v1", num_envs=2, num_steps=8, minibatch_size=4)


@pytest.fixture
def shutdowns(monkeypatch) -> list[str]:
    """Ray's calls, recorded: ray.init is interrupted as by Ctrl-C, ray.shutdown noted."""
    calls: list[str] = []

    def interrupted(*args, **kwargs):
        calls.append("init")
        raise KeyboardInterrupt

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", interrupted)
    monkeypatch.setattr(ray, "shutdown", lambda: calls.append("shutdown"))
    return calls


def test_ctrl_c_during_ray_init_shuts_the_half_started_ray_down(shutdowns):
    with pytest.raises(KeyboardInterrupt):
        ray_engine.start_local_ray(cpus=1)
    assert shutdowns == ["init", "shutdown"]


def test_ctrl_c_while_a_run_starts_its_ray_leaves_none_running(shutdowns, monkeypatch):
    def interrupted_start(cpus=None):
        raise KeyboardInterrupt  # after Ray is up, before start_local_ray returns

    monkeypatch.setattr(ray_engine, "start_local_ray", interrupted_start)
    with pytest.raises(KeyboardInterrupt):
        ray_engine.RayEngine(CONFIG, env_spec("CartPole-v1"), 0, 1, 2, 10)
    assert shutdowns == ["shutdown"]
    shutdowns.clear()
    with pytest.raises(KeyboardInterrupt), ray_engine.local_ray(cpus=1):
        pass
    assert shutdowns == ["shutdown"]


@pytest.mark.parametrize("device", ["cpu", "meta"])  # meta: stands in for CUDA or MPS storage
def test_a_delivered_rollout_is_read_into_storage_on_any_device(device):
    spec = env_spec("CartPole-v1")
    storage = RolloutStorage(8, 2, spec, torch.device(device), pin=False)
    delivered = np.arange(storage.data.numel(), dtype=np.float32).reshape(storage.data.shape)
    delivered.flags.writeable = False  # as Ray's zero-copy arrays are
    engine = ray_engine.RayEngine.__new__(ray_engine.RayEngine)  # no Ray needed to read
    engine.arrays = {5: [delivered]}
    engine.read(SimpleNamespace(index=5), storage)
    assert engine.arrays == {}  # Ray may free it
    if device == "cpu":
        assert np.array_equal(storage.data.numpy(), delivered)
