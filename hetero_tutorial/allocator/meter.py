"""Measuring: cells (a phase on a device, or a copy between two) and the meter that times them.

The :class:`LiveMeter` times PPO's own code, not a model of it: the rollout's
:meth:`~hetero_tutorial.rl.ppo.collectors.GymCollector.act`,
:func:`~hetero_tutorial.rl.ppo.advantages.compute_advantages`, the storage's
:meth:`~hetero_tutorial.rl.ppo.storage.RolloutStorage.flat_batch` copy, the learner's
:attr:`~hetero_tutorial.rl.ppo.learner.PPOLearner.step` on one minibatch and the parameters'
``copy_from``, each on the device a cell names, built as
:class:`~hetero_tutorial.rl.ppo.trainer.PPOTrainer` builds them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import torch
import torch._dynamo  # see the note below the imports

from hetero_tutorial.allocator.workload import Workload
from hetero_tutorial.core.devices import synchronize
from hetero_tutorial.core.timing import measure
from hetero_tutorial.rl.ppo.advantages import compute_advantages
from hetero_tutorial.rl.ppo.collectors import GymCollector
from hetero_tutorial.rl.ppo.learner import PPOLearner
from hetero_tutorial.rl.ppo.storage import RolloutStorage
from hetero_tutorial.speed.flat import FlatParameters, PerTensorParameters

# The first optimiser a Python process builds imports torch._dynamo, which takes seconds, once.
# Training pays that anyway; importing it with this module keeps the one-off out of the first
# decision's measuring budget.

PHASE_UNITS = {
    "rollout": "vector step",  # one step of every environment at once
    "advantages": "rollout",
    "transfer": "rollout",
    "update": "gradient step",
    "weight_sync": "update",
}
"""What one measured call of each phase (:data:`hetero_tutorial.rl.ppo.trainer.PHASES`) does."""


@dataclass(frozen=True)
class Cell:
    """One thing the allocator times: a phase on a device, or a copy from one device to another."""

    phase: str
    device: str
    """where it runs (the source, for a copy)"""
    threads: int | None = None
    """PyTorch CPU threads while it runs; None where the CPU's thread count does not set the cost"""
    target: str | None = None
    """the destination of a copy"""

    @property
    def where(self) -> str:
        """The device, or ``source -> target`` for a copy, with the thread count if it is set."""
        text = self.device if self.target is None else f"{self.device} -> {self.target}"
        if self.threads is not None:
            text += f" ({self.threads} thread{'s' if self.threads > 1 else ''})"
        return text


def calls_per_iteration(phase: str, workload: Workload) -> int:
    """How many times one iteration runs ``phase``."""
    c = workload.config
    return {"rollout": c.num_steps, "update": c.gradient_steps}.get(phase, 1)


class Meter(Protocol):
    """Times cells. :class:`LiveMeter` times real work; tests inject fakes."""

    def start(self, devices: Sequence[torch.device]) -> None:
        """Start the devices (a CUDA device loads its context and libraries on first use)."""

    def prepare(self, cells: Sequence[Cell]) -> None:
        """Build and warm up everything the cells will time."""

    def sample(self, cell: Cell) -> float:
        """Seconds of one call of the cell's work."""


@dataclass
class _Parts:
    """PPO's pieces on one device, built as a trainer builds them."""

    learner: PPOLearner
    collector: GymCollector
    storage: RolloutStorage
    batch: list[torch.Tensor]
    """the storage's rollout flattened, shuffled once: minibatches are slices of it"""


