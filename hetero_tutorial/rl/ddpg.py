"""DDPG (Lillicrap et al., 2016) on a continuous-action task, under a placement, on any buffer.

The story reads top to bottom, as in CleanRL's ``ddpg_continuous_action.py``: the
configuration (:class:`DDPGConfig`), the learner's parts (:class:`DDPG`: actor,
critic, their target copies, optimisers), then the run (:class:`DDPGTrainer`), whose
``step`` is the loop body in the order things happen: act, step the environment,
store, sample, update. :func:`train` runs one configuration to the end;
:func:`train_side_by_side` interleaves several, for fair speed comparisons.

Where things run comes from the placement (:mod:`hetero_tutorial.core.placement`, all but
all-device): the learner on ``placement.update``, the actor's acting copy on ``placement.rollout``
(synced after every update when they differ), the tensor buffer on ``placement.storage``.

Speed without changing the algorithm: no per-step ``.item()``; acting under
``torch.inference_mode``; the actor loss back-propagates into the actor's weights
only (``backward(inputs=...)`` skips the critic's weight gradients, which the
actor step never uses); fused Adam; one ``lerp_`` per network's flat parameters for
the Polyak averaging of the targets; and a tensor buffer that samples with one gather.
"""

from __future__ import annotations

import copy
import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F

from hetero_tutorial.core.devices import synchronize
from hetero_tutorial.core.errors import UsageError, require_positive
from hetero_tutorial.core.placement import ENV_ON_CPU_NAMES, Placement, gym_envs_only, placement
from hetero_tutorial.core.timing import torch_threads
from hetero_tutorial.core.transfers import CopyCounter
from hetero_tutorial.rl.buffers import DESIGNS, Batch, make_buffer
from hetero_tutorial.rl.envs import evaluate
from hetero_tutorial.rl.flat import FlatParameters
from hetero_tutorial.rl.nets import DeterministicActor, QCritic

PhaseContext = Callable[[str], AbstractContextManager[Any]]


@dataclass
class DDPGConfig:
    """DDPG's settings; the defaults are tuned for Pendulum-v1 with one update per step."""

    env_id: str = "Pendulum-v1"
    """the gymnasium environment (continuous actions, vector observations)"""
    total_steps: int = 15_000
    """environment steps in the run (Pendulum episodes are 200 steps)"""
    learning_starts: int = 1_000
    """steps of uniformly random actions collected before the first update"""
    buffer: str = "tensor"
    """replay buffer design: transition (pattern A), trajectory (pattern B) or tensor"""
    buffer_capacity: int = 100_000
    """transitions the replay buffer holds"""
    segment_length: int = 20
    """transitions per stored segment, for the trajectory buffer (the article's 20)"""
    hidden: int = 256
    """units in each of the two hidden layers of the actor and of the critic"""
    batch_size: int = 256
    """transitions per update"""
    gamma: float = 0.99
    """discount factor"""
    tau: float = 0.005
    """Polyak averaging rate of the target networks, per update"""
    actor_lr: float = 1e-3
    """Adam learning rate of the actor"""
    critic_lr: float = 1e-3
    """Adam learning rate of the critic"""
    exploration_noise: float = 0.1
    """std of the Gaussian action noise, as a fraction of half the action range"""
    placement: str = "all-cpu"
    """where each phase runs: all-cpu, hybrid or all-accelerator (not all-device)"""
    threads: int | None = 1
    """PyTorch CPU threads (None: leave PyTorch's default)"""
    seed: int = 0
    """seeds the networks, the environment, the noise and the buffer"""
    eval_episodes: int = 10
    """greedy episodes (no noise) of the evaluation after training"""
    count_copies_steps: int = 100
    """last steps of the run whose host<->device copies are counted (not timed)"""

    def __post_init__(self) -> None:
        if self.buffer not in DESIGNS:
            raise UsageError(f"buffer must be one of {', '.join(DESIGNS)}; got {self.buffer!r}")
        require_positive(
            count_copies_steps=self.count_copies_steps, eval_episodes=self.eval_episodes
        )
        if not 0 < self.learning_starts < self.total_steps - self.count_copies_steps - 1:
            raise UsageError(
                f"need 0 < learning_starts ({self.learning_starts}) < total_steps "
                f"({self.total_steps}) - count_copies_steps ({self.count_copies_steps}) - 1: "
                "collect data, warm up (one untimed update), time updates, then count copies."
            )
        # The trajectory buffer cannot sample its open (last, unfinished) segment yet.
        held_back = self.segment_length if self.buffer == "trajectory" else 0
        why = " (the trajectory buffer holds back its open segment)" if held_back else ""
        if self.batch_size + held_back > self.learning_starts:
            raise UsageError(
                f"batch_size ({self.batch_size}) is too large for learning_starts "
                f"({self.learning_starts}): the first update would ask for more transitions "
                f"than can be sampled{why}. Raise learning_starts or lower batch_size."
            )
        if self.batch_size + held_back > self.buffer_capacity:
            raise UsageError(
                f"batch_size ({self.batch_size}) does not fit in buffer_capacity "
                f"({self.buffer_capacity}){why}: no number of steps could fill a batch. "
                "Raise buffer_capacity or lower batch_size."
            )


