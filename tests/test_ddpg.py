"""DDPG: the update against a plain textbook version, bootstrapping, seeding, and learning."""

import copy
import math
import time
from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import placement
from hetero_tutorial.notebook.solutions.replay_buffers import td_target
from hetero_tutorial.rl.buffers import DESIGNS, Batch
from hetero_tutorial.rl.ddpg import trainer as trainer_module
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.learner import DDPGLearner
from hetero_tutorial.rl.ddpg.runs import result_of, train
from hetero_tutorial.rl.ddpg.trainer import DDPGTrainer
from hetero_tutorial.studies.ddpg_buffers import train_designs
from hetero_tutorial.studies.ddpg_placements import placement_comparison

SMALL = {"hidden": 32, "batch_size": 32, "count_copies_steps": 20}
"""Settings for short runs that test mechanics, not learning."""
QUICK = {"eval_episodes": 1}
"""One greedy episode after a short run."""
CPU_ONLY = placement("all-cpu")

UPDATE_TOLERANCE = {"rtol": 1e-3, "atol": 1e-4}
"""How close an update on an accelerator must stay to the same update on the CPU.

CUDA sums a matrix product in another order than the CPU (about 1e-7 relative per
product); Adam divides by the gradients' root mean square, which turns those last-bit
differences into differences of up to ~1e-5 in a weight after a few steps (and flips the
sign of a step only where a gradient is far below Adam's epsilon). 1e-4 leaves a margin
and is still a thousand times smaller than one learning-rate step (1e-3).
"""


def make_learner(**overrides):
    config = DDPGConfig(**{**SMALL, **overrides})
    return DDPGLearner(gym.make("Pendulum-v1"), config, placement("all-cpu"), seed=0), config


def random_batch(size=32, terminated=None, truncated=None, seed=0):
    g = torch.Generator().manual_seed(seed)
    flags = torch.zeros(size)
    return Batch(
        obs=torch.randn(size, 3, generator=g),
        action=torch.rand(size, 1, generator=g) * 4 - 2,
        reward=-torch.rand(size, generator=g) * 10,
        next_obs=torch.randn(size, 3, generator=g),
        terminated=flags if terminated is None else terminated,
        truncated=flags if truncated is None else truncated,
    )


def textbook_update(nets, optimizers, batch, gamma, tau):
    """DDPG's update written the plain way (Lillicrap et al., 2016), for comparison."""
    actor, critic, actor_target, critic_target = nets
    actor_optimizer, critic_optimizer = optimizers
    with torch.no_grad():
        next_q = critic_target(batch.next_obs, actor_target(batch.next_obs))
        y = batch.reward + gamma * (1 - batch.terminated) * next_q
    critic_loss = F.mse_loss(critic(batch.obs, batch.action), y)
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()
    actor_loss = -critic(batch.obs, actor(batch.obs)).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
    with torch.no_grad():
        for net, target in ((actor, actor_target), (critic, critic_target)):
            for p, p_target in zip(net.parameters(), target.parameters(), strict=True):
                p_target.mul_(1 - tau).add_(tau * p)


def test_update_matches_the_textbook_update():
    learner, config = make_learner()
    nets = [copy.deepcopy(n) for n in (learner.actor, learner.critic)]
    nets += [copy.deepcopy(n) for n in (learner.actor_target, learner.critic_target)]
    optimizers = [
        torch.optim.Adam(nets[0].parameters(), lr=config.actor_lr, foreach=False),
        torch.optim.Adam(nets[1].parameters(), lr=config.critic_lr, foreach=False),
    ]
    for seed in range(3):
        batch = random_batch(terminated=(torch.arange(32) % 5 == 0).float(), seed=seed)
        learner.update(batch)
        textbook_update(nets, optimizers, batch, config.gamma, config.tau)
    ours = (learner.actor, learner.critic, learner.actor_target, learner.critic_target)
    for mine, reference in zip(ours, nets, strict=True):
        for p, q in zip(mine.parameters(), reference.parameters(), strict=True):
            torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)


def critic_after_update(batch):
    learner, _ = make_learner()
    learner.update(batch)
    return torch.cat([p.flatten() for p in learner.critic.parameters()])


