"""The dynamic device allocator: measure each phase on each device, then choose a placement.

The article's allocator (claim C10) times 100 forward passes of the actor on the
CPU and on the GPU, with no warm-up and no synchronisation, and compares their
ratio with a threshold looked up by the first layer's width; its table holds
only 128 and 256 (64 and 128 for CNNs), so any other width raises ``KeyError``.
This allocator instead:

* **measures** every phase whose cost depends on where it runs, with the copies
  each choice implies: a rollout step (observations in, forward pass, results
  stored, actions out), the advantages computed where the rollout is stored, the
  batched copy of the rollout to the update device, a gradient step, and the
  weight sync back to the rollout's copy of the policy. Measurements are warmed
  up, synchronised and interleaved (:mod:`hetero_tutorial.core.timing`);
* **prices** every candidate placement from those measurements and picks the
  cheapest: no thresholds, no table keyed by width;
* **remembers** decisions by the workload's signature (asking again costs
  nothing; a network that grows is measured again), keeps its current placement
  when a new best is within a margin (hysteresis, so a close call does not
  flip-flop), and stops measuring when its time budget is spent;
* **explains** itself: a table of measured costs per phase and device, and a
  sentence per phase saying why.

Without an accelerator every phase runs on the CPU, and the choice left is how
many CPU threads PyTorch uses, which it measures too.

The article's fixed rule of thumb, corrected, is here as the baseline to beat:
:func:`select_device` and :func:`fixed_rule_placement`.
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import gymnasium as gym
import torch
import torch._dynamo  # see the note below the imports
from torch import nn

from hetero_tutorial.core.devices import devices_here, synchronize, with_index
from hetero_tutorial.core.errors import UsageError, require_minibatch_fits, require_positive
from hetero_tutorial.core.placement import Placement, placement
from hetero_tutorial.core.timing import Timing, format_seconds, measure
from hetero_tutorial.rl.envs import env_spec
from hetero_tutorial.rl.flat import FlatParameters
from hetero_tutorial.rl.nets import PairedMLP
from hetero_tutorial.rl.ppo import PPOConfig, gae, make_policy

# The first optimiser a Python process builds imports torch._dynamo, which takes seconds, once.
# Training pays that anyway; importing it with this module keeps the one-off out of the first
# decision's measuring budget.

# ---------------------------------------------------------------------------------------------
# The workload: what one training iteration asks of the hardware
# ---------------------------------------------------------------------------------------------

LAYER_KINDS = {nn.Linear: "mlp", PairedMLP: "mlp", nn.Conv2d: "cnn"}
"""The layers whose cost a signature can describe, and the network kind each implies."""

POLICY_METHODS = ("sample_noise", "act", "evaluate")
"""The actor-critic interface the allocator drives (as in ``nets.DiscreteActorCritic``)."""


def network_kind(network: nn.Module) -> str:
    """``"cnn"`` for a network with convolutions, ``"mlp"`` for one of linear layers only.

    Anything else is refused: a signature describes a layer by its shapes, and
    the cost of, say, a recurrent layer also depends on a sequence length that
    the signature cannot see, so a remembered decision could silently go stale.
    """
    missing = [name for name in POLICY_METHODS if not callable(getattr(network, name, None))]
    if missing:
        raise UsageError(
            f"{type(network).__name__} has no {', '.join(missing)}: the allocator drives "
            "actor-critics with sample_noise(shape, generator), act(obs, noise) and "
            "evaluate(obs, actions), like hetero_tutorial.rl.nets.DiscreteActorCritic."
        )
    kinds, covered = set(), set()
    for module in network.modules():
        if id(module) in covered:
            continue
        is_leaf = next(module.children(), None) is None
        has_weights = next(module.parameters(recurse=False), None) is not None
        if type(module) in LAYER_KINDS:
            kinds.add(LAYER_KINDS[type(module)])
            covered.update(id(inner) for inner in module.modules())
        elif is_leaf and has_weights:
            raise UsageError(
                f"unknown network type: it has a {type(module).__name__} layer. The allocator "
                "knows MLPs (nn.Linear or nets.PairedMLP layers) and CNNs (nn.Conv2d, then "
                "nn.Linear layers)."
            )
    if not kinds:
        raise UsageError("unknown network type: it has no nn.Linear or nn.Conv2d layer.")
    return "cnn" if "cnn" in kinds else "mlp"


@dataclass(frozen=True, eq=False)
class Workload:
    """One training iteration's work, as the allocator sees it (all sizes are counts)."""

    network: nn.Module
    """the policy on the CPU: an actor-critic with ``sample_noise``, ``act`` and ``evaluate``"""
    observation_space: gym.spaces.Box
    """one environment's observations (a vector, or uint8 frames for a CNN)"""
    action_space: gym.spaces.Discrete | gym.spaces.Box
    """one environment's actions"""
    num_envs: int
    """environments stepped together: the batch of every rollout forward pass"""
    num_steps: int
    """rollout steps per environment per iteration"""
    minibatch_size: int
    """transitions per gradient step"""
    gradient_steps: int
    """gradient steps per iteration (epochs x minibatches)"""
    name: str = "workload"
    """a label for tables, e.g. ``"mlp-256"``"""

    def __post_init__(self) -> None:
        names = ("num_envs", "num_steps", "minibatch_size", "gradient_steps")
        require_positive(**{name: getattr(self, name) for name in names})
        require_minibatch_fits(self.minibatch_size, self.num_envs, self.num_steps)
        if not isinstance(self.observation_space, gym.spaces.Box):
            raise UsageError(f"observations must be a Box space, got {self.observation_space}")
        if not isinstance(self.action_space, gym.spaces.Discrete | gym.spaces.Box):
            raise UsageError(f"actions must be a Discrete or Box space, got {self.action_space}")
        network_kind(self.network)

    @property
    def kind(self) -> str:
        return network_kind(self.network)

    @property
    def batch_size(self) -> int:
        """Transitions per iteration."""
        return self.num_envs * self.num_steps

    @property
    def action_width(self) -> int:
        """Numbers stored per action: 1 for a discrete action, the vector's size otherwise."""
        if isinstance(self.action_space, gym.spaces.Discrete):
            return 1
        return self.action_space.shape[0]

    @property
    def rollout_bytes(self) -> int:
        """Bytes of one rollout: observations in their dtype, the action and six float32 scalars."""
        obs_bytes = math.prod(self.observation_space.shape) * self.observation_space.dtype.itemsize
        return self.batch_size * (obs_bytes + 4 * (self.action_width + 6))

    def signature(self) -> tuple[Any, ...]:
        """Everything that sets the cost of a phase: equal signatures, equal costs.

        The network's ``repr`` lists its layers with their widths, kernels and
        strides; the dtypes of its parameters and observations matter too.
        """
        dtypes = tuple(sorted({str(p.dtype) for p in self.network.parameters()}))
        return (
            self.kind,
            repr(self.network),
            dtypes,
            tuple(self.observation_space.shape),
            str(self.observation_space.dtype),
            self.action_width,
            self.num_envs,
            self.num_steps,
            self.minibatch_size,
            self.gradient_steps,
        )

    def short_signature(self) -> str:
        """Eight hex digits of the signature, to show in tables."""
        return hashlib.sha1(repr(self.signature()).encode()).hexdigest()[:8]

    def observations(self, count: int, generator: torch.Generator) -> torch.Tensor:
        """``count`` random observations on the CPU, in the environment's shape and dtype."""
        shape = (count, *self.observation_space.shape)
        if self.observation_space.dtype == "uint8":
            return torch.randint(0, 256, shape, dtype=torch.uint8, generator=generator)
        return torch.randn(shape, generator=generator)

    def actions(self, count: int, generator: torch.Generator) -> torch.Tensor:
        """``count`` actions as a rollout stores them: float, (count, action_width), on the CPU."""
        if isinstance(self.action_space, gym.spaces.Discrete):
            high = int(self.action_space.n)
            return torch.randint(0, high, (count, 1), generator=generator).float()
        return torch.randn((count, self.action_width), generator=generator)