class DDPG:
    """The learner: actor and critic, their target copies and optimisers, on the update device."""

    def __init__(
        self, env: gym.Env, config: DDPGConfig, placement: Placement, noise_seed: int = 0
    ) -> None:
        space = env.action_space
        if not isinstance(space, gym.spaces.Box) or len(env.observation_space.shape) != 1:
            raise UsageError(
                f"DDPG needs continuous (Box) actions and vector observations; {config.env_id} "
                f"has {space} and observations {env.observation_space}."
            )
        gym_envs_only(placement, "DDPG")
        obs_dim, action_dim = env.observation_space.shape[0], space.shape[0]
        low = torch.as_tensor(space.low, dtype=torch.float32)  # float64 bounds would make the
        high = torch.as_tensor(space.high, dtype=torch.float32)  # actor's output float64
        self.config, self.placement = config, placement
        torch.manual_seed(config.seed)
        self.actor = DeterministicActor(obs_dim, action_dim, low, high, config.hidden)
        self.critic = QCritic(obs_dim, action_dim, config.hidden)
        self.actor.to(placement.update)
        self.critic.to(placement.update)
        self.actor_target = copy.deepcopy(self.actor).requires_grad_(False)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.rollout_actor = self.actor
        if placement.rollout != placement.update:  # a copy for acting, synced after each update
            rollout_actor = copy.deepcopy(self.actor).to(placement.rollout)
            self.rollout_actor = rollout_actor.requires_grad_(False)
        # Each network's parameters live in one flat tensor (see flat.py): zeroing, the
        # optimizer step, the Polyak averages and the rollout sync are one call each.
        self.actor_flat, self.critic_flat = FlatParameters(self.actor), FlatParameters(self.critic)
        self.actor_target_flat = FlatParameters(self.actor_target, with_grad=False)
        self.critic_target_flat = FlatParameters(self.critic_target, with_grad=False)
        self.rollout_flat = self.actor_flat
        if self.rollout_actor is not self.actor:
            self.rollout_flat = FlatParameters(self.rollout_actor, with_grad=False)
        self.actor_optimizer = self.actor_flat.adam(lr=config.actor_lr)
        self.critic_optimizer = self.critic_flat.adam(lr=config.critic_lr)
        self.low, self.high = space.low, space.high
        self.noise_std = config.exploration_noise * (space.high - space.low) / 2
        self.noise = np.random.default_rng(noise_seed)
        self._actor_params = list(self.actor.parameters())

    @torch.inference_mode()
    def act(self, obs: np.ndarray, explore: bool = True) -> np.ndarray:
        """The action for one observation (obs_dim,) or a batch (B, obs_dim), with Gaussian
        noise when exploring (a draw per action), clipped to the bounds."""
        obs_rollout = torch.as_tensor(obs, dtype=torch.float32).to(self.placement.rollout)
        action = self.rollout_actor(obs_rollout.reshape(-1, obs.shape[-1])).cpu().numpy()
        action = action.reshape(*obs.shape[:-1], -1)  # (action_dim,) for one observation
        if explore:
            action = action + self.noise.normal(0.0, self.noise_std, action.shape)
        return np.clip(action, self.low, self.high).astype(np.float32)

    def update(self, batch: Batch) -> None:
        """One critic step, one actor step, Polyak-average the targets, sync the rollout actor."""
        with torch.no_grad():
            next_q = self.critic_target(batch.next_obs, self.actor_target(batch.next_obs))
            # Bootstrap unless the episode reached a terminal state; a time limit is no end.
            td_target = batch.reward + self.config.gamma * (1.0 - batch.terminated) * next_q
        critic_loss = F.mse_loss(self.critic(batch.obs, batch.action), td_target)
        self.critic_flat.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()

        actor_loss = -self.critic(batch.obs, self.actor(batch.obs)).mean()
        self.actor_flat.zero_grad()
        actor_loss.backward(inputs=self._actor_params)  # no gradients for the critic's weights
        self.actor_optimizer.step()

        with torch.no_grad():
            self.actor_target_flat.data.lerp_(self.actor_flat.data, self.config.tau)
            self.critic_target_flat.data.lerp_(self.critic_flat.data, self.config.tau)
            if self.rollout_flat is not self.actor_flat:
                self.rollout_flat.copy_from(self.actor_flat)


