from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest
import torch

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import Placement, placement
from hetero_tutorial.rl.envs.spec import env_spec
from hetero_tutorial.rl.ppo.advantages import gae
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.learner import ratio_stats
from hetero_tutorial.rl.ppo.policy import make_policy, place_policy
from hetero_tutorial.rl.ppo.runs import train
from hetero_tutorial.rl.ppo.storage import RolloutStorage
from hetero_tutorial.rl.ppo.trainer import PPOTrainer

TINY = {
    "total_steps": 512,
    "num_envs": 2,
    "num_steps": 128,
    "minibatch_size": 64,
    "update_epochs": 2,
}


def test_gae_matches_a_hand_computed_example():
    # gamma 0.9, lambda 0.8; the episode ends at t=1, so nothing flows back across it.
    rewards = np.array([[1.0], [1.0], [1.0]])
    values = np.array([[0.5], [0.4], [0.3]])
    dones = np.array([[0.0], [1.0], [0.0]])
    last_value = np.array([0.2])
    # t=2: 1 + 0.9*0.2 - 0.3 = 0.88
    # t=1: 1 - 0.4 = 0.6 (done: no bootstrap, no trace)
    # t=0: (1 + 0.9*0.4 - 0.5) + 0.9*0.8*0.6 = 0.86 + 0.432 = 1.292
    expected = np.array([[1.292], [0.6], [0.88]])
    out = np.zeros_like(rewards)
    np.testing.assert_allclose(gae(rewards, values, dones, last_value, 0.9, 0.8, out), expected)
    as_torch = [torch.tensor(a, dtype=torch.float64) for a in (rewards, values, dones, last_value)]
    out_torch = torch.zeros(3, 1, dtype=torch.float64)
    gae(*as_torch, 0.9, 0.8, out=out_torch)
    np.testing.assert_allclose(out_torch.numpy(), expected)


def test_ratio_stats_are_the_kl_estimate_and_the_fraction_clipped():
    ratio = torch.tensor([1.0, 1.5, 0.7, 1.1])
    kl, clipfrac = ratio_stats(ratio, ratio.log(), clip_coef=0.2).tolist()
    expected_kl = sum(r - 1 - np.log(r) for r in (1.0, 1.5, 0.7, 1.1)) / 4
    assert kl == pytest.approx(expected_kl) and clipfrac == 0.5  # 1.5 and 0.7 are cut


def test_placing_a_policy_leaves_the_callers_module_alone():
    policy = make_policy(env_spec("CartPole-v1"), PPOConfig())
    parameters = list(policy.parameters())
    cpu = torch.device("cpu")
    split = Placement(
        "split", rollout_device=cpu, storage_device=cpu, update_device=torch.device("meta")
    )
    learner, rollout, _, _ = place_policy(policy, split)
    assert rollout is not policy and learner is not policy
    assert all(a is b for a, b in zip(policy.parameters(), parameters, strict=True))
    for copied, original in zip(rollout.parameters(), parameters, strict=True):
        assert torch.equal(copied, original)


def test_the_collector_waits_for_the_last_copy_out_before_writing_the_storage():
    trainer = PPOTrainer(PPOConfig.tuned("CartPole-v1", **TINY), placement("all-cpu"))
    waited_at_step = []

    class CopyOut:  # stands in for the CUDA event a non-blocking copy out records
        def synchronize(self) -> None:
            waited_at_step.append(trainer.global_step)

    trainer.storage._copied_out = CopyOut()
    trainer.run_iteration()
    assert waited_at_step == [0] and trainer.storage._copied_out is None
    trainer.close()


def test_storage_views_share_one_tensor():
    storage = RolloutStorage(3, 2, env_spec("Pendulum-v1"), torch.device("cpu"), pin=False)
    assert storage.data.shape == (3, 2, 3 + 1 + 6)
    storage.obs[1, 0] = torch.tensor([1.0, 2.0, 3.0])
    storage.rewards[2, 1] = 5.0
    assert storage.data[1, 0, :3].tolist() == [1.0, 2.0, 3.0]
    assert storage.data[2, 1, storage.columns["rewards"].start] == 5.0
    flat = storage.views([storage.data.reshape(-1, storage.data.shape[-1])])
    assert flat["obs"].shape == (6, 3) and flat["actions"].shape == (6, 1)
    assert flat["rewards"].shape == (6,)


@pytest.mark.accelerator
def test_placements_change_speed_not_learning():
    """Same seed, three placements: identical parameters on CPU, close on an accelerator."""
    config = PPOConfig.tuned("CartPole-v1", **TINY)
    runs = {
        name: train(config, placement(name), seed=3, count_copies=False, eval_episodes=0)
        for name in ("all-accelerator", "hybrid", "all-cpu")
    }
    reference = [p.detach().cpu() for p in runs["all-cpu"].policy.parameters()]
    exact = accelerator() is None
    for name, run in runs.items():
        for got, want in zip(run.policy.parameters(), reference, strict=True):
            got = got.detach().cpu()
            if exact:
                assert torch.equal(got, want), name
            else:
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
        assert run.episodes == runs["all-cpu"].episodes or not exact


