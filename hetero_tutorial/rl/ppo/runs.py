"""PPO runs measured: speed, where the time went, copies per step, and how well they learned.

:func:`train` runs one :class:`~hetero_tutorial.rl.ppo.trainer.PPOTrainer` to the end;
:func:`train_side_by_side` runs several, interleaving their iterations, so that drift
in the machine's speed hits every placement alike (sweeps and the allocator time a few
iterations of any trainer with ``studies.interleave``).

Speeds leave out the start-up iterations: the first runs under the copy counter (a
Python call per tensor operation) and pays each device's one-off start (CUDA's context,
cuBLAS handles, lazy kernel loading: 0.1-0.5 s); where pieces compile, the first one
compiles them, or the second where the first was counted
(:attr:`~hetero_tutorial.rl.ppo.trainer.PPOTrainer.start_iterations`). ``wall_seconds``,
``env_steps_per_s`` and ``phase_seconds`` count the later iterations only, so a phase's
share of the wall time compares like with like; ``first_iteration_seconds`` and
``first_phase_seconds`` say what was left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.placement import Placement, as_placement, require_data_devices
from hetero_tutorial.core.timing import torch_threads
from hetero_tutorial.core.utilisation import UtilisationSampler
from hetero_tutorial.rl.envs.spec import EnvSpec
from hetero_tutorial.rl.evaluation import evaluate
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.trainer import PPOTrainer


@dataclass
class PPOResult:
    """What a run measured: speed, where the time went, copies, and how well it learned."""

    config: PPOConfig
    placement: str
    seed: int
    env_steps: int
    """environment steps collected, the first iteration's included (all of them trained on,
    except in an overlapped run, where a rollout dropped for its lag was collected, not trained)"""
    iteration_seconds: list[float]
    """wall seconds of every iteration, the first (copy counting, start-up) included"""
    phase_seconds: dict[str, float]
    """seconds per phase over the steady iterations, the ones ``wall_seconds`` covers"""
    copies: dict[str, dict[str, float]]
    """per phase: host<->device copies and bytes per iteration and per environment step"""
    episodes: list[tuple[int, float]]
    """(environment step, return) of every training episode that finished"""
    evaluations: list[tuple[int, float]]
    """(environment step, mean greedy return) of the evaluations made during training"""
    eval_returns: list[float]
    """greedy returns of the evaluation episodes after training"""
    utilisation: dict[str, Any]
    update_stats: dict[str, float]
    """diagnostics of the last minibatch: approximate KL divergence, clip fraction, loss"""
    threads: int
    policy: nn.Module = field(repr=False)
    """the trained learner (on the update device)"""
    first_phase_seconds: dict[str, float] = field(default_factory=dict)
    """seconds per phase of the start-up iterations, left out of ``phase_seconds``"""
    start_iterations: int = 1
    """how many iterations were start-up (see the module docstring)"""

    @property
    def steady_iterations(self) -> list[float]:
        """Every iteration's seconds after the start-up ones (all if there are no more)."""
        return self.iteration_seconds[self.start_iterations :] or self.iteration_seconds

    @property
    def wall_seconds(self) -> float:
        """Seconds of the steady iterations (see the module docstring)."""
        return sum(self.steady_iterations)

    @property
    def env_steps_per_s(self) -> float:
        """Environment steps per second over the steady iterations."""
        return self.config.batch_size * len(self.steady_iterations) / self.wall_seconds

    @property
    def median_iteration_seconds(self) -> float:
        """Median wall time of a steady iteration."""
        return float(np.median(self.steady_iterations))

    @property
    def eval_return_mean(self) -> float:
        return float(np.mean(self.eval_returns)) if self.eval_returns else float("nan")

    @property
    def copies_per_env_step(self) -> float:
        return sum(phase["count_per_env_step"] for phase in self.copies.values())

    def fields(self) -> dict[str, Any]:
        """The run as the fields of a ``bench.ppo`` results record."""
        return {
            "env_id": self.config.env_id,
            "placement": self.placement,
            "seed": self.seed,
            "config": asdict(self.config),
            "threads": self.threads,
            "env_steps": self.env_steps,
            "wall_seconds": self.wall_seconds,
            "first_iteration_seconds": self.iteration_seconds[0],
            "start_iterations": self.start_iterations,
            "env_steps_per_s": self.env_steps_per_s,
            "eval_return_mean": self.eval_return_mean,
            "eval_returns": self.eval_returns,
            "phase_seconds": self.phase_seconds,
            "first_phase_seconds": self.first_phase_seconds,
            "iteration_seconds": self.iteration_seconds,
            "median_iteration_seconds": self.median_iteration_seconds,
            "copies": self.copies,
            "copies_per_env_step": self.copies_per_env_step,
            "episodes": self.episodes,
            "evaluations": self.evaluations,
            "utilisation": self.utilisation,
            "update_stats": self.update_stats,
        }


def greedy_returns(trainer: PPOTrainer, episodes: int) -> list[float]:
    """Returns of ``episodes`` greedy episodes of the trainer's policy, on fresh environments.

    Seeded apart from training (:mod:`~hetero_tutorial.rl.evaluation`). Trainers on batched
    environments are evaluated on Gymnasium's too: the same dynamics (tested step for step).
    """
    policy, device = trainer.collector.policy, trainer.placement.rollout_device
    return policy_greedy_returns(policy, device, trainer.spec, episodes, trainer.seed)