def ppo_workload(config: PPOConfig, name: str | None = None) -> Workload:
    """The workload of a :class:`~hetero_tutorial.rl.ppo.PPOTrainer` run with ``config``."""
    config.validate()
    spec = env_spec(config.env_id)
    env = gym.make(config.env_id)
    observation_space, action_space = env.observation_space, env.action_space
    env.close()
    minibatches = config.batch_size // config.minibatch_size
    return Workload(
        make_policy(spec, config.hidden),
        observation_space,
        action_space,
        num_envs=config.num_envs,
        num_steps=config.num_steps,
        minibatch_size=config.minibatch_size,
        gradient_steps=config.update_epochs * minibatches,
        name=name or f"mlp-{config.hidden}",
    )


def ppo_shaped_loss(
    policy: nn.Module,
    obs: torch.Tensor,
    actions: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    returns: torch.Tensor,
    clip: float = 0.2,
) -> torch.Tensor:
    """PPO's clipped surrogate, plus the value error, minus an entropy bonus, for one minibatch.

    The forward and backward passes of :class:`~hetero_tutorial.rl.ppo.PPOTrainer`'s
    update without its options (value clipping, advantage normalisation): what a
    gradient step costs, not a tuned learner. The allocator times it, and the CNN
    workload (:mod:`hetero_tutorial.allocator.cnn`) trains with it.
    """
    logprob, entropy, value = policy.evaluate(obs, actions)
    ratio = (logprob - old_logprobs).exp()
    surrogate = torch.max(-advantages * ratio, -advantages * ratio.clamp(1 - clip, 1 + clip))
    return surrogate.mean() + 0.5 * (value - returns).pow(2).mean() - 0.01 * entropy.mean()