class LiveMeter:
    """Times a workload's phases on this machine's devices: warmed up, synchronised, honest.

    Each device gets its own copy of the network with its own parameters, learner and
    storage; the data is random, of the workload's shapes and dtypes (what a pass
    costs does not depend on the values), and the learner's learning rate is tiny so
    that repeated steps on random data leave the weights ordinary numbers.
    :meth:`prepare` builds each cell's call and runs it once, untimed (lazy
    initialisation, caches). The first sample times one call; later samples repeat
    the call enough times to last about ``target_sample_s`` (at most ``max_inner``
    times), so the timer's resolution and the synchronisation do not dominate tiny calls.
    """

    def __init__(
        self,
        workload: Workload,
        seed: int = 0,
        target_sample_s: float = 2e-3,
        max_inner: int = 32,
    ) -> None:
        self.workload = workload
        self.config = replace(workload.config, learning_rate=1e-6, anneal_lr=False)
        self.generator = torch.Generator().manual_seed(seed)
        self.target_sample_s, self.max_inner = target_sample_s, max_inner
        self._parts: dict[torch.device, _Parts] = {}
        self._calls: dict[Cell, tuple[Callable[[], object], Callable[[], None]]] = {}
        self._inner: dict[Cell, int] = {}

    def start(self, devices: Sequence[torch.device]) -> None:
        """One rollout step and one gradient step on each device, untimed.

        The first use of a device, and of a kind of layer on it (cuBLAS for linear
        layers, cuDNN for convolutions), loads a context, libraries and kernels,
        often for over a second: a cost of the process, paid once, not of any
        placement. Paid inside a decision's budget it would leave no time to
        measure the device, and the decision would never choose it.
        """
        for device in devices:
            self._rollout(device)()
            self._update(device)()
            synchronize(device)

    def prepare(self, cells: Sequence[Cell]) -> None:
        for cell in cells:
            if cell not in self._calls:
                self._calls[cell] = self._build(cell)
                fn, sync = self._calls[cell]
                measure(fn, warmup=0, repeats=1, threads=cell.threads, sync=sync)  # the warm-up

    def sample(self, cell: Cell) -> float:
        fn, sync = self._calls[cell]
        inner = self._inner.get(cell, 1)
        seconds = measure(fn, warmup=0, repeats=1, inner=inner, threads=cell.threads, sync=sync)
        if cell not in self._inner:
            wanted = round(self.target_sample_s / max(seconds.median, 1e-9))
            self._inner[cell] = max(1, min(self.max_inner, wanted))
        return seconds.median

    def _build(self, cell: Cell) -> tuple[Callable[[], object], Callable[[], None]]:
        """The cell's call, and a hook that synchronises every device it touches."""
        devices = [torch.device(cell.device)]
        if cell.target is not None:
            devices.append(torch.device(cell.target))

        def sync() -> None:
            for device in devices:
                synchronize(device)

        return getattr(self, f"_{cell.phase}")(*devices), sync

    def _storage(self, device: torch.device, pin: bool = False) -> RolloutStorage:
        """A rollout's storage on ``device``, filled with random data."""
        c = self.config
        storage = RolloutStorage(c.num_steps, c.num_envs, self.workload.spec, device, pin)
        self.workload.fill(storage, self.generator)
        return storage

    def parts(self, device: torch.device) -> _Parts:
        """The learner, collector and storage on ``device``, built once."""
        if device not in self._parts:
            c, spec = self.config, self.workload.spec
            policy = copy.deepcopy(self.workload.network).to(device)
            params = (FlatParameters if c.flat_parameters else PerTensorParameters)(policy)
            storage = self._storage(device)
            order = torch.randperm(c.batch_size, generator=self.generator).to(device)
            batch = [t[order] for t in storage.flat_batch(device, non_blocking=False)]
            self._parts[device] = _Parts(
                PPOLearner(policy, params, c, seed=0),
                GymCollector(None, spec, policy, storage, c, device, seed=0),
                storage,
                batch,
            )
        return self._parts[device]

    def _rollout(self, device: torch.device) -> Callable[[], object]:
        """The policy's part of one vector step: observations in, act, store, actions out."""
        w, collector = self.workload, self.parts(device).collector
        obs = w.observations(w.config.num_envs, self.generator)
        noise = collector.policy.sample_noise((w.config.num_envs,), self.generator).to(device)
        return lambda: collector.act(obs, noise, 0)

    def _advantages(self, device: torch.device) -> Callable[[], None]:
        """GAE and the returns over a rollout where it is stored."""
        storage = self.parts(device).storage
        last_value = torch.randn(self.config.num_envs, generator=self.generator).to(device)
        return lambda: compute_advantages(storage, last_value, self.config)

    def _update(self, device: torch.device) -> Callable[[], object]:
        """One gradient step on a minibatch sliced from the shuffled rollout."""
        parts, size = self.parts(device), self.config.minibatch_size
        learner, rows = parts.learner, [slice(0, size)]
        return lambda: learner.step(parts.batch, rows, parts.storage, learner.clip_tensor)

    def _transfer(self, source: torch.device, target: torch.device) -> Callable[[], object]:
        """The rollout copied from its storage to the update device (pinned, as a trainer does)."""
        pinned = source.type == "cpu" and target.type == "cuda"  # as Placement.pin_storage
        storage = self._storage(source, pin=pinned)
        return lambda: storage.flat_batch(target, non_blocking=pinned)

    def _weight_sync(self, source: torch.device, target: torch.device) -> Callable[[], None]:
        """The learner's weights (on ``source``) copied into the rollout's copy (on ``target``)."""
        learner, rollout = self.parts(source).learner.params, self.parts(target).learner.params
        return lambda: rollout.copy_from(learner)
