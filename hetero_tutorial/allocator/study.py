"""The allocator against fixed plans, side by side (claims C10, C11), and in a curriculum (C13).

For every network, five plans train interleaved in one process (so drift in the
machine's speed hits them alike):

* ``fixed-rule``: the article's rule of thumb
  (:func:`~hetero_tutorial.allocator.fixed_rule.select_device`), every phase on the device it names;
* ``hybrid``, ``all-cpu``, ``all-accelerator``: the series' presets;
* ``allocator``: the placement the allocator chose from its measurements.

Every plan runs with the CPU thread count the allocator chose, so the rows
compare placements only. Plans that resolve to the same devices (all of them,
on a machine without an accelerator) still run as separate trainers, so the
spread between them shows how noisy the measurement is.

Run in order of growing width with one allocator, the MLP networks are a
curriculum: the allocator measures again at each stage (the signature changed)
and keeps its placement when a new best is within its margin.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hetero_tutorial.allocator.allocator import Allocator
from hetero_tutorial.allocator.cnn import CNNConfig
from hetero_tutorial.allocator.cnn import iteration_costs as cnn_iteration_costs
from hetero_tutorial.allocator.cnn import workload as cnn_workload
from hetero_tutorial.allocator.decision import Decision
from hetero_tutorial.allocator.fixed_rule import fixed_rule_placement
from hetero_tutorial.allocator.workload import Workload, ppo_workload
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import Placement, placement
from hetero_tutorial.core.timing import Timing
from hetero_tutorial.rl.ppo_config import PPOConfig
from hetero_tutorial.rl.ppo_runs import iteration_costs

PLANS = ("fixed-rule", "hybrid", "all-cpu", "all-accelerator", "allocator")
FIXED_PLANS = PLANS[:-1]
TOLERANCE = 0.05
"""The allocator may be this much slower than the best fixed plan (the issue's criterion)."""
DECISION_LIMIT_S = 2.0
"""The most a decision's measuring may cost, in seconds."""

IterationCosts = Callable[[Sequence[Placement], int, int | None], dict[str, Timing]]
"""Seconds per iteration of each placement: (placements, iterations, threads) -> timings."""


@dataclass(frozen=True)
class Network:
    """A network to compare plans on: its workload, what the article's rule reads, its timer."""

    workload: Workload
    hidden: int
    """the width the article's rule reads (the fully connected layer's, for a CNN)"""
    heavy_matrix_ops: bool
    """the article's undefined flag, made explicit: True for convolutions, False for small MLPs"""
    iteration_costs: IterationCosts

    @property
    def name(self) -> str:
        return self.workload.name


def mlp_network(env_id: str, hidden: int, **overrides: Any) -> Network:
    """PPO on ``env_id`` with two hidden layers of ``hidden`` units (``overrides``: PPOConfig)."""
    config = PPOConfig.tuned(env_id, hidden=hidden, **overrides)

    def costs(plans: Sequence[Placement], iterations: int, threads: int | None):
        return iteration_costs(config, plans, iterations, threads=threads)

    return Network(ppo_workload(config), hidden, False, costs)


def cnn_network(config: CNNConfig) -> Network:
    """The CNN workload (:mod:`hetero_tutorial.allocator.cnn`) under ``config``."""

    def costs(plans: Sequence[Placement], iterations: int, threads: int | None):
        return cnn_iteration_costs(config, plans, iterations, threads=threads)

    return Network(cnn_workload(config), config.hidden, True, costs)


def plans_for(network: Network, decision: Decision) -> list[Placement]:
    """The five plans of the comparison, in :data:`PLANS` order."""
    return [
        fixed_rule_placement(network.hidden, network.heavy_matrix_ops),
        placement("hybrid"),
        placement("all-cpu"),
        placement("all-accelerator"),
        decision.placement,
    ]


def _row(network: Network, plan: Placement, timing: Timing, decision: Decision) -> dict[str, Any]:
    return {
        "network": network.name,
        "kind": network.workload.kind,
        "plan": plan.name,
        "rollout": str(plan.rollout),
        "storage": str(plan.storage),
        "update": str(plan.update),
        "accelerator_missing": plan.accelerator_missing,
        "threads": decision.threads,
        "seconds_per_iteration": timing.median,
        "iqr_s": timing.iqr,
        "iterations": len(timing.samples),
        "total_seconds": sum(timing.samples),
        "decision_seconds": decision.measure_seconds if plan.name == "allocator" else None,
        "decision_cached": decision.from_cache if plan.name == "allocator" else None,
    }


def compare(
    networks: Sequence[Network],
    allocator: Allocator,
    iterations: int = 3,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[Decision], list[dict[str, Any]]]:
    """For each network in turn: the allocator decides, then the five plans run side by side.

    Returns the decisions and one row per (network, plan) with the median and
    IQR of seconds per iteration over ``iterations`` timed iterations (after one
    warm-up), and, on the allocator's row, the seconds measuring for its decision
    cost (``decision_cached``: this call was answered from the cache).
    """
    decisions, rows = [], []
    for network in networks:
        if progress is not None:
            progress(network.name)
        decision = allocator.decide(network.workload)
        plans = plans_for(network, decision)
        timings = network.iteration_costs(plans, iterations, decision.threads)
        rows += [_row(network, plan, timings[plan.name], decision) for plan in plans]
        decisions.append(decision)
    return decisions, rows


def _by_network(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    grouped: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["network"], {})[row["plan"]] = row
    missing = [name for name, plans in grouped.items() if set(plans) != set(PLANS)]
    if missing:
        raise UsageError(f"rows for {missing} lack some of the plans {', '.join(PLANS)}")
    return grouped


def _devices(row: dict[str, Any]) -> tuple[str, str, str]:
    return row["rollout"], row["storage"], row["update"]


def criterion(rows: Sequence[dict[str, Any]], tolerance: float = TOLERANCE) -> list[dict[str, Any]]:
    """Per network: the allocator's placement against the best fixed placement, and the rule's.

    Plans that ran on the same devices (with the same threads) ran the same code:
    they are one configuration, measured several times, and their spread is noise.
    So each configuration's cost is the median over its plans, and the criterion
    compares the allocator's configuration with the cheapest fixed one. Taking
    the fastest of several identical plans instead would pick the luckiest noise and
    make any choice look slower than itself.

    ``slowdown``: the allocator's configuration / the best fixed one - 1 (0 when they
    are the same configuration, negative when the allocator found a cheaper one);
    ``within_tolerance``: slowdown at most ``tolerance``; ``configurations``: how many
    distinct placements the plans resolved to (1 on a machine without an accelerator,
    where the criterion holds trivially); ``decision_ok``: measuring for the decision
    took under :data:`DECISION_LIMIT_S`; ``saved_vs_fixed_rule``: the share of the fixed
    rule's configuration's time the allocator's saves (the article reports 22% on
    Atari, C11); ``same_devices_spread``: slowest / fastest - 1 among the plans on the
    allocator's devices, the noise floor of the comparison (None without a twin).
    """
    result = []
    for network, plans in _by_network(rows).items():
        groups: dict[tuple[str, str, str], list[float]] = {}
        for row in plans.values():
            groups.setdefault(_devices(row), []).append(row["seconds_per_iteration"])
        cost = {devices: statistics.median(seconds) for devices, seconds in groups.items()}
        chosen = _devices(plans["allocator"])
        fixed_cost = {name: cost[_devices(plans[name])] for name in FIXED_PLANS}
        best = min(fixed_cost, key=fixed_cost.get)
        twins = groups[chosen]
        slowdown = cost[chosen] / fixed_cost[best] - 1
        decision_s = plans["allocator"]["decision_seconds"]
        result.append(
            {
                "network": network,
                "best_fixed": best,
                "best_fixed_s": fixed_cost[best],
                "allocator_s": cost[chosen],
                "slowdown": slowdown,
                "configurations": len(groups),
                "saved_vs_fixed_rule": 1 - cost[chosen] / fixed_cost["fixed-rule"],
                "decision_seconds": decision_s,
                "same_devices_spread": max(twins) / min(twins) - 1 if len(twins) > 1 else None,
                "within_tolerance": slowdown <= tolerance,
                "decision_ok": decision_s < DECISION_LIMIT_S,
            }
        )
    return result


def curriculum(
    decisions: Sequence[Decision], rows: Sequence[dict[str, Any]], stages: Sequence[str]
) -> dict[str, Any]:
    """The comparison read as a curriculum whose network grows through ``stages`` (network names).

    ``timeline``: per stage, what the allocator did (held or switched, its plan and
    the devices of its rollout and update,
    the seconds its measuring took) and every plan's measured seconds for the
    stage's timed iterations. ``totals``: each plan's seconds over all stages, the
    allocator's with every stage's measuring time added. ``saved``: seconds the allocator
    saved against each fixed plan (negative: it lost time).
    """
    grouped = _by_network(rows)
    by_name = {decision.workload: decision for decision in decisions}
    unknown = [stage for stage in stages if stage not in grouped or stage not in by_name]
    if unknown:
        raise UsageError(f"no comparison rows or decision for stage(s) {unknown}")
    timeline = []
    for stage in stages:
        decision, plans = by_name[stage], grouped[stage]
        timeline.append(
            {
                "stage": stage,
                "decision": decision.chosen.label,
                "rollout": str(decision.placement.rollout),
                "update": str(decision.placement.update),
                "held": decision.held,
                "decision_seconds": plans["allocator"]["decision_seconds"],
                "seconds": {plan: plans[plan]["total_seconds"] for plan in PLANS},
            }
        )
    totals = {plan: sum(step["seconds"][plan] for step in timeline) for plan in PLANS}
    totals["allocator"] += sum(step["decision_seconds"] for step in timeline)
    saved = {plan: totals[plan] - totals["allocator"] for plan in FIXED_PLANS}
    return {"stages": list(stages), "timeline": timeline, "totals": totals, "saved": saved}


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