def test_run_reports_phases_throughput_and_copies():
    config = PPOConfig.tuned("CartPole-v1", **TINY)
    run = train(config, placement("hybrid"), seed=0, eval_episodes=2)
    assert run.env_steps == 512
    assert set(run.phase_seconds) >= {"rollout", "transfer", "update"}
    assert run.env_steps_per_s > 0 and len(run.iteration_seconds) == 2
    assert len(run.eval_returns) == 2
    fields = run.fields()
    for key in ("env_steps_per_s", "eval_return_mean", "phase_seconds", "copies", "utilisation"):
        assert key in fields
    assert fields["utilisation"]["process_cpu_percent"] > 0
    if accelerator() is None:
        assert run.copies_per_env_step == 0  # no accelerator, no host<->device copies


@pytest.mark.accelerator
@pytest.mark.skipif(accelerator() is None, reason="needs an accelerator")
def test_copies_per_step_on_an_accelerator():
    config = PPOConfig.tuned("CartPole-v1", **TINY)
    baseline = train(config, placement("all-accelerator"), seed=0, eval_episodes=0)
    hybrid = train(config, placement("hybrid"), seed=0, eval_episodes=0)
    steps = config.num_steps
    # all-accelerator: observations in and actions out every vector step, plus a few per rollout
    assert 2 * steps <= baseline.copies["rollout"]["count_per_iteration"] <= 2 * steps + 10
    assert "rollout" not in hybrid.copies  # the CPU rollout copies nothing
    assert hybrid.copies["transfer"]["count_per_iteration"] == 1
    assert hybrid.copies["weight_sync"]["count_per_iteration"] == 1


def test_float64_observations_are_cast_for_the_float32_networks(float64_env_id):
    config = replace(PPOConfig.tuned("Pendulum-v1", **TINY), env_id=float64_env_id)
    run = train(config, placement("all-cpu"), seed=0, eval_episodes=1)
    assert run.env_steps == config.total_steps and np.isfinite(run.eval_returns).all()


def test_bad_settings_are_clear_errors():
    with pytest.raises(UsageError, match="unknown environment"):
        train(PPOConfig(env_id="NoSuchEnv-v0"), placement("all-cpu"))
    with pytest.raises(UsageError, match="minibatch_size"):
        train(PPOConfig(num_envs=1, num_steps=8, minibatch_size=64), placement("all-cpu"))
    with pytest.raises(UsageError, match="unknown PPO setting"):
        PPOConfig.tuned("CartPole-v1", learning_rat=1e-3)
    with pytest.raises(UsageError, match="NaN"):  # one advantage cannot be normalised
        PPOConfig(num_envs=1, num_steps=8, minibatch_size=1).validate()
    with pytest.raises(UsageError, match="clip_coef"):
        PPOConfig(clip_coef=-0.2).validate()


def test_unsupported_action_space_is_a_clear_error():
    gym.register(
        "MultiBinaryDemo-v0",
        entry_point=lambda: _MultiBinaryEnv(),
    )
    with pytest.raises(UsageError, match="supported are Discrete"):
        env_spec("MultiBinaryDemo-v0")


class _MultiBinaryEnv(gym.Env):
    observation_space = gym.spaces.Box(-1, 1, (2,))
    action_space = gym.spaces.MultiBinary(3)


def test_pendulum_ppo_improves_over_its_first_evaluation():
    config = PPOConfig.tuned("Pendulum-v1", total_steps=40_960)
    run = train(config, placement("hybrid"), seed=0, threads=1, eval_every=20_480)
    first, last = run.evaluations[0][1], run.evaluations[-1][1]
    assert last > first + 100, run.evaluations


def test_the_copy_out_event_sleeps_while_it_waits(monkeypatch):
    """A default CUDA event's synchronize() spins a core until the copy is done; a blocking
    one sleeps in the driver, so waiting for the copy out is not CPU work of the learner."""
    made = []

    class Event:  # records how the storage asks for its event
        def __init__(self, **options) -> None:
            made.append(options)

        def record(self, stream) -> None:
            pass

    class Pinned:  # stands in for a pinned tensor: copying it to "cuda" returns itself
        def flatten(self, *dims):
            return self

        def to(self, device, non_blocking=False):
            return self

    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: None)
    storage = PPOTrainer(PPOConfig.tuned("CartPole-v1", **TINY), placement("all-cpu")).storage
    storage.tensors = [Pinned()]
    storage.flat_batch(torch.device("cuda", 0), non_blocking=True)
    assert made == [{"blocking": True}]