@dataclass
class DDPGResult:
    """What one training run measured: speed, copies and learning."""

    config: DDPGConfig
    placement: str
    """the placement, in words"""
    env_steps_per_s: float
    """environment steps per second once updates run (one update per step), timed steps only"""
    seconds_per_episode: float
    """median wall seconds of an episode run entirely with updates (the article's "round")"""
    train_seconds: float
    """seconds of the run's own timed steps (evaluation and copy-counted steps excluded)"""
    episode_returns: list[float]
    """return of each training episode, in order (exploration noise included)"""
    episode_end_steps: list[int]
    """environment step at which each training episode ended"""
    eval_returns: list[float]
    """returns of the greedy evaluation episodes after training"""
    copies_per_1000_samples: float
    """host<->device copies per 1000 environment steps, counted over the last steps"""
    copies_by_phase: dict[str, dict[str, int]] = field(default_factory=dict)
    """copies of the counted steps by phase: count, bytes, non_blocking"""
    first_update_seconds: float | None = None
    """seconds of the first update step, the update device's warm-up (on no clock)"""
    chunk_steps_per_s: list[float] = field(default_factory=list)
    """steps/s of each turn's timed updates: interleaved runs' turns pair up (their noise)"""

    @property
    def eval_return_mean(self) -> float:
        return float(np.mean(self.eval_returns))

    @property
    def curve(self) -> list[tuple[int, float]]:
        """The training curve: ``(environment step, episode return)`` at each episode's end."""
        return list(zip(self.episode_end_steps, self.episode_returns, strict=True))

    def fields(self) -> dict[str, Any]:
        """The record fields of this run (see :mod:`hetero_tutorial.app.bench.ddpg`)."""
        data = asdict(self)
        data["eval_return_mean"] = self.eval_return_mean
        return data


def _untracked(_phase: str) -> AbstractContextManager[None]:
    return nullcontext()