# ---------------------------------------------------------------------------------------------
# Measuring: cells (a phase on a device) and the meter that times them
# ---------------------------------------------------------------------------------------------

PHASES = ("rollout", "advantages", "transfer", "update", "weight_sync")
"""The phases whose cost depends on the placement, in the order an iteration runs them."""

PHASE_UNITS = {
    "rollout": "environment step",
    "advantages": "rollout",
    "transfer": "rollout",
    "update": "gradient step",
    "weight_sync": "update",
}
"""What one measured call of each phase does."""


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
    return {"rollout": workload.num_steps, "update": workload.gradient_steps}.get(phase, 1)


class Meter(Protocol):
    """Times cells. :class:`LiveMeter` times real work; tests inject fakes."""

    def start(self, devices: Sequence[torch.device]) -> None:
        """Start the devices (a CUDA device loads its context and libraries on first use)."""

    def prepare(self, cells: Sequence[Cell]) -> None:
        """Build and warm up everything the cells will time."""

    def sample(self, cell: Cell) -> float:
        """Seconds of one call of the cell's work."""


class LiveMeter:
    """Times a workload's phases on this machine's devices: warmed up, synchronised, honest.

    Each device gets its own copy of the network (and an Adam optimiser for the
    update); inputs are random tensors of the workload's shapes and dtypes, since
    what a pass costs does not depend on the values. :meth:`prepare` builds each
    cell's call and runs it once, untimed (lazy initialisation, caches). The
    first sample times one call; later samples repeat the call enough times to
    last about ``target_sample_s`` (at most ``max_inner`` times), so the timer's
    resolution and the synchronisation do not dominate tiny calls.
    """

    def __init__(
        self,
        workload: Workload,
        seed: int = 0,
        target_sample_s: float = 2e-3,
        max_inner: int = 32,
    ) -> None:
        self.workload = workload
        self.generator = torch.Generator().manual_seed(seed)
        self.target_sample_s, self.max_inner = target_sample_s, max_inner
        self._networks: dict[torch.device, nn.Module] = {}
        self._flats: dict[torch.device, FlatParameters] = {}
        self._calls: dict[Cell, tuple[Callable[[], object], Callable[[], None]]] = {}
        self._inner: dict[Cell, int] = {}

    def start(self, devices: Sequence[torch.device]) -> None:
        """One forward and backward pass of the network on each device (its copy there).

        The first use of a device, and of a kind of layer on it (cuBLAS for linear
        layers, cuDNN for convolutions), loads a context, libraries and kernels,
        often for over a second: a cost of the process, paid once, not of any
        placement. Paid inside a decision's budget it would leave no time to
        measure the device, and the decision would never choose it. A batch of two
        keeps this pass cheap once the device is started.
        """
        w, g = self.workload, torch.Generator().manual_seed(0)  # leaves self.generator alone
        for device in devices:
            network = self._network(device)  # the copy the cells will time, so built once
            obs, actions = w.observations(2, g).to(device), w.actions(2, g).to(device)
            scalars = torch.randn(3, 2, generator=g).to(device)
            ppo_shaped_loss(network, obs, actions, *scalars).backward()
            network.zero_grad(set_to_none=True)  # the cells' optimisers start from nothing
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

    def _network(self, device: torch.device) -> nn.Module:
        if device not in self._networks:
            self._networks[device] = copy.deepcopy(self.workload.network).to(device)
        return self._networks[device]

    def _flat(self, device: torch.device) -> FlatParameters:
        """The network on ``device``, flattened once.

        Flattening again would move its weights away from the tensor that an earlier
        cell's optimiser or weight sync holds.
        """
        if device not in self._flats:
            self._flats[device] = FlatParameters(self._network(device))
        return self._flats[device]

    def _rollout(self, device: torch.device) -> Callable[[], torch.Tensor]:
        """One vector step's policy work: observations in, act, store the results, actions out."""
        w, g = self.workload, self.generator
        policy = self._network(device)
        obs_cpu = w.observations(w.num_envs, g)
        noise = policy.sample_noise((w.num_envs,), g).to(device)
        obs_stored = torch.empty_like(obs_cpu, device=device)
        scalars_stored = torch.empty(w.num_envs, w.action_width + 2, device=device)

        def step() -> torch.Tensor:
            with torch.inference_mode():
                obs = obs_cpu.to(device)
                action, logprob, value = policy.act(obs, noise)
                obs_stored.copy_(obs)
                scalars_stored[:, : w.action_width] = action
                scalars_stored[:, -2] = logprob
                scalars_stored[:, -1] = value
                return action.cpu()

        return step

    def _advantages(self, device: torch.device) -> Callable[[], object]:
        """GAE over a rollout where it is stored (NumPy on the CPU, as PPOTrainer does)."""
        w, g = self.workload, self.generator
        rewards, values, dones = torch.rand(3, w.num_steps, w.num_envs, generator=g).to(device)
        dones = (dones < 0.01).float()
        last_value, out = torch.rand(w.num_envs, generator=g).to(device), torch.empty_like(rewards)
        arrays = (rewards, values, dones, last_value, out)
        if device.type == "cpu":
            arrays = tuple(array.numpy() for array in arrays)
        return lambda: gae(*arrays[:4], 0.99, 0.95, out=arrays[4])

    def _update(self, device: torch.device) -> Callable[[], None]:
        """One gradient step: gather a minibatch from the rollout on ``device``, loss, Adam."""
        w, g = self.workload, self.generator
        policy, flat = self._network(device), self._flat(device)  # as PPOTrainer steps it
        optimizer = flat.adam(lr=1e-6, eps=1e-5)
        obs, actions = w.observations(w.batch_size, g), w.actions(w.batch_size, g)
        scalars = torch.randn(3, w.batch_size, generator=g)  # old log-probs, advantages, returns
        obs, actions, scalars = obs.to(device), actions.to(device), scalars.to(device)
        index = torch.randperm(w.batch_size, generator=g)[: w.minibatch_size].to(device)

        def step() -> None:
            loss = ppo_shaped_loss(policy, obs[index], actions[index], *scalars[:, index])
            flat.zero_grad()
            loss.backward()
            flat.clip_grad_norm_(0.5)
            optimizer.step()

        return step

    def _transfer(self, source: torch.device, target: torch.device) -> Callable[[], object]:
        """The rollout (observations and scalars) copied from its storage to the update device."""
        w, g = self.workload, self.generator
        pinned = source.type == "cpu" and target.type == "cuda"  # as Placement.pin_storage
        tensors = [w.observations(w.batch_size, g), torch.zeros(w.batch_size, w.action_width + 6)]
        tensors = [t.pin_memory() if pinned else t.to(source) for t in tensors]
        return lambda: [t.to(target, non_blocking=pinned) for t in tensors]

    def _weight_sync(self, source: torch.device, target: torch.device) -> Callable[[], None]:
        """The learner's weights (on ``source``) copied into the rollout's copy (on ``target``)."""
        learner, rollout_policy = self._flat(source), self._flat(target)
        return lambda: rollout_policy.copy_from(learner)


