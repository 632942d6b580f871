"""Step 3 of DDPG: the run. One environment step and one update at a time, each phase where
the placement puts it.

:meth:`DDPGTrainer.step` is the loop body of CleanRL's ``ddpg_continuous_action.py`` in
the order things happen: act, step the environment, store, sample, update, sync the
acting copy. Where things run comes from the placement (all but ``all-device``): the
learner on its ``update_device``, the actor's acting copy on its ``rollout_device``, the
tensor buffer on its ``storage_device``. :meth:`DDPGTrainer.advance` runs a chunk of
steps, so that :mod:`~hetero_tutorial.rl.ddpg.runs` can interleave runs.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import gymnasium as gym
import numpy as np

from hetero_tutorial.core.devices import synchronize
from hetero_tutorial.core.placement import Placement, require_placement
from hetero_tutorial.core.timing import torch_threads
from hetero_tutorial.core.transfers import CopyCounter
from hetero_tutorial.rl.buffers import make_buffer
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.learner import DDPGLearner

PHASES = ("rollout", "store", "sample", "update", "weight_sync")
"""The phases of a step, in the order they run (the copy counter sorts copies by them)."""

PhaseContext = Callable[[str], AbstractContextManager[Any]]


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

    def __init__(
        self, config: DDPGConfig, placement: Placement, seed: int = 0, *, threads: int | None = 1
    ) -> None:
        require_placement(placement, "DDPGTrainer")  # a "meta" one too: counting copies
        self.config, self.placement, self.seed, self.threads = config, placement, seed, threads
        with torch_threads(threads):
            self.env = gym.make(config.env_id)
            self.env.action_space.seed(seed)
            self.learner = DDPGLearner(self.env, config, placement, seed)
            self.buffer = make_buffer(
                config.buffer,
                config.buffer_capacity,
                self.env.observation_space.shape[0],
                self.env.action_space.shape[0],
                device=placement.storage_device,
                pin_memory=placement.pin_storage,
                segment_length=config.segment_length,
                seed=seed,
            )
        self.obs, _ = self.env.reset(seed=seed)
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
        with torch_threads(self.threads):
            for step in range(self.steps_done, end):
                if step < self.timed_steps:
                    start = time.perf_counter()
                    episode_ended = self.step(step)
                    synchronize(self.placement.update_device)  # the step's queued update is its
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
        """Environment step number ``step``, its phases in the order they run (:data:`PHASES`):
        act and step the environment, store, then sample, update and sync the weights.

        Returns whether the step ended an episode.
        """
        config, learner = self.config, self.learner
        with phase("rollout"):
            if step < config.learning_starts:
                action = self.env.action_space.sample()
            else:
                action = learner.act(self.obs)
            next_obs, reward, terminated, truncated, _ = self.env.step(action)
        with phase("store"):
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
                batch = self.buffer.sample(config.batch_size, self.placement.update_device)
            with phase("update"):
                learner.step(batch)
            if learner.syncs_weights:
                with phase("weight_sync"):
                    learner.sync_weights()
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