class DDPGTrainer:
    """One training run that advances a chunk of steps at a time, so runs can be interleaved.

    Each run keeps its own clock (the seconds its own steps took), so interleaving
    runs to share the machine's drift fairly does not inflate anyone's times. The
    last ``count_copies_steps`` steps run under a CopyCounter and are not timed.

    The first update step (``learning_starts``) is on no clock: on an accelerator it pays the
    device's one-off start (cuBLAS, lazy kernels: 0.1-0.5 s); see ``first_update_seconds``.
    """

    def __init__(self, config: DDPGConfig, accelerator_device: str | None = None) -> None:
        self.config = config
        self.placement = placement(config.placement, accelerator_device)  # "meta": counting
        with torch_threads(config.threads):
            self.env = gym.make(config.env_id)
            self.env.action_space.seed(config.seed)
            self.agent = DDPG(self.env, config, self.placement, noise_seed=config.seed)
            self.buffer = make_buffer(
                config.buffer,
                config.buffer_capacity,
                self.env.observation_space.shape[0],
                self.env.action_space.shape[0],
                device=self.placement.storage,
                pin_memory=self.placement.pin_storage,
                segment_length=config.segment_length,
                seed=config.seed,
            )
        self.obs, _ = self.env.reset(seed=config.seed)
        self.steps_done = 0
        self.clock = 0.0
        """seconds this run's own timed steps took"""
        self.update_seconds = 0.0
        """seconds of the timed steps that updated (after the first update)"""
        self.first_update_seconds: float | None = None
        self.chunk_steps_per_s: list[float] = []
        self.episode_return = 0.0
        self.episode_returns: list[float] = []
        self.episode_end_steps: list[int] = []
        self.episode_end_clock: list[float] = []
        self.copies = CopyCounter()

    @property
    def timed_steps(self) -> int:
        """Steps before the copy-counted ones."""
        return self.config.total_steps - self.config.count_copies_steps

    @property
    def done(self) -> bool:
        return self.steps_done >= self.config.total_steps

    def advance(self, steps: int) -> None:
        """Run the next ``steps`` environment steps (fewer if the run ends first)."""
        end = min(self.steps_done + steps, self.config.total_steps)
        warmup = self.config.learning_starts  # the first update: the device's one-off start
        updates, update_seconds = 0, 0.0
        with torch_threads(self.config.threads):
            for step in range(self.steps_done, end):
                if step < self.timed_steps:
                    start = time.perf_counter()
                    episode_ended = self.step(step)
                    synchronize(self.placement.update)  # the step's queued update is the step's
                    seconds = time.perf_counter() - start
                    if step == warmup:
                        self.first_update_seconds = seconds  # kept apart, on no clock
                    else:
                        self.clock += seconds
                    if step > warmup:
                        updates, update_seconds = updates + 1, update_seconds + seconds
                else:
                    with self.copies:
                        episode_ended = self.step(step, self.copies.phase)
                if episode_ended:  # its last step's time included
                    self.episode_end_clock.append(self.clock)
        self.steps_done = end
        self.update_seconds += update_seconds
        if updates:
            self.chunk_steps_per_s.append(updates / update_seconds)

    def step(self, step: int, phase: PhaseContext = _untracked) -> bool:
        """Environment step number ``step``: act, step, store, then sample and update.

        Returns whether the step ended an episode.
        """
        config, agent = self.config, self.agent
        with phase("rollout"):
            if step < config.learning_starts:
                action = self.env.action_space.sample()
            else:
                action = agent.act(self.obs)
            next_obs, reward, terminated, truncated, _ = self.env.step(action)
        with phase("storage"):
            self.buffer.add(self.obs, action, reward, next_obs, terminated, truncated)
        self.obs = next_obs
        self.episode_return += float(reward)
        episode_ended = bool(terminated or truncated)
        if episode_ended:
            self.episode_returns.append(self.episode_return)
            self.episode_end_steps.append(step + 1)
            self.obs, _ = self.env.reset()
            self.episode_return = 0.0
        if step >= config.learning_starts:
            with phase("sample"):
                batch = self.buffer.sample(config.batch_size, self.placement.update)
            with phase("update"):
                agent.update(batch)
        return episode_ended

    def median_episode_seconds(self) -> float:
        """Median seconds of the timed episodes run entirely with timed updates (NaN if none)."""
        ends = list(zip(self.episode_end_steps, self.episode_end_clock, strict=True))
        durations = [
            end_clock - start_clock
            for (start_step, start_clock), (end_step, end_clock) in itertools.pairwise(ends)
            if start_step > self.config.learning_starts and end_step <= self.timed_steps
        ]
        return float(np.median(durations)) if durations else float("nan")

    def result(self) -> DDPGResult:
        """Evaluate the greedy policy and report the run (finish it with ``advance`` first)."""
        if not self.done:
            raise UsageError(
                f"the run has done {self.steps_done} of {self.config.total_steps} steps; "
                "advance() it to the end before asking for its result."
            )
        config = self.config
        with torch_threads(config.threads):
            eval_returns = evaluate(
                partial(self.agent.act, explore=False),  # a batch: one episode per environment
                config.env_id,
                config.eval_episodes,
                config.seed + 10_000,
            )
        return DDPGResult(
            config=config,
            placement=self.placement.describe(),
            env_steps_per_s=(self.timed_steps - config.learning_starts - 1) / self.update_seconds,
            seconds_per_episode=self.median_episode_seconds(),
            train_seconds=self.clock,
            episode_returns=self.episode_returns,
            episode_end_steps=self.episode_end_steps,
            eval_returns=eval_returns,
            copies_per_1000_samples=1000 * self.copies.total().count / config.count_copies_steps,
            copies_by_phase=self.copies.by_phase(),
            first_update_seconds=self.first_update_seconds,
            chunk_steps_per_s=self.chunk_steps_per_s,
        )