# ---------------------------------------------------------------------------------------------
# Pricing: candidate placements from measured cells
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PhaseCost:
    """What one cell measured: seconds per call, and per iteration."""

    cell: Cell
    timing: Timing
    calls_per_iteration: int

    @property
    def seconds_per_call(self) -> float:
        return self.timing.median

    @property
    def seconds_per_iteration(self) -> float:
        return self.timing.median * self.calls_per_iteration

    def row(self) -> dict[str, Any]:
        return {
            "phase": self.cell.phase,
            "device": self.cell.device,
            "target": self.cell.target,
            "threads": self.cell.threads,
            "where": self.cell.where,
            "seconds_per_call": self.seconds_per_call,
            "iqr_s": self.timing.iqr,
            "samples": len(self.timing.samples),
            "calls_per_iteration": self.calls_per_iteration,
            "seconds_per_iteration": self.seconds_per_iteration,
        }


def plan_name(rollout: torch.device, update: torch.device) -> str:
    """The series' name for a (rollout, update) pair: a preset's name where one matches."""
    on_cpu = rollout.type == "cpu", update.type == "cpu"
    return {
        (True, True): "all-cpu",
        (True, False): "hybrid",
        (False, False): "all-accelerator",
        (False, True): "reverse-hybrid",
    }[on_cpu]