def test_truncation_bootstraps_and_termination_does_not():
    ones, zeros = torch.ones(32), torch.zeros(32)
    plain = critic_after_update(random_batch())
    truncated = critic_after_update(random_batch(truncated=ones))
    terminated = critic_after_update(random_batch(terminated=ones))
    torch.testing.assert_close(truncated, plain)  # a time limit changes nothing
    assert not torch.allclose(terminated, plain)  # a terminal state drops the bootstrap
    torch.testing.assert_close(terminated, critic_after_update(random_batch(terminated=zeros + 1)))


def test_acting_respects_the_action_bounds():
    learner, _ = make_learner(exploration_noise=10.0)
    obs = gym.make("Pendulum-v1").observation_space.sample()
    actions = torch.from_numpy(np.array([learner.act(obs) for _ in range(200)]))
    assert actions.dtype == torch.float32 and actions.shape == (200, 1)
    assert actions.min() >= -2.0 and actions.max() <= 2.0
    assert actions.std() > 0.5  # the noise is there
    greedy = [learner.act(obs, explore=False) for _ in range(3)]
    assert greedy[0] == greedy[1] == greedy[2]


def test_a_batch_of_observations_gets_each_ones_action():
    """The greedy evaluation acts on a batch (one episode per environment)."""
    learner, _ = make_learner()
    space = gym.make("Pendulum-v1").observation_space
    space.seed(0)
    batch = np.stack([space.sample() for _ in range(5)])
    greedy = learner.act(batch, explore=False)
    assert greedy.shape == (5, 1) and greedy.dtype == np.float32
    one_by_one = np.stack([learner.act(obs, explore=False) for obs in batch])
    np.testing.assert_allclose(greedy, one_by_one, rtol=1e-5, atol=1e-6)
    assert learner.act(batch).shape == (5, 1)  # exploring: a noise draw per action


@pytest.mark.parametrize("design", DESIGNS)
def test_a_short_run_with_each_buffer_reports_speed_copies_and_returns(design):
    config = DDPGConfig(**SMALL, buffer=design, total_steps=700, learning_starts=200)
    result = train(config, "all-cpu", **QUICK)
    assert result.env_steps_per_s > 0
    assert result.curve == list(zip([200, 400, 600], result.episode_returns, strict=True))
    assert math.isfinite(result.seconds_per_episode)  # the episode from step 400 to 600
    assert len(result.eval_returns) == 1 and result.eval_return_mean < 0
    assert result.copies_per_1000_samples == 0  # everything on the CPU: nothing to copy
    fields = result.fields()
    assert fields["config"]["buffer"] == design and "eval_return_mean" in fields


def test_same_seed_same_learning_and_placements_do_not_change_it():
    config = {**SMALL, "total_steps": 500, "learning_starts": 200}
    runs = [
        train(DDPGConfig(**config), "all-cpu", seed=1, **QUICK),
        train(DDPGConfig(**config), "all-cpu", seed=1, **QUICK),
        train(DDPGConfig(**config), "hybrid", seed=1, **QUICK),
    ]
    assert runs[0].episode_returns == runs[1].episode_returns
    assert runs[0].eval_returns == runs[1].eval_returns
    hybrid, cpu = runs[2], runs[0]
    if accelerator() is None:  # "hybrid" runs on the CPU too: it must learn bit for bit alike
        assert hybrid.episode_returns == cpu.episode_returns
        assert hybrid.eval_returns == cpu.eval_returns
    else:
        # CUDA rounds differently, and a closed loop (action -> next state -> action) carries
        # last-bit differences into the returns chaotically: the episode of random actions is
        # identical, and test_updates_agree_across_placements holds the updates to a tolerance.
        assert hybrid.episode_returns[0] == cpu.episode_returns[0]
    other_seed = train(DDPGConfig(**config), "all-cpu", seed=2, **QUICK)
    assert other_seed.episode_returns != runs[0].episode_returns


@pytest.mark.accelerator
def test_updates_agree_across_placements():
    """The same updates on the hybrid placement's update device: equal on a CPU, close on a GPU."""
    cpu_learner, config = make_learner()
    other = DDPGLearner(gym.make("Pendulum-v1"), config, placement("hybrid"), seed=0)
    device = other.placement.update_device
    for seed in range(5):
        batch = random_batch(terminated=(torch.arange(32) % 7 == 0).float(), seed=seed)
        cpu_learner.update(batch)
        other.update(Batch(*(field.to(device) for field in batch)))
        if other.syncs_weights:
            other.sync_weights()
    for mine, theirs in ((cpu_learner.critic_flat, other.critic_flat),
                         (cpu_learner.actor_flat, other.actor_flat),
                         (cpu_learner.actor_target_flat, other.actor_target_flat)):  # fmt: skip
        if device.type == "cpu":
            assert torch.equal(theirs.data, mine.data)
        else:
            torch.testing.assert_close(theirs.data.cpu(), mine.data, **UPDATE_TOLERANCE)
    torch.testing.assert_close(other.rollout_flat.data.cpu(), other.actor_flat.data.cpu())


