"""DDPG runs measured: speed, copies per step, and how well they learned.

:func:`train` runs one :class:`~hetero_tutorial.rl.ddpg.trainer.DDPGTrainer` to the end;
:func:`train_side_by_side` runs one per placement, interleaving their steps a chunk at a
time, so that drift in the machine's speed hits every placement alike. Both take the
same arguments as PPO's (:mod:`hetero_tutorial.rl.ppo.runs`): a config, a placement or
its preset's name, a seed, and the threads, evaluation and progress options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import numpy as np

from hetero_tutorial.core.errors import UsageError, require_positive
from hetero_tutorial.core.placement import Placement, as_placement, require_data_devices
from hetero_tutorial.core.timing import torch_threads
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.trainer import DDPGTrainer
from hetero_tutorial.rl.evaluation import evaluate


@dataclass
class DDPGResult:
    """What one training run measured: speed, copies and learning."""

    config: DDPGConfig
    placement: str
    """the placement's name, as in :class:`~hetero_tutorial.rl.ppo.runs.PPOResult`"""
    seed: int
    threads: int | None
    """the PyTorch CPU threads the run was given (None: PyTorch's default)"""
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
        return float(np.mean(self.eval_returns)) if self.eval_returns else float("nan")

    @property
    def curve(self) -> list[tuple[int, float]]:
        """The training curve: ``(environment step, episode return)`` at each episode's end."""
        return list(zip(self.episode_end_steps, self.episode_returns, strict=True))

    def fields(self) -> dict[str, Any]:
        """The record fields of this run (see :mod:`hetero_tutorial.app.bench.ddpg`)."""
        data = asdict(self)
        data["eval_return_mean"] = self.eval_return_mean
        return data


def result_of(trainer: DDPGTrainer, eval_episodes: int) -> DDPGResult:
    """Evaluate the trainer's greedy policy and report its run (finished with ``advance``)."""
    if not trainer.done:
        raise UsageError(
            f"the run has done {trainer.steps_done} of {trainer.config.total_steps} steps; "
            "advance() it to the end before asking for its result."
        )
    config, eval_returns = trainer.config, []
    if eval_episodes:
        with torch_threads(trainer.threads):
            greedy = partial(trainer.learner.act, explore=False)  # a batch: an episode per env
            eval_returns = evaluate(greedy, config.env_id, eval_episodes, trainer.seed)
    timed_updates = trainer.timed_steps - config.learning_starts - 1
    return DDPGResult(
        config=config,
        placement=trainer.placement.name,
        seed=trainer.seed,
        threads=trainer.threads,
        env_steps_per_s=timed_updates / trainer.update_seconds,
        seconds_per_episode=trainer.median_episode_seconds(),
        train_seconds=trainer.clock,
        episode_returns=trainer.episode_returns,
        episode_end_steps=trainer.episode_end_steps,
        eval_returns=eval_returns,
        copies_per_1000_samples=1000 * trainer.copies.total().count / config.count_copies_steps,
        copies_by_phase=trainer.copies.by_phase(),
        first_update_seconds=trainer.first_update_seconds,
        chunk_steps_per_s=trainer.chunk_steps_per_s,
    )


def interleave(
    trainers: Mapping[str, DDPGTrainer],
    *,
    eval_episodes: int = 10,
    chunk_steps: int = 200,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, DDPGResult]:
    """Run ``trainers`` to the end, ``chunk_steps`` at a time in turn, each round starting
    one further along (A, B, C, then B, C, A, then C, A, B, ...).

    A slow minute of the machine then costs every run alike, and no run always follows the
    same one, so the ratios of their speeds are fair; each run keeps its own clock.
    ``progress(done, total)`` follows the environment steps of all runs together. Used by
    :func:`train_side_by_side` (one trainer per placement) and by the buffer study (one per
    buffer design).
    """
    require_positive(chunk_steps=chunk_steps)
    total = sum(trainer.config.total_steps for trainer in trainers.values())
    turns = list(trainers.values())
    while not all(trainer.done for trainer in turns):
        for trainer in turns:
            if not trainer.done:
                trainer.advance(chunk_steps)
                if progress is not None:
                    progress(sum(t.steps_done for t in trainers.values()), total)
        turns = turns[1:] + turns[:1]
    return {name: result_of(trainer, eval_episodes) for name, trainer in trainers.items()}


def train_side_by_side(
    config: DDPGConfig,
    placements: Sequence[Placement | str],
    seed: int = 0,
    *,
    threads: int | None = 1,
    eval_episodes: int = 10,
    chunk_steps: int = 200,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, DDPGResult]:
    """Train one DDPG per placement, interleaving their steps; results keyed by placement.

    The same call as PPO's :func:`~hetero_tutorial.rl.ppo.runs.train_side_by_side`: one
    config, several placements (each a :class:`Placement` or a preset's name), one seed.
    ``threads``: PyTorch CPU threads of every run (None: PyTorch's default).
    ``eval_episodes``: greedy episodes after training (0: none). ``chunk_steps``: the
    steps of each run's turn. ``progress(done, total)`` follows the environment steps.
    """
    placements = [as_placement(p) for p in placements]
    for p in placements:
        require_data_devices(p)
    names = [p.name for p in placements]
    if len(set(names)) != len(names):
        raise UsageError(f"placements must have distinct names, got {names}")
    trainers = {p.name: DDPGTrainer(config, p, seed, threads=threads) for p in placements}
    return interleave(
        trainers, eval_episodes=eval_episodes, chunk_steps=chunk_steps, progress=progress
    )


def train(
    config: DDPGConfig, placement: Placement | str, seed: int = 0, **options: Any
) -> DDPGResult:
    """Train DDPG under one ``placement`` (or preset name) and measure it (options as in
    :func:`train_side_by_side`)."""
    (result,) = train_side_by_side(config, [placement], seed, **options).values()
    return result