@dataclass(frozen=True)
class Candidate:
    """A placement the allocator prices: rollout and storage on one device, update on another."""

    rollout: torch.device
    update: torch.device
    threads: int | None
    """PyTorch CPU threads (None when no priced phase runs on the CPU)"""
    costs: tuple[PhaseCost, ...] = field(default=(), compare=False)
    """the measured cells this placement runs"""

    @property
    def name(self) -> str:
        return plan_name(self.rollout, self.update)

    @property
    def label(self) -> str:
        """The name, with the thread count where it is set: ``"all-cpu, 2 threads"``."""
        if self.threads is None:
            return self.name
        return f"{self.name}, {self.threads} thread{'s' if self.threads > 1 else ''}"

    def cells(self) -> list[Cell]:
        """The cells this placement runs in an iteration (copies only when the devices differ)."""
        r, u = self.rollout, self.update
        on_r, on_u = (self.threads if d.type == "cpu" else None for d in (r, u))
        cells = [
            Cell("rollout", str(r), on_r),
            Cell("advantages", str(r), on_r),
            Cell("update", str(u), on_u),
        ]
        if r != u:
            cells += [
                Cell("transfer", str(r), None, str(u)),
                Cell("weight_sync", str(u), None, str(r)),
            ]
        return cells

    def seconds(self, phase: str) -> float:
        """Seconds per iteration of ``phase`` (0 for a copy this placement does not make)."""
        return sum(c.seconds_per_iteration for c in self.costs if c.cell.phase == phase)

    @property
    def total(self) -> float:
        """Estimated seconds per iteration of the placement-dependent phases."""
        return sum(c.seconds_per_iteration for c in self.costs)

    def cost(self, phase: str) -> PhaseCost | None:
        return next((c for c in self.costs if c.cell.phase == phase), None)

    def row(self) -> dict[str, Any]:
        return {
            "plan": self.name,
            "rollout": str(self.rollout),
            "update": str(self.update),
            "threads": self.threads,
            **{f"{phase}_s": self.seconds(phase) for phase in PHASES},
            "total_s": self.total,
        }


def candidate_plans(devices: Sequence[torch.device], threads: Sequence[int]) -> Iterator[Candidate]:
    """Every (rollout, update, threads) to price: every device pair at the first thread count first.

    The thread count varies only where a CPU phase runs. This is the order of
    measuring, so a tight budget still sees every device before extra thread counts.
    """
    for count in threads:
        for rollout in devices:
            for update in devices:
                if "cpu" in (rollout.type, update.type):
                    yield Candidate(rollout, update, count)
                elif count == threads[0]:
                    yield Candidate(rollout, update, None)


def thread_choices(cores: int | None = None) -> tuple[int, ...]:
    """CPU thread counts worth trying: 1, 2, 4, ... and the number of usable cores."""
    if cores is None:
        usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        cores = len(usable) if usable else (os.cpu_count() or 1)
    choices = [1]
    while choices[-1] * 2 < cores:
        choices.append(choices[-1] * 2)
    return tuple(choices + ([cores] if cores > 1 else []))


