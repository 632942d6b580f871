"""End-to-end PPO on CartPole-v1: env steps per second and wall seconds to solve it, per design.

The environments' own speed (:mod:`hetero_tutorial.studies.env_throughput`) is not the
speed of training: PPO also acts, stores and updates. This study trains PPO until its
greedy policy returns :data:`SOLVED_RETURN` and times it, for each implementation:

* ``gymnasium-sync``: today's hybrid plan (notebook 03) on Gymnasium's ``SyncVectorEnv``,
  with :meth:`PPOConfig.tuned`'s settings (and its number of environments);
* ``batched-cpu``: the batched environments on the CPU, with
  :meth:`PPOConfig.tuned_batched`'s settings at each number of environments; the rest
  of the hybrid plan as it is (on a machine without an accelerator this *is* the
  ``all-device`` placement, which falls back to the CPU, and is named so);
* ``batched-<accelerator>`` (``batched-cuda``, ...): the ``all-device`` placement, the
  same settings, everything on the accelerator.

*Solved* has one meaning across the series (:func:`solved_at`): the first of
:data:`SOLVED_STREAK` greedy evaluations in a row at the goal or above. A run that reached
the goal once and fell back has not solved it. Each run trains until such a streak is
complete or the budget (``config.total_steps``) runs out. Evaluations run every
``eval_every`` environment steps (at least once per iteration) on Gymnasium's environments
(the same dynamics as the batched ones, tested step for step), and their time is not
training time. ``seconds_to_475`` is the wall time of the training iterations up to the
streak's first evaluation, the first iteration included. Before the clock, each
implementation runs one untimed iteration of its own, under the copy counter: it pays
each device's one-off start-up (CUDA's context and kernels) and counts the copies of an
iteration, which every iteration repeats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.placement import Placement, placement
from hetero_tutorial.core.timing import torch_threads
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import copies_per_step, greedy_returns
from hetero_tutorial.rl.ppo.trainer import PPOTrainer
from hetero_tutorial.studies.env_throughput import ratio_rows

ENV_ID = "CartPole-v1"
SOLVED_RETURN = 475.0
"""CartPole-v1's threshold of "solved" (Gymnasium's ``reward_threshold``): mean greedy return."""
DEFAULT_NUM_ENVS = (16, 64, 256)
"""Numbers of batched environments the study trains with by default: those at which
:meth:`PPOConfig.tuned_batched` solved CartPole on every seed tried. (At 1,024 it solved
one seed of two within its 655k-step budget: larger rollouts need more steps to learn.)"""
DEFAULT_SEEDS = (0, 1, 2)
EVAL_EVERY = 8192
"""Environment steps between greedy evaluations (and at least one iteration)."""
EVAL_EPISODES = 10
SOLVED_STREAK = 3
"""Greedy evaluations in a row at the goal that make a run solved; its time to solve runs
to the first of them."""


def solved_at(
    evaluations: Sequence[tuple[int, float]], goal: float, streak: int = SOLVED_STREAK
) -> int | None:
    """The index of the first evaluation of the first ``streak`` evaluations in a row at
    ``goal`` or above (None if there is no such streak): the series' one rule of "solved"."""
    run = 0
    for index, (_, value) in enumerate(evaluations):
        run = run + 1 if value >= goal else 0
        if run == streak:
            return index - streak + 1
    return None


def fell_back(
    evaluations: Sequence[tuple[int, float]], goal: float, streak: int = SOLVED_STREAK
) -> list[int]:
    """Env steps of the evaluations at the goal that came before the solving streak (in a
    run without one, all but a run of them the budget cut short): where the run reached the
    goal and fell back, which an evaluation grid cannot time."""
    first = solved_at(evaluations, goal, streak)
    end = len(evaluations) if first is None else first
    if first is None:
        while end and evaluations[end - 1][1] >= goal:
            end -= 1
    return [step for step, value in evaluations[:end] if value >= goal]