def policy_greedy_returns(
    policy: nn.Module, device: torch.device, spec: EnvSpec, episodes: int, seed: int
) -> list[float]:
    """Returns of ``episodes`` greedy episodes of ``policy`` (on ``device``) in ``spec``'s env.

    Seeded as :func:`greedy_returns`, from the run's ``seed``: any run's policy, an
    overlapped run's too.
    """

    def greedy_actions(obs: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            actions = policy.greedy(torch.from_numpy(obs).to(device)).cpu().numpy()
        return actions if spec.discrete else np.clip(actions, spec.action_low, spec.action_high)

    return evaluate(greedy_actions, spec.env_id, episodes, seed)


def copies_per_step(trainer: PPOTrainer) -> dict[str, dict[str, float]]:
    """Copies per phase, per iteration and per environment step, from the counted iteration."""
    if trainer.counter is None:
        return {}
    steps = trainer.config.batch_size
    return {
        phase: {
            "count_per_iteration": stats["count"],
            "bytes_per_iteration": stats["bytes"],
            "count_per_env_step": stats["count"] / steps,
            "bytes_per_env_step": stats["bytes"] / steps,
        }
        for phase, stats in trainer.counter.by_phase().items()
    }


class _Run:
    """A trainer and the evaluations made of it while it trains."""

    def __init__(self, trainer: PPOTrainer, eval_every: int, eval_episodes: int) -> None:
        self.trainer, self.eval_every, self.eval_episodes = trainer, eval_every, eval_episodes
        self.evaluations: list[tuple[int, float]] = []
        self.first_phases: dict[str, float] = {}
        """the phase timer's seconds after the start-up iterations"""
        if eval_every:
            self.evaluate()

    def run_iteration(self) -> None:
        """The trainer's next iteration; the phase seconds of the start-up ones are noted apart."""
        self.trainer.run_iteration()
        if len(self.trainer.iteration_seconds) == self.trainer.start_iterations:
            self.first_phases = dict(self.trainer.timer.seconds)

    def evaluate(self) -> None:
        mean = float(np.mean(greedy_returns(self.trainer, self.eval_episodes or 10)))
        self.evaluations.append((self.trainer.global_step, mean))

    def evaluate_if_due(self) -> None:
        """Evaluate if the last iteration crossed a multiple of ``eval_every`` steps.

        Called outside the iteration's timer and utilisation section: greedy episodes
        step the CPU, and that is not training.
        """
        due = self.eval_every and (
            self.trainer.global_step // self.eval_every > self.evaluations[-1][0] // self.eval_every
        )
        if due:
            self.evaluate()

    def result(self, utilisation: dict[str, Any], threads: int) -> PPOResult:
        t = self.trainer
        eval_returns = greedy_returns(t, self.eval_episodes) if self.eval_episodes else []
        t.close()
        # the iterations wall_seconds covers: all after the start-up ones, unless no more ran
        first = self.first_phases if len(t.iteration_seconds) > t.start_iterations else {}
        steady = {phase: sec - first.get(phase, 0.0) for phase, sec in t.timer.seconds.items()}
        return PPOResult(
            config=t.config,
            placement=t.placement.name,
            seed=t.seed,
            env_steps=t.global_step,
            iteration_seconds=t.iteration_seconds,
            phase_seconds=steady,
            copies=copies_per_step(t),
            episodes=t.collector.episodes,
            evaluations=self.evaluations,
            eval_returns=eval_returns,
            utilisation=utilisation,
            update_stats=t.last_stats,
            threads=threads,
            policy=t.learner.policy,
            first_phase_seconds=first,
            start_iterations=t.start_iterations,
        )


@guarded("the side-by-side PPO run")
def train_side_by_side(
    config: PPOConfig,
    placements: Sequence[Placement | str],
    seed: int = 0,
    *,
    count_copies: bool = True,
    threads: int | None = None,
    eval_episodes: int = 10,
    eval_every: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, PPOResult]:
    """Train one PPO per placement, interleaving their iterations; results keyed by placement.

    ``count_copies``: count each trainer's copies in its first iteration. ``threads``:
    PyTorch CPU threads (None: unchanged). ``eval_episodes``: greedy episodes after
    training (0: none). ``eval_every``: also evaluate greedily before training and
    every this many environment steps (0: never), for a learning curve; evaluation
    time is not training time. ``progress(done, total)`` follows the iterations.
    A placement may be given by its preset's name (``"hybrid"``): this entry point turns
    names into placements, once, for everything it builds.
    """
    placements = [as_placement(p) for p in placements]
    for p in placements:
        require_data_devices(p)
    names = [p.name for p in placements]
    if len(set(names)) != len(names):
        raise UsageError(f"placements must have distinct names, got {names}")
    gpus = [p.update_device for p in placements if p.update_device.type == "cuda"]
    with torch_threads(threads):
        with UtilisationSampler(gpus[0] if gpus else None) as sampler:
            trainers = [PPOTrainer(config, p, seed, count_copies=count_copies) for p in placements]
            runs = [_Run(trainer, eval_every, eval_episodes) for trainer in trainers]
            for index in range(config.num_iterations):
                for run in runs:
                    with sampler.section(run.trainer.placement.name):  # training only
                        run.run_iteration()
                    run.evaluate_if_due()
                if progress is not None:
                    progress(index + 1, config.num_iterations)
        # Summaries only now: leaving the sampler collects its last GPU samples.
        used = torch.get_num_threads()
        return {
            name: run.result(sampler.summary(name), used)
            for name, run in zip(names, runs, strict=True)
        }


def train(
    config: PPOConfig, placement: Placement | str, seed: int = 0, **options: Any
) -> PPOResult:
    """Train PPO under one ``placement`` (or preset name) and measure it (options as in
    :func:`train_side_by_side`)."""
    (result,) = train_side_by_side(config, [placement], seed, **options).values()
    return result