# ---------------------------------------------------------------------------------------------
# The decision and its explanation
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """A chosen placement, with the measurements behind it and the reasons in words."""

    workload: str
    signature: str
    placement: Placement
    """the chosen devices, named ``"allocator"``"""
    threads: int | None
    """PyTorch CPU threads to train with (None: leave the setting alone)"""
    chosen: Candidate
    candidates: tuple[Candidate, ...]
    """every placement priced, cheapest first"""
    reasons: dict[str, str]
    """a sentence per phase, plus ``"plan"`` (and ``"threads"`` when that was a choice)"""
    measure_seconds: float
    """wall time spent measuring for this decision"""
    rounds: int
    """samples per measured cell (the rounds after the first are interleaved)"""
    held: bool = False
    """True when hysteresis kept the previous placement over a slightly cheaper one"""
    skipped: tuple[str, ...] = ()
    """placements left out because the budget ran out before they were measured"""
    from_cache: bool = False
    """True when the decision was remembered, not measured"""

    @property
    def costs(self) -> list[PhaseCost]:
        """Every measured cell, in phase order."""
        seen = {c.cell: c for candidate in self.candidates for c in candidate.costs}
        return sorted(seen.values(), key=lambda c: (PHASES.index(c.cell.phase), c.cell.where))

    def cost_rows(self) -> list[dict[str, Any]]:
        """The measured costs per phase and device, as table rows."""
        return [cost.row() for cost in self.costs]

    def candidate_rows(self) -> list[dict[str, Any]]:
        return [candidate.row() for candidate in self.candidates]

    def explain(self) -> str:
        return "\n".join(f"- {phase}: {reason}" for phase, reason in self.reasons.items())

    def fields(self) -> dict[str, Any]:
        """The decision as plain data for a results record."""
        return {
            "network": self.workload,
            "signature": self.signature,
            "plan": self.chosen.name,
            "rollout": str(self.placement.rollout),
            "storage": str(self.placement.storage),
            "update": str(self.placement.update),
            "threads": self.threads,
            "estimated_seconds_per_iteration": self.chosen.total,
            "measure_seconds": self.measure_seconds,
            "rounds": self.rounds,
            "held": self.held,
            "skipped": list(self.skipped),
            "costs": self.cost_rows(),
            "candidates": self.candidate_rows(),
            "reasons": self.reasons,
        }


def _phase_reason(phase: str, decision_plan: Candidate, candidates: Sequence[Candidate]) -> str:
    """Why ``phase`` runs where the plan puts it: its cost there and on every other device."""
    mine = decision_plan.cost(phase)
    unit = PHASE_UNITS[phase]
    text = (
        f"on {mine.cell.where}: {format_seconds(mine.seconds_per_call)} per {unit}, "
        f"x{mine.calls_per_iteration} = {format_seconds(mine.seconds_per_iteration)} per iteration"
    )
    others = {c.cost(phase).cell: c.cost(phase) for c in candidates if c.cost(phase) is not None}
    others.pop(mine.cell, None)
    if others:
        listed = ", ".join(
            f"{cell.where} {format_seconds(o.seconds_per_call)}" for cell, o in others.items()
        )
        text += f" (measured elsewhere: {listed})"
    cheaper = [o for o in others.values() if o.seconds_per_call < mine.seconds_per_call]
    if cheaper:
        best_alt = min(cheaper, key=lambda o: o.seconds_per_call)
        via = min(
            (
                c
                for c in candidates
                if c.cost(phase) is not None and c.cost(phase).cell == best_alt.cell
            ),
            key=lambda c: c.total,
        )
        text += (
            f". {best_alt.cell.where} is faster for this phase alone, but the best plan that "
            f"puts it there ({via.label}) costs {format_seconds(via.total)} per iteration in all"
        )
    return text + "."


def _copy_reason(plan: Candidate, workload: Workload) -> str:
    if plan.rollout == plan.update:
        return (
            f"none: rollout and update share {plan.rollout}, so the update reads the rollout "
            "where it lies and the rollout's policy is the learner itself."
        )
    transfer, sync = plan.cost("transfer"), plan.cost("weight_sync")
    return (
        f"one batched copy of the rollout ({workload.rollout_bytes:,} bytes) "
        f"{transfer.cell.where}: {format_seconds(transfer.seconds_per_call)}; one weight sync "
        f"{sync.cell.where}: {format_seconds(sync.seconds_per_call)}, per iteration."
    )


def _thread_reason(plan: Candidate, candidates: Sequence[Candidate]) -> str | None:
    same_devices = [c for c in candidates if (c.rollout, c.update) == (plan.rollout, plan.update)]
    if plan.threads is None or len(same_devices) < 2:
        return None
    listed = ", ".join(f"{c.threads}: {format_seconds(c.total)}" for c in same_devices)
    return (
        f"{plan.threads} CPU thread(s); estimated seconds per iteration by thread count: {listed}."
    )