@dataclass(frozen=True)
class Implementation:
    """Who steps the environments, under which placement (whose ``batched_envs`` says)."""

    name: str
    placement: Placement

    @property
    def batched(self) -> bool:
        return self.placement.batched_envs


def implementations() -> list[Implementation]:
    """The implementations this machine can train with, slowest design first."""
    hybrid, found = placement("hybrid"), accelerator()
    # The batched environments on the CPU: the hybrid placement's devices with batched
    # environments; without an accelerator, that is all-device, which falls back to the CPU.
    batched_cpu = (
        replace(hybrid, batched_envs=True) if found is not None else placement("all-device")
    )
    designs = [
        Implementation("gymnasium-sync", hybrid),
        Implementation("batched-cpu", batched_cpu),
    ]
    if found is not None:
        designs.append(Implementation(f"batched-{found.type}", placement("all-device")))
    return designs


def config_for(
    implementation: Implementation,
    num_envs: int | None = None,
    env_id: str = ENV_ID,
    total_steps: int | None = None,
) -> PPOConfig:
    """The settings an implementation trains with: ``num_envs`` batched environments, or
    Gymnasium's tuned number; ``total_steps`` None keeps the tuned budget."""
    budget = {} if total_steps is None else {"total_steps": total_steps}
    if implementation.batched:
        if num_envs is None:
            raise UsageError(f"say how many batched environments {implementation.name} runs")
        return PPOConfig.tuned_batched(env_id, num_envs, **budget)
    return PPOConfig.tuned(env_id, **budget)


@dataclass
class GoalRun:
    """One run trained until its greedy return reached ``goal``, or its budget ran out."""

    config: PPOConfig
    placement: str
    batched_envs: bool
    """whether the environments were batched tensors (the placement's switch)"""
    seed: int
    goal: float
    env_steps: int
    """environment steps trained (up to the solving evaluation, or the budget)"""
    iteration_seconds: list[float]
    evaluations: list[tuple[int, float]]
    """(environment step, mean greedy return) of every evaluation"""
    phase_seconds: dict[str, float]
    copies: dict[str, dict[str, float]] = field(default_factory=dict)
    """copies per phase of the untimed first iteration (see ``copies_per_step``)"""
    evaluation_seconds: list[float] = field(default_factory=list)
    """training seconds before each evaluation (the same order as ``evaluations``)"""
    streak: int = SOLVED_STREAK

    @property
    def solving_evaluation(self) -> int | None:
        """Index of the solving streak's first evaluation (:func:`solved_at`), or None."""
        return solved_at(self.evaluations, self.goal, self.streak)

    @property
    def solved(self) -> bool:
        return self.solving_evaluation is not None

    @property
    def train_seconds(self) -> float:
        return float(sum(self.iteration_seconds))

    @property
    def seconds_to_goal(self) -> float | None:
        """Training seconds to the solving streak's first evaluation (None if unsolved)."""
        first = self.solving_evaluation
        if first is None:
            return None
        return self.evaluation_seconds[first] if self.evaluation_seconds else self.train_seconds

    @property
    def env_steps_to_goal(self) -> int | None:
        """Env steps at the solving streak's first evaluation (None if unsolved)."""
        first = self.solving_evaluation
        return None if first is None else self.evaluations[first][0]

    @property
    def env_steps_per_s(self) -> float:
        return self.env_steps / self.train_seconds

    @property
    def copies_per_env_step(self) -> float:
        return sum(phase["count_per_env_step"] for phase in self.copies.values())


def count_and_warm_up(config: PPOConfig, placement: Placement, seed: int = 0) -> dict[str, Any]:
    """One untimed iteration under the copy counter: copies per phase, devices started."""
    trainer = PPOTrainer(
        replace(config, total_steps=config.batch_size), placement, seed, count_copies=True
    )
    trainer.run_iteration()
    trainer.close()
    return copies_per_step(trainer)


