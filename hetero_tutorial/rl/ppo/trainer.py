"""Step 7 of PPO: the iteration. Rollout, advantages, transfer, update and weight sync.

PPO (clipped surrogate, GAE) as CleanRL's ``ppo.py`` documents it; what this package adds
is *where* each phase runs, taken from a :class:`~hetero_tutorial.core.placement.Placement`.
:class:`PPOTrainer` builds the parts of a run in the order an iteration uses them, each
in a module of this folder:

1. **configuration**: :class:`~hetero_tutorial.rl.ppo.config.PPOConfig` (``config.py``);
2. **networks**: the actor-critic, placed as a learner and a rollout copy (``policy.py``);
3. **storage**: one preallocated tensor per rollout (``storage.py``);
4. **rollout**: a collector steps the environments with the rollout policy
   (``collectors.py``: Gymnasium's environments, or batched tensor ones);
5. **advantages**: GAE, computed where the rollout is stored (``advantages.py``);
6. **update**: the clipped-surrogate loss and the learner's epochs (``learner.py``);

and :meth:`PPOTrainer.iteration` runs them, each timed as a phase: rollout, advantages,
*transfer* (one batched copy of the rollout to the update device, ``non_blocking`` from
pinned memory: the hybrid placement's only big copy), update and *weight_sync* (the
learner's weights into the rollout copy). :mod:`~hetero_tutorial.rl.ppo.runs` measures runs.

Random numbers come from two seeded generators, one for the rollout (sampling noise: on
the CPU, or on batched environments' device) and one for the update (minibatch order, on
the CPU), so placements that draw on the same device make the same decisions from the same
seed: the placement changes the speed, not the learning. The overlapped engine
(:mod:`hetero_tutorial.rl.overlapped`) relies on that split too: its workers own the
rollout's stream and its learner the update's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import torch
from torch import nn
from torch.profiler import record_function

from hetero_tutorial.core.placement import Placement, require_placement
from hetero_tutorial.core.timing import PhaseTimer
from hetero_tutorial.core.transfers import CopyCounter
from hetero_tutorial.rl.envs.spec import VectorEnvs, spec_of
from hetero_tutorial.rl.ppo.advantages import compute_advantages
from hetero_tutorial.rl.ppo.collectors import BatchedCollector, make_collector, make_envs
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.learner import PPOLearner
from hetero_tutorial.rl.ppo.policy import make_policy, place_policy
from hetero_tutorial.rl.ppo.storage import RolloutStorage
from hetero_tutorial.speed import CompiledPiece, unguarded

PHASES = ("rollout", "advantages", "transfer", "update", "weight_sync")
"""The timed phases of an iteration, in the order they run (the allocator prices the same)."""

UPDATE_SEED_OFFSET = 1_000_003
"""The update's generator is seeded with ``seed + UPDATE_SEED_OFFSET``: a stream of its own."""