def explain(
    plan: Candidate,
    candidates: Sequence[Candidate],
    workload: Workload,
    held: bool,
    margin: float,
    skipped: Sequence[str] = (),
) -> dict[str, str]:
    """A sentence per phase saying where it runs and why, and one for the plan as a whole."""
    best = candidates[0]
    runner_up = next((c for c in candidates if c != plan), None)
    summary = (
        f"{plan.label}: estimated {format_seconds(plan.total)} per iteration for the phases below "
        "(the environments' own steps cost the same in every plan and are left out)"
    )
    if runner_up is not None:
        summary += f"; next: {runner_up.label} at {format_seconds(runner_up.total)}"
    if held:
        summary += (
            f". Kept from the previous decision: within {margin:.0%} of the cheapest "
            f"({best.label}, {format_seconds(best.total)}), so a close call does not move training"
        )
    if all(c.rollout.type == "cpu" and c.update.type == "cpu" for c in candidates):
        summary += ". No accelerator was considered: every phase runs on the CPU"
    if skipped:
        summary += f". Not measured within the budget, so not chosen: {', '.join(skipped)}"
    reasons = {"plan": summary + "."}
    threads = _thread_reason(plan, candidates)
    if threads:
        reasons["threads"] = threads
    reasons["rollout"] = _phase_reason("rollout", plan, candidates)
    reasons["storage"] = (
        f"beside the rollout on {plan.rollout}, so each step's results are written without a "
        f"copy; advantages there: {_phase_reason('advantages', plan, candidates)}"
    )
    reasons["copies"] = _copy_reason(plan, workload)
    reasons["update"] = _phase_reason("update", plan, candidates)
    return reasons


# ---------------------------------------------------------------------------------------------
# The allocator
# ---------------------------------------------------------------------------------------------