def train(config: DDPGConfig) -> DDPGResult:
    """Train DDPG with ``config`` and return its speed, copies and learning (see DDPGResult)."""
    run = DDPGTrainer(config)
    run.advance(config.total_steps)
    return run.result()


def train_side_by_side(
    configs: Mapping[str, DDPGConfig],
    chunk_steps: int = 200,
    progress: Callable[[int], None] | None = None,
) -> dict[str, DDPGResult]:
    """Train several configurations interleaved, ``chunk_steps`` at a time (A, B, C, A, ...).

    A slow minute of the machine then costs every run alike, so the ratios of their
    speeds are fair. ``progress`` is called with the steps of each chunk run.
    """
    runs = {name: DDPGTrainer(config) for name, config in configs.items()}
    while not all(run.done for run in runs.values()):
        for run in runs.values():
            if not run.done:
                before = run.steps_done
                run.advance(chunk_steps)
                if progress is not None:
                    progress(run.steps_done - before)
    return {name: run.result() for name, run in runs.items()}


def placement_comparison(
    config: DDPGConfig, placements: Sequence[str] = ENV_ON_CPU_NAMES, chunk_steps: int = 50
) -> list[dict[str, Any]]:
    """DDPG with ``config`` under each placement, interleaved: speed and copies (claims C4, C7).

    With the transition buffer (the article's pattern A) and an accelerator, the
    hybrid plan copies every field of every sampled batch from host to device: the
    "device switches per sample" that C7 blames for DDPG running slower than pure CPU.
    Turns of ``chunk_steps``: rows' ``chunk_steps_per_s`` pair up (the ratio's spread)."""
    configs = {name: replace(config, placement=name) for name in placements}
    runs = train_side_by_side(configs, chunk_steps=chunk_steps)
    return [
        {
            "placement": name,
            "env_steps_per_s": run.env_steps_per_s,
            "chunk_steps_per_s": run.chunk_steps_per_s,
            "first_update_seconds": run.first_update_seconds,
            "copies_per_1000_samples": run.copies_per_1000_samples,
            "copies_by_phase": run.copies_by_phase,
        }
        for name, run in runs.items()
    ]