def train_to_goal(
    config: PPOConfig,
    placement: Placement,
    seed: int,
    goal: float,
    eval_every: int = EVAL_EVERY,
    eval_episodes: int = EVAL_EPISODES,
    threads: int | None = 1,
    streak: int = SOLVED_STREAK,
) -> GoalRun:
    """Train until ``streak`` evaluations in a row (the mean greedy return of
    ``eval_episodes`` episodes each) reach ``goal``, or the budget ends.

    Evaluations (not timed) run whenever training crosses a multiple of ``eval_every``
    environment steps, and after the last iteration. ``threads``: PyTorch CPU threads
    (None: unchanged).
    """
    evaluations: list[tuple[int, float]] = []
    seconds: list[float] = []
    with torch_threads(threads):
        trainer = PPOTrainer(config, placement, seed)
        while not trainer.done:
            before = trainer.global_step
            trainer.run_iteration()
            if trainer.global_step // eval_every > before // eval_every or trainer.done:
                mean = float(np.mean(greedy_returns(trainer, eval_episodes)))
                evaluations.append((trainer.global_step, mean))
                seconds.append(float(sum(trainer.iteration_seconds)))
                if solved_at(evaluations, goal, streak) is not None:
                    break
        trainer.close()
    return GoalRun(
        config=config,
        placement=placement.name,
        batched_envs=placement.batched_envs,
        seed=seed,
        goal=goal,
        env_steps=trainer.global_step,
        iteration_seconds=trainer.iteration_seconds,
        evaluations=evaluations,
        phase_seconds=dict(trainer.timer.seconds),
        evaluation_seconds=seconds,
        streak=streak,
    )