class Allocator:
    """Chooses a placement for a workload from measurements, and remembers it by signature.

    ``devices``: the devices to consider (default: the CPU and the accelerator, if any).
    ``threads``: CPU thread counts to try (default: :func:`thread_choices`).
    ``budget_s``: seconds of measuring per decision. The first round of samples
    always runs; another starts only if it is expected to finish within the budget.
    ``margin``: hysteresis. The current placement is kept while its estimate is
    within this fraction of the cheapest.
    ``max_rounds``: at most this many samples per cell.
    ``meter``: builds the meter for a workload (default :class:`LiveMeter`; tests inject fakes).
    ``clock``: the clock the budget is kept by, in seconds.
    """

    def __init__(
        self,
        devices: Sequence[torch.device | str] | None = None,
        threads: Sequence[int] | None = None,
        budget_s: float = 1.0,
        margin: float = 0.05,
        max_rounds: int = 9,
        meter: Callable[[Workload], Meter] = LiveMeter,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.devices = [with_index(d) for d in (devices if devices is not None else devices_here())]
        self.threads = tuple(threads if threads is not None else thread_choices())
        if not self.devices or len(set(self.devices)) != len(self.devices):
            raise UsageError(
                f"give distinct devices to choose from, e.g. ['cpu']; got {self.devices}"
            )
        if not self.threads or min(self.threads) < 1:
            raise UsageError(f"thread counts must be at least 1, got {self.threads}")
        if budget_s <= 0 or margin < 0 or max_rounds < 1:
            raise UsageError(
                f"need budget_s > 0, margin >= 0, max_rounds >= 1; got {budget_s}, {margin}, "
                f"{max_rounds}"
            )
        self.budget_s, self.margin, self.max_rounds = budget_s, margin, max_rounds
        self.meter, self.clock = meter, clock
        self.cache: dict[tuple[Any, ...], Decision] = {}
        """decisions by workload signature"""
        self.current: Decision | None = None
        """the latest decision: what hysteresis holds on to"""
        self.measured = 0
        """how many decisions were measured (the rest came from the cache)"""

    def decide(self, workload: Workload) -> Decision:
        """The placement for ``workload``: remembered if its signature was seen, else measured."""
        key = workload.signature()
        if key in self.cache:
            decision = replace(self.cache[key], from_cache=True)
        else:
            decision = self._measure_and_choose(workload)
            self.cache[key] = decision
            self.measured += 1
        self.current = decision
        return decision

    def _measure_and_choose(self, workload: Workload) -> Decision:
        meter = self.meter(workload)
        meter.start(self.devices)  # before the clock: a device's start-up is not the decision's
        start = self.clock()
        plans = list(candidate_plans(self.devices, self.threads))
        samples = self._first_samples(meter, plans, start)
        rounds = self._more_rounds(meter, samples, start)
        costs = {
            cell: PhaseCost(cell, Timing(tuple(seconds)), calls_per_iteration(cell.phase, workload))
            for cell, seconds in samples.items()
        }
        measured = [plan for plan in plans if all(cell in costs for cell in plan.cells())]
        priced = [replace(plan, costs=tuple(costs[c] for c in plan.cells())) for plan in measured]
        candidates = tuple(sorted(priced, key=lambda c: c.total))
        chosen = self._hold_or_switch(candidates)
        held = chosen != candidates[0]
        skipped = tuple(plan.label for plan in plans if plan not in measured)
        return Decision(
            workload=workload.name,
            signature=workload.short_signature(),
            placement=Placement("allocator", chosen.rollout, chosen.rollout, chosen.update),
            threads=chosen.threads,
            chosen=chosen,
            candidates=candidates,
            reasons=explain(chosen, candidates, workload, held, self.margin, skipped),
            measure_seconds=self.clock() - start,
            rounds=rounds,
            held=held,
            skipped=skipped,
        )

    def _first_samples(
        self, meter: Meter, plans: Sequence[Candidate], start: float
    ) -> dict[Cell, list[float]]:
        """Warm up and sample each cell once, in the plans' order, while the budget lasts.

        Once one plan is fully measured, a cell starts only if it should fit in
        the time left (judged by the same phase measured elsewhere), and is not
        sampled if its warm-up alone used up the budget: a device or thread count
        that is slow even to warm up (a CPU shared with other work, at more
        threads than it has free cores) cannot hold up the decision. Plans with
        unmeasured cells are left out of it.
        """
        samples: dict[Cell, list[float]] = {}
        for cell in dict.fromkeys(cell for plan in plans for cell in plan.cells()):
            complete = any(all(c in samples for c in plan.cells()) for plan in plans)
            if complete and not self._fits(cell, samples, start):
                break
            meter.prepare([cell])
            if complete and self.clock() - start > self.budget_s:
                break
            samples[cell] = [meter.sample(cell)]
        return samples

    def _fits(self, cell: Cell, samples: dict[Cell, list[float]], start: float) -> bool:
        """Whether a warm-up and a sample of ``cell`` should fit in the time left.

        The guess: twice the cheapest first sample of the same phase (0 if none yet).
        """
        same_phase = [seconds[0] for other, seconds in samples.items() if other.phase == cell.phase]
        return self.clock() - start + 2 * min(same_phase, default=0.0) <= self.budget_s

    def _more_rounds(self, meter: Meter, samples: dict[Cell, list[float]], start: float) -> int:
        """Sample every measured cell once more per round, interleaved, while another round fits.

        Returns the number of samples each cell has.
        """
        rounds, last_round = 1, sum(seconds[0] for seconds in samples.values())
        while rounds < self.max_rounds and self.clock() - start + last_round <= self.budget_s:
            began = self.clock()
            for cell, seconds in samples.items():
                seconds.append(meter.sample(cell))
            last_round, rounds = self.clock() - began, rounds + 1
        return rounds

    def _hold_or_switch(self, candidates: Sequence[Candidate]) -> Candidate:
        """The cheapest candidate, unless the current placement is within the margin of it."""
        best = candidates[0]
        if self.current is None:
            return best
        held = next((c for c in candidates if c == self.current.chosen), None)
        if held is not None and held.total <= best.total * (1 + self.margin):
            return held
        return best


# ---------------------------------------------------------------------------------------------
# The article's fixed rule, corrected: the baseline to beat
# ---------------------------------------------------------------------------------------------


def select_device(hidden_dim: int, has_heavy_matrix_ops: bool) -> str:
    """The article's rule of thumb (claim C3), with its undefined flag made an explicit argument.

    Up to 128 hidden units: ``"cpu"``; above 256: ``"accelerator"``; in between,
    the accelerator only when ``has_heavy_matrix_ops`` (the article reads this name
    without ever defining it). It returns ``"accelerator"`` where the article
    returns ``'cuda'``, so that it also means MPS or XPU.
    """
    if hidden_dim < 1:
        raise UsageError(f"hidden_dim must be at least 1, got {hidden_dim}")
    if hidden_dim <= 128:
        return "cpu"
    if hidden_dim <= 256:
        return "accelerator" if has_heavy_matrix_ops else "cpu"
    return "accelerator"


def fixed_rule_placement(hidden_dim: int, has_heavy_matrix_ops: bool) -> Placement:
    """The placement the article's rule picks: everything on the device :func:`select_device` names.

    On a machine without an accelerator, "accelerator" falls back to the CPU and
    the placement says so (``accelerator_missing``).
    """
    device = select_device(hidden_dim, has_heavy_matrix_ops)
    return replace(
        placement("all-cpu" if device == "cpu" else "all-accelerator"), name="fixed-rule"
    )