def test_placement_comparison_reports_every_placement():
    config = DDPGConfig(**SMALL, buffer="transition", total_steps=500, learning_starts=200)
    rows = placement_comparison(config, **QUICK)
    assert [row["placement"] for row in rows] == ["all-accelerator", "hybrid", "all-cpu"]
    for row in rows:
        assert row["env_steps_per_s"] > 0
        if accelerator() is None:
            assert row["copies_per_1000_samples"] == 0
    copies = {row["placement"]: row["copies_by_phase"] for row in rows}
    assert copies["all-cpu"] == {}  # all on the CPU: never a copy
    for name in ("all-accelerator", "hybrid"):  # with an accelerator, pattern A copies
        assert (copies[name] == {}) == (accelerator() is None), (name, copies)
    for row in rows:  # turns of 50 steps from step 200 to 480: speeds that pair up
        assert len(row["chunk_steps_per_s"]) == 6 and row["first_update_seconds"] > 0


def test_exercise_solution_td_target_bootstraps_on_truncation_only():
    reward, next_q = torch.tensor([1.0, 1.0, 1.0]), torch.tensor([10.0, 10.0, 10.0])
    terminated, truncated = torch.tensor([0.0, 1.0, 0.0]), torch.tensor([0.0, 0.0, 1.0])
    expected = torch.tensor([1.0 + 0.9 * 10, 1.0, 1.0 + 0.9 * 10])
    torch.testing.assert_close(td_target(reward, next_q, terminated, truncated, 0.9), expected)


def test_interleaved_runs_learn_exactly_as_runs_alone():
    config = DDPGConfig(**SMALL, total_steps=500, learning_starts=200)
    designs, seen = ("transition", "tensor"), []
    together = train_designs(
        config, designs, chunk_steps=150, progress=lambda *step: seen.append(step), **QUICK
    )
    assert [done for done, _ in seen] == [150, 300, 450, 600, 750, 900, 950, 1000]
    assert {total for _, total in seen} == {1000}
    for design in designs:
        alone = train(replace(config, buffer=design), "all-cpu", **QUICK)
        assert together[design].episode_returns == alone.episode_returns
        assert together[design].eval_returns == alone.eval_returns


def test_each_round_of_interleaved_turns_starts_one_run_further_along(monkeypatch):
    from types import SimpleNamespace

    from hetero_tutorial.rl.ddpg import runs

    order = []

    class Fake:
        def __init__(self, name: str) -> None:
            self.name, self.steps_done = name, 0
            self.config = SimpleNamespace(total_steps=300)

        @property
        def done(self) -> bool:
            return self.steps_done >= 300

        def advance(self, steps: int) -> None:
            order.append(self.name)
            self.steps_done += steps

    monkeypatch.setattr(runs, "result_of", lambda trainer, episodes: trainer.name)
    found = runs.interleave({n: Fake(n) for n in "ABC"}, chunk_steps=100)
    assert found == {"A": "A", "B": "B", "C": "C"}
    assert "".join(order) == "ABC" + "BCA" + "CAB"


def test_an_episode_is_timed_through_its_last_step(monkeypatch):
    class OneSecondPerStep:  # advance() times a step between two readings of the clock
        now = 0.0

        def perf_counter(self) -> float:
            self.now += 1.0
            return self.now

    monkeypatch.setattr(trainer_module, "time", OneSecondPerStep())
    run = DDPGTrainer(DDPGConfig(**SMALL, total_steps=700, learning_starts=200), CPU_ONLY)
    run.advance(700)
    assert run.episode_end_steps[:3] == [200, 400, 600]  # Pendulum episodes: 200 steps
    # step 200, the first update, is on no clock (the device's warm-up): 199 s from 200 to 400
    assert run.episode_end_clock[:3] == [200.0, 399.0, 599.0]
    assert run.median_episode_seconds() == 200.0  # the episode from step 400 to 600