@guarded("the all-device PPO race")
def measure_ppo(
    num_envs: Sequence[int] = DEFAULT_NUM_ENVS,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    total_steps: int | None = None,
    threads: int | None = 1,
    eval_every: int = EVAL_EVERY,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """One row per (implementation, number of envs, seed): steps/s and seconds to 475.

    ``gymnasium-sync`` trains with its tuned number of environments; the batched
    implementations with each of ``num_envs``. Runs go seed by seed, every design in
    turn, so drift in the machine's speed falls on all alike. ``total_steps``
    overrides every run's budget. ``progress(row)`` is called after each run.
    """
    if not num_envs or not seeds:
        raise UsageError("give at least one number of environments and one seed")
    points = []
    for design in implementations():
        sizes = [None] if not design.batched else list(num_envs)
        points += [(design, config_for(design, n, ENV_ID, total_steps)) for n in sizes]
    rows = []
    with torch_threads(threads):
        counted = [(d, c, count_and_warm_up(c, d.placement)) for d, c in points]
        for seed in seeds:
            for design, config, copies in counted:
                run = train_to_goal(
                    config, design.placement, seed, SOLVED_RETURN, eval_every, threads=None
                )
                run.copies = copies
                rows.append(ppo_row(design.name, run, threads, eval_every))
                if progress is not None:
                    progress(rows[-1])
    return rows


def evaluation_grid(config: PPOConfig, eval_every: int = EVAL_EVERY) -> int:
    """Environment steps between a run's evaluations: ``eval_every``, or one iteration's
    rollout where that is longer (evaluations come after whole iterations). A run's env
    steps (and seconds) to the goal are known only to within this grid."""
    return max(eval_every, config.batch_size)


def ppo_row(
    implementation: str, run: GoalRun, threads: int | None, eval_every: int = EVAL_EVERY
) -> dict[str, Any]:
    """The fields of one run, as ``bench device_envs`` records them."""
    return {
        "implementation": implementation,
        "placement": run.placement,
        "batched_envs": run.batched_envs,
        "env_id": run.config.env_id,
        "num_envs": run.config.num_envs,
        "seed": run.seed,
        "env_steps_per_s": run.env_steps_per_s,
        "seconds_to_475": run.seconds_to_goal,
        "solved": run.solved,
        "env_steps_to_475": run.env_steps_to_goal,
        "fell_back": fell_back(run.evaluations, run.goal, run.streak),
        "streak": run.streak,
        "env_steps": run.env_steps,
        "budget_steps": run.config.total_steps,
        "train_seconds": run.train_seconds,
        "phase_seconds": run.phase_seconds,
        "copies": run.copies,
        "copies_per_env_step": run.copies_per_env_step,
        "evaluations": run.evaluations,
        "eval_every": evaluation_grid(run.config, eval_every),
        "threads": threads,
        "config": asdict(run.config),
    }


def describe_row(row: dict[str, Any]) -> str:
    """One line on one run: whether it solved, how fast."""
    took, steps = row["seconds_to_475"], row.get("env_steps_to_475", row["env_steps"])
    result = (
        f"solved in {took:.1f} s ({steps:,} env steps)"
        if took is not None
        else f"not solved within its budget ({row['env_steps']:,} env steps)"
    )
    return (
        f"{row['implementation']} x{row['num_envs']}, seed {row['seed']}: {result}, "
        f"{row['env_steps_per_s']:,.0f} env steps/s"
    )


def goal_line(run: GoalRun) -> str:
    """One line on a :class:`GoalRun`: reached or not (:func:`solved_at`'s rule), after how
    many steps and seconds."""
    best = max(mean for _, mean in run.evaluations)
    rule = f"{run.streak} greedy evaluations in a row at {run.goal:g} or more"
    if run.solved:
        first = run.solving_evaluation
        shown = ", ".join(f"{v:.0f}" for _, v in run.evaluations[first : first + run.streak])
        return (
            f"seed {run.seed}: {rule} ({shown}), the first after {run.env_steps_to_goal:,} "
            f"env steps, {run.seconds_to_goal:.1f} s of training"
        )
    return (
        f"seed {run.seed}: not {rule} within {run.env_steps:,} env steps "
        f"({run.train_seconds:.1f} s); best greedy return {best:.0f}"
    )


def ppo_summary(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (implementation, number of envs): seeds solved, median seconds to 475 and steps/s.

    The medians of seconds and env steps to 475 are over the seeds that solved it (None
    if none did), with their range over those seeds (``*_low``, ``*_high``).
    """
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["implementation"], row["num_envs"]), []).append(row)
    summary = []
    for (name, n), runs in groups.items():
        times = [r["seconds_to_475"] for r in runs if r["solved"]]
        steps = [r.get("env_steps_to_475") or r["env_steps"] for r in runs if r["solved"]]
        summary.append(
            {
                "implementation": name,
                "num_envs": n,
                "placement": runs[0]["placement"],
                "seeds": len(runs),
                "solved": len(times),
                "median_seconds_to_475": float(np.median(times)) if times else None,
                "seconds_to_475_low": min(times, default=None),
                "seconds_to_475_high": max(times, default=None),
                "median_env_steps_to_475": float(np.median(steps)) if steps else None,
                "env_steps_to_475_low": min(steps, default=None),
                "env_steps_to_475_high": max(steps, default=None),
                "eval_every": runs[0].get("eval_every", EVAL_EVERY),
                "median_env_steps_per_s": float(np.median([r["env_steps_per_s"] for r in runs])),
                "copies_per_env_step": runs[0]["copies_per_env_step"],
            }
        )
    return summary


def record_fields(
    rows: Sequence[dict[str, Any]],
    threads: int | None,
    sync_max_envs: int,
    ppo_rows: Sequence[dict[str, Any]] | None,
) -> dict[str, Any]:
    """The fields of a ``bench.device_envs`` record: throughput rows and ratios, then PPO's."""
    ppo = None
    if ppo_rows is not None:
        ppo = {
            "env_id": ENV_ID,
            "goal": SOLVED_RETURN,
            "rows": list(ppo_rows),
            "summary": ppo_summary(ppo_rows),
        }
    return {
        "rows": list(rows),
        "ratios": ratio_rows(rows),
        "threads": threads,
        "sync_max_envs": sync_max_envs,
        "ppo": ppo,
    }
