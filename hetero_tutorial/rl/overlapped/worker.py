"""An overlapped run's rollout worker: PPO's own rollout, in a process of its own.

A :class:`RolloutWorker` owns what the rollout needs and nothing else: CPU vector
environments, a CPU copy of the actor (its weights one flat tensor, loaded from the
learner's) and PPO's :class:`~hetero_tutorial.rl.ppo.collectors.GymCollector`.
:meth:`RolloutWorker.run` is one rollout, in the order it happens: note how long the worker
waited for this request, load the newest weights, ``GymCollector.collect`` into a storage
laid out as :class:`~hetero_tutorial.rl.ppo.storage.RolloutStorage`,
``compute_advantages`` there, and report. It is the same code in both engines: the process backend
(:mod:`~hetero_tutorial.rl.overlapped.process_engine`) hands it a shared-memory slot and the
shared weights; the Ray backend (:mod:`~hetero_tutorial.rl.overlapped.ray_engine`) its own
storage and the weights Ray delivered. The engines only move rollouts and weights.

Times are ``time.time()``: one clock for every process of the machine (and, with
NTP, close across the machines of a cluster), so the timelines of the learner and
of every worker can be drawn on one axis. ``time.perf_counter`` is per process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from hetero_tutorial.rl.envs.spec import spec_of
from hetero_tutorial.rl.envs.vector import make_vector_env
from hetero_tutorial.rl.ppo.advantages import compute_advantages
from hetero_tutorial.rl.ppo.collectors import GymCollector
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.policy import make_policy
from hetero_tutorial.rl.ppo.storage import RolloutStorage
from hetero_tutorial.speed import FlatParameters

CLOCK = time.time
"""An overlapped run's one clock (seconds): system-wide, unlike ``time.perf_counter``."""

WORKER_SEED_STRIDE = 100_003
"""Worker ``i`` seeds its collector (sampling noise, environment resets) with
``seed + i * WORKER_SEED_STRIDE``: worker 0 gets ``seed`` itself, as PPOTrainer's
collector does, so one worker makes the sequential placement's rollouts."""

WAIT_KINDS = ("wait_slot", "wait_weights")
"""Why a worker waited: for a free rollout slot, or for weights new enough for the lag bound."""

LoadWeights = Callable[[torch.Tensor, int, int], int]
"""``load(target, have, wanted) -> version``: copy weight version ``wanted`` into ``target``
(unless it holds version ``have`` = ``wanted`` already; where that version has been
overwritten, the newest), and return the version ``target`` now holds."""

Hook = Callable[[int, int], None]
"""A test's hook, called as ``hook(worker, rollout_index)`` before each rollout."""


class WorkerFailed(RuntimeError):
    """A rollout worker raised or died. The run stops; the message names the worker and why."""


def worker_seed(seed: int, worker: int) -> int:
    """The collector seed of worker ``worker`` in a run seeded ``seed``."""
    return seed + worker * WORKER_SEED_STRIDE


@dataclass(frozen=True)
class RolloutRequest:
    """The learner's go-ahead for one rollout: which one, into which slot, and why it waited."""

    index: int
    """the rollout's number in the run, 0, 1, ... in the order they were started"""
    worker: int
    slot: int
    slot_free_since: float
    """when the slot became free (CLOCK seconds)"""
    weights_since: float
    """when the lag bound first allowed this rollout to start (CLOCK seconds)"""
    version: int
    """the weight version to collect with: the learner's newest when it sent the request"""


@dataclass
class RolloutReport:
    """What a worker says about a rollout it filled (the rollout itself is in the slot)."""

    index: int
    worker: int
    slot: int
    version: int
    """the weight version the rollout was collected with"""
    episodes: list[tuple[int, float]]
    """(environment step within this rollout, 1-based, return) of episodes that ended in it"""
    intervals: list[tuple[str, float, float]] = field(default_factory=list)
    """(kind, start, end) of this worker since its last report: its wait, then the rollout"""
    cpu_seconds: float = 0.0
    """the worker process's CPU time so far"""


class RolloutWorker:
    """One worker's environments, actor copy and collector; :meth:`run` fills one rollout."""

    def __init__(self, config: PPOConfig, seed: int, index: int, hook: Hook | None = None) -> None:
        self.config, self.index, self.hook = config, index, hook
        self.envs = make_vector_env(config.env_id, config.num_envs)
        self.spec = spec_of(self.envs, config.env_id)
        policy = make_policy(self.spec, config)  # its weights are replaced by the learner's
        self.params = FlatParameters(policy, with_grad=False)
        self.version = -1
        """the weight version the actor copy holds (-1: none loaded yet)"""
        cpu = torch.device("cpu")
        storage = None  # each rollout names its storage (a slot)
        self.collector = GymCollector(
            self.envs, self.spec, policy, storage, config, cpu, worker_seed(seed, index)
        )
        self.idle_since = CLOCK()

    def new_storage(self) -> RolloutStorage:
        """A rollout storage of this worker's shape, on the CPU (the Ray backend's own)."""
        c = self.config
        return RolloutStorage(c.num_steps, c.num_envs, self.spec, torch.device("cpu"), False)

    def run(
        self, request: RolloutRequest, storage: RolloutStorage, load: LoadWeights
    ) -> RolloutReport:
        """One rollout into ``storage``, in the order it happens; returns its report."""
        began = CLOCK()
        # The wait just ended: the later of the two conditions the learner waited for is
        # what this worker was waiting on.
        reason = WAIT_KINDS[request.weights_since > request.slot_free_since]
        intervals = [(reason, self.idle_since, began)]
        self.version = load(self.params.data, self.version, request.version)
        if self.hook is not None:
            self.hook(self.index, request.index)  # a test's: fail, or be slow
        c = self.collector
        c.storage = storage
        steps_before, episodes_before = c.global_step, len(c.episodes)
        last_value = c.collect()  # PPO's rollout, unchanged
        compute_advantages(storage, last_value, self.config)  # where the rollout is stored
        self.idle_since = CLOCK()
        intervals.append(("rollout", began, self.idle_since))
        episodes = [(step - steps_before, ret) for step, ret in c.episodes[episodes_before:]]
        return RolloutReport(
            request.index,
            self.index,
            request.slot,
            self.version,
            episodes,
            intervals,
            time.process_time(),
        )

    def close(self) -> None:
        self.envs.close()
