"""Trials of the allocator against fixed plans, side by side (C10, C11), and in a curriculum (C13).

A :class:`Trial` is one workload to try the allocator on: the network and PPO settings
the allocator measures, what the article's fixed rule reads of it, and how to build its
trainer under any placement. For every trial the allocator decides, then five *plans*
(five ways to pick a placement) are compared:

* ``fixed-rule``: the article's rule of thumb
  (:func:`~hetero_tutorial.allocator.fixed_rule.select_device`), every phase on the device it names;
* ``hybrid``, ``all-cpu``, ``all-accelerator``: the series' presets;
* ``allocator``: the placement the allocator chose from its measurements;

each at the CPU thread count the allocator chose, so they compare placements. Plans
that resolve to the same devices run the same code: each *configuration* (devices and
thread count) is timed once and stands for all its plans (on a machine without an
accelerator, one configuration stands for all five). The allocator's thread choice is
checked too: its placement also runs at every other thread count it considered. Every
configuration runs interleaved with the others, iteration by iteration
(:func:`~hetero_tutorial.studies.interleave.interleaved_iterations`), so the paired
ratios of two configurations' iterations give the spread a difference must beat.

The rows are read in :mod:`~hetero_tutorial.allocator.criterion` (per network, C10 and C11)
and :mod:`~hetero_tutorial.allocator.curriculum` (the MLP networks as one curriculum, C13);
:func:`record_fields` writes all three as a ``bench.allocator`` record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hetero_tutorial.allocator.allocator import Allocator
from hetero_tutorial.allocator.cnn import CNNConfig
from hetero_tutorial.allocator.cnn import trainer as cnn_trainer
from hetero_tutorial.allocator.cnn import workload as cnn_workload
from hetero_tutorial.allocator.criterion import PLANS, criterion
from hetero_tutorial.allocator.curriculum import curriculum
from hetero_tutorial.allocator.decision import Decision
from hetero_tutorial.allocator.fixed_rule import fixed_rule_placement
from hetero_tutorial.allocator.pricing import placement_name
from hetero_tutorial.allocator.workload import Workload, ppo_workload
from hetero_tutorial.core.configurations import devices_key, group_same
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.placement import Placement, placement
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.trainer import PPOTrainer
from hetero_tutorial.studies.interleave import interleaved_iterations


@dataclass(frozen=True)
class Trial:
    """A workload to try the plans on: what the allocator measures, what the article's rule
    reads, and its trainer under any placement."""

    workload: Workload
    hidden: int
    """the width the article's rule reads (the fully connected layer's, for a CNN)"""
    heavy_matrix_ops: bool
    """the article's undefined flag, made explicit: True for convolutions, False for small MLPs"""
    make_trainer: Callable[[Placement, int], PPOTrainer]
    """a trainer under a placement, for that many iterations"""

    @property
    def name(self) -> str:
        return self.workload.name


def mlp_trial(env_id: str, hidden: int, **overrides: Any) -> Trial:
    """PPO on ``env_id`` with two hidden layers of ``hidden`` units (``overrides``: PPOConfig)."""
    config = PPOConfig.tuned(env_id, hidden=hidden, **overrides)

    def make(placement: Placement, iterations: int) -> PPOTrainer:
        return PPOTrainer(replace(config, total_steps=iterations * config.batch_size), placement)

    return Trial(ppo_workload(config), hidden, False, make)


def cnn_trial(config: CNNConfig) -> Trial:
    """The CNN workload (:mod:`hetero_tutorial.allocator.cnn`) under ``config``."""

    def make(placement: Placement, iterations: int) -> PPOTrainer:
        return cnn_trainer(config, placement, iterations=iterations)

    return Trial(cnn_workload(config), config.hidden, True, make)


def plans_for(trial: Trial, decision: Decision) -> list[Placement]:
    """The placements of the five plans, in :data:`PLANS` order."""
    return [
        fixed_rule_placement(trial.hidden, trial.heavy_matrix_ops),
        placement("hybrid"),
        placement("all-cpu"),
        placement("all-accelerator"),
        decision.placement,
    ]