class PPOTrainer:
    """One PPO run's state, advanced one iteration (rollout + update) at a time.

    ``placement``: a :class:`~hetero_tutorial.core.placement.Placement` (the entry points
    of :mod:`~hetero_tutorial.rl.ppo.runs` also take a preset's name). ``envs`` and
    ``policy`` default to the config's environments (batched tensors on the placement's
    ``env_device`` if it has ``batched_envs``) and actor-critic; the allocator's CNN
    workload passes Atari frames and Nature CNNs instead.
    ``count_copies``: run the first iteration under a :class:`CopyCounter` (which
    slows it; every iteration runs the same code, so its counts hold for all). Compiled
    pieces run their arithmetic eagerly under the counter, so they compile in the second
    iteration then (:attr:`start_iterations`).
    :func:`~hetero_tutorial.rl.ppo.runs.train` runs trainers to the end and measures them.
    """

    def __init__(
        self,
        config: PPOConfig,
        placement: Placement,
        seed: int = 0,
        *,
        envs: VectorEnvs | None = None,
        policy: nn.Module | None = None,
        count_copies: bool = False,
    ) -> None:
        config.validate()
        require_placement(placement, "PPOTrainer")
        self.config, self.seed, self.placement = config, seed, placement  # 1. configuration
        self.envs = envs if envs is not None else make_envs(config, placement)
        self.spec = spec_of(self.envs, config.env_id)
        torch.manual_seed(seed)
        # 2. networks: the learner on the update device, its rollout copy on the rollout's
        policy = policy if policy is not None else make_policy(self.spec, config)
        learner_policy, rollout_policy, learner_params, self.rollout_params = place_policy(
            policy, placement, config.flat_parameters
        )
        # 3. storage, on the storage device (pinned where it feeds CUDA)
        spec, storage_device = self.spec, placement.storage_device
        self.storage = RolloutStorage(
            config.num_steps, config.num_envs, spec, storage_device, placement.pin_storage
        )
        # 4. rollout: the collector for the placement's kind of environments
        self.collector = make_collector(
            self.envs, spec, rollout_policy, self.storage, config, placement, seed
        )
        # 6. update (5, the advantages, is a function of the storage: see iteration)
        self.learner = PPOLearner(learner_policy, learner_params, config, seed + UPDATE_SEED_OFFSET)
        self.timer = PhaseTimer(placement.devices)
        self.counter = CopyCounter() if count_copies else None
        self.iteration_seconds: list[float] = []
        """wall seconds of each iteration so far"""
        self.last_stats: dict[str, float] = {}

    @property
    def global_step(self) -> int:
        """Environment steps taken so far, over all parallel environments."""
        return self.collector.global_step

    @property
    def compiled_pieces(self) -> list[CompiledPiece]:
        """What this run compiles in its compile mode: a batched rollout's step (Gymnasium's
        environments step eagerly) and the learner's minibatch steps."""
        rollout = [self.collector.step] if isinstance(self.collector, BatchedCollector) else []
        return [*rollout, self.learner.step]

    @property
    def start_iterations(self) -> int:
        """The iterations that pay one-off costs, left out of a run's steady speed: the
        first (each device's start, the copy counter), and the second too where the first
        was counted and pieces compile (they compile in the second, see above)."""
        compiling = any(piece.mode != "eager" for piece in self.compiled_pieces)
        return 2 if self.counter is not None and compiling else 1

    @property
    def done(self) -> bool:
        return len(self.iteration_seconds) >= self.config.num_iterations

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the block as phase ``name``, count its copies, and name it for torch.profiler.

        ``record_function`` costs tens of microseconds per phase when no profiler runs.
        """
        with (
            record_function(name),
            self.timer.phase(name),
            self.counter.phase(name) if self.counter else nullcontext(),
        ):
            yield

    def iteration(self, index: int) -> None:
        """One rollout, transfer, update and weight sync, each where the placement puts it."""
        self.learner.anneal(index)
        with self.phase("rollout"):
            last_value = self.collector.collect()
        self.label_rewards()
        with self.phase("advantages"):
            compute_advantages(self.storage, last_value, self.config)
        with self.phase("transfer"):
            batch = self.storage.flat_batch(
                self.placement.update_device, self.placement.pin_storage
            )
        with self.phase("update"):
            self.last_stats = self.learner.update(batch, self.storage)
        if self.collector.policy is not self.learner.policy:
            with self.phase("weight_sync"):
                self.rollout_params.copy_from(self.learner.params)  # one copy when flat

    def label_rewards(self) -> None:
        """PPO learns from the environments' rewards, which the collector stored: nothing to
        do. GAIL's trainer (:mod:`hetero_tutorial.rl.gail.trainer`) labels them here with
        its discriminator."""

    def run_iteration(self) -> None:
        """Run the next iteration (a rollout and an update), timed; the first one under the
        copy counter, if asked; once compiled pieces have compiled, with their guards
        unchecked (see speed/compiler.py's unguarded, and why that is safe here). (A *step*
        is one environment step, as in DDPG.)"""
        index = len(self.iteration_seconds)
        counting = self.counter is not None and index == 0
        began = time.perf_counter()
        with self.counter if counting else unguarded(self.compiled_pieces):
            self.iteration(index)
        self.iteration_seconds.append(time.perf_counter() - began)

    def close(self) -> None:
        """Close the environments."""
        self.envs.close()