def test_the_first_update_is_not_timed(monkeypatch):
    """CUDA's one-off start (cuBLAS handles, lazy kernels) lands in the first update, untimed."""

    class Clock:  # each reading advances 1 s: a step, timed between two readings, takes 1 s
        now = 0.0

        def perf_counter(self) -> float:
            self.now += 1.0
            return self.now

    clock, synced = Clock(), []
    monkeypatch.setattr(trainer_module, "time", clock)
    monkeypatch.setattr(trainer_module, "synchronize", lambda device: synced.append(clock.now))
    run = DDPGTrainer(DDPGConfig(**SMALL, total_steps=500, learning_starts=200), CPU_ONLY)
    update = run.learner.step

    updates = []

    def update_with_a_slow_start(batch):
        if not updates:
            clock.now += 100.0  # the device's one-off start, paid by the first update
        updates.append(update(batch))

    run.learner.step = update_with_a_slow_start
    for _ in range(4):
        run.advance(125)
    assert len(synced) == 480  # every timed step waits for its update before the clock stops
    assert run.update_seconds == 279.0 and run.clock == 479.0  # one second per other step
    assert run.first_update_seconds == 101.0
    result = result_of(run, eval_episodes=1)
    assert result.env_steps_per_s == 1.0  # without the warm-up step: not 280 / 380 s
    assert result.chunk_steps_per_s == [1.0, 1.0, 1.0]  # turns 2-4 (turn 2 from step 201)


def test_a_result_needs_a_finished_run():
    run = DDPGTrainer(DDPGConfig(**SMALL, total_steps=500, learning_starts=200), CPU_ONLY)
    run.advance(100)
    with pytest.raises(UsageError, match="advance"):
        result_of(run, eval_episodes=1)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"buffer": "list"}, "buffer must be one of"),
        ({"total_steps": 1000, "learning_starts": 1000}, "learning_starts"),
        ({"batch_size": 512, "learning_starts": 256}, "batch_size"),
        ({"buffer": "trajectory", "batch_size": 256, "learning_starts": 256}, "open segment"),
        ({"count_copies_steps": 0}, "count_copies_steps"),
        ({"count_copies_steps": -50}, "count_copies_steps"),
        ({"buffer_capacity": 16, "batch_size": 32}, "buffer_capacity"),
    ],
)
def test_bad_settings_are_refused(overrides, message):
    with pytest.raises(UsageError, match=message):
        DDPGConfig(**overrides)


def test_float64_spaces_train_like_float32_ones(float64_env_id):
    tiny = {"total_steps": 160, "learning_starts": 40, "batch_size": 16, "hidden": 16}
    tiny |= {"count_copies_steps": 10}
    result = train(DDPGConfig(env_id=float64_env_id, **tiny), "all-cpu", **QUICK)
    assert np.isfinite(result.eval_return_mean)


def test_discrete_actions_are_refused():
    with pytest.raises(UsageError, match="continuous"):
        DDPGLearner(gym.make("CartPole-v1"), DDPGConfig(), placement("all-cpu"), seed=0)


def test_all_device_is_refused_with_the_placements_ddpg_takes():
    """DDPG steps one Gymnasium environment: batched environments on a device are PPO's."""
    takes = "Choose one of all-accelerator, hybrid, all-cpu"
    with pytest.raises(UsageError, match=f"cannot take placement 'all-device'.*{takes}"):
        train(DDPGConfig(), "all-device")
    with pytest.raises(UsageError, match="batched tensors"):
        DDPGLearner(gym.make("Pendulum-v1"), DDPGConfig(), placement("all-device"), seed=0)


@pytest.mark.slow
def test_ddpg_learns_pendulum():
    """Learning run (~30 s on an idle 2-core CPU): greedy return >= -250 within 15k steps, < 120 s.

    Seeds 0, 1 and 2 all pass by 5k steps. A 64-unit network keeps the test short;
    the 256-unit default learns as well (see ``bench ddpg --seed 0 1 2``).
    """
    start = time.perf_counter()
    result = train(DDPGConfig(hidden=64, total_steps=6_000), "all-cpu", seed=0)
    elapsed = time.perf_counter() - start
    assert result.eval_return_mean >= -250, result.eval_returns
    assert elapsed < 120