def _label(placement: Placement, threads: int | None) -> str:
    name = placement_name(placement.rollout_device, placement.update_device)
    return name if threads is None else f"{name}, {threads} thread{'s' * (threads > 1)}"


def configurations(
    trial: Trial, decision: Decision, threads: Sequence[int]
) -> list[dict[str, Any]]:
    """What to run for one trial: each distinct (devices, threads) once, with the plans it
    stands for; the allocator's devices at each of ``threads`` (its thread check)."""
    asked = [(placement, decision.threads, name) for placement, name in zip(
        plans_for(trial, decision), PLANS, strict=True)]  # fmt: skip
    if decision.threads is not None:
        others = [count for count in threads if count != decision.threads]
        asked += [(decision.placement, count, None) for count in others]
    groups = group_same(asked, lambda item: (devices_key(item[0]), item[1]))
    return [
        {
            "placement": group[0][0],
            "threads": group[0][1],
            "plans": [name for _, _, name in group if name is not None],
            "label": _label(group[0][0], group[0][1]),
        }
        for group in groups
    ]


def _row(
    trial: Trial, run: dict[str, Any], timed: dict[str, Any], decision: Decision, measured: float
):
    placement, seconds = run["placement"], timed["iteration_seconds"]
    q1, q3 = np.percentile(seconds, [25, 75])
    chosen = "allocator" in run["plans"]
    return {
        "network": trial.name,
        "kind": trial.workload.kind,
        "plan": run["plans"][0] if run["plans"] else run["label"],
        "plans": run["plans"],
        "label": run["label"],
        "rollout": str(placement.rollout_device),
        "storage": str(placement.storage_device),
        "update": str(placement.update_device),
        "accelerator_missing": placement.accelerator_missing,
        "threads": run["threads"],
        "seconds_per_iteration": float(np.median(seconds)),
        "iqr_s": float(q3 - q1),
        "iterations": len(seconds),
        "total_seconds": float(sum(seconds)),
        "iteration_seconds": list(seconds),
        "decision_seconds": measured if chosen else None,
        "decision_cached": decision.from_cache if chosen else None,
    }


@guarded("the allocator trials")
def compare(
    trials: Sequence[Trial],
    allocator: Allocator,
    iterations: int = 3,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[Decision], list[dict[str, Any]]]:
    """For each trial in turn: the allocator decides, then every configuration runs
    interleaved (see :func:`configurations`).

    Returns the decisions and one row per configuration: the plans it stands for, its
    median and IQR of seconds per iteration over ``iterations`` timed iterations (after one
    warm-up) and each of them, and, on the allocator's row, the seconds its measuring cost
    (``decision_cached``: answered from the cache, the seconds those of the call that
    measured it: every decision is paid once)."""
    names = [trial.name for trial in trials]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:  # their rows would merge into one network's, and the verdicts with them
        raise UsageError(f"each network once, please: {', '.join(repeated)} given twice or more")
    decisions, rows, paid = [], [], set()
    for trial in trials:
        if progress is not None:
            progress(trial.name)
        decision = allocator.decide(trial.workload)
        key = trial.workload.signature()  # a decision measured before this call is paid here,
        measured = 0.0 if key in paid else allocator.cache[key].measure_seconds  # once
        paid.add(key)
        runs = configurations(trial, decision, allocator.threads)
        timed = interleaved_iterations(
            lambda placement, t=trial: t.make_trainer(placement, iterations + 1),
            [(run["placement"], run["threads"]) for run in runs],
            iterations,
        )
        rows += [
            _row(trial, run, t, decision, measured) for run, t in zip(runs, timed, strict=True)
        ]
        decisions.append(decision)
    return decisions, rows


def record_fields(
    decisions: Sequence[Decision], rows: Sequence[dict[str, Any]], stages: Sequence[str]
) -> dict[str, Any]:
    """The measured fields of a ``bench.allocator`` record (the caller adds its settings)."""
    return {
        "decisions": [decision.fields() for decision in decisions],
        "rows": list(rows),
        "criterion": criterion(rows),
        "curriculum": curriculum(decisions, rows, stages),
    }
