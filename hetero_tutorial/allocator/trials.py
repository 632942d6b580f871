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

Run in order of growing width with one allocator, the MLP networks are a
curriculum: the allocator measures again at each stage (the signature changed)
and keeps its placement when a new best is within its margin.
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
from hetero_tutorial.allocator.decision import Decision
from hetero_tutorial.allocator.fixed_rule import fixed_rule_placement
from hetero_tutorial.allocator.pricing import placement_name
from hetero_tutorial.allocator.workload import Workload, ppo_workload
from hetero_tutorial.core.configurations import devices_key, group_same
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import NOT_JUDGED, guarded, withheld
from hetero_tutorial.core.placement import Placement, placement
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.trainer import PPOTrainer
from hetero_tutorial.studies.interleave import interleaved_iterations
from hetero_tutorial.studies.threads import MIN_PAIRS

PLANS = ("fixed-rule", "hybrid", "all-cpu", "all-accelerator", "allocator")
FIXED_PLANS = PLANS[:-1]
TOLERANCE = 0.05
"""The allocator may be this much slower than the best fixed plan and still pass its criterion."""
DECISION_LIMIT_S = 2.0
"""The most a decision's measuring may cost, in seconds."""


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


def by_plan(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per network, the row each of the five plans ran as (several plans may share a row)."""
    grouped: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        plans = grouped.setdefault(row["network"], {})
        plans.update(dict.fromkeys(row.get("plans", [row["plan"]]), row))
    missing = [name for name, plans in grouped.items() if set(plans) != set(PLANS)]
    if missing:
        raise UsageError(f"rows for {missing} lack some of the plans {', '.join(PLANS)}")
    return grouped


def _ratio(top: dict[str, Any], bottom: dict[str, Any]) -> Spread:
    """``top``'s seconds per iteration over ``bottom``'s, spread by their paired iterations;
    exactly 1 when they are one configuration."""
    if top is bottom:
        return Spread(1.0, 1.0, 1.0, "the same configuration")
    value = top["seconds_per_iteration"] / bottom["seconds_per_iteration"]
    pairs = top.get("iteration_seconds", []), bottom.get("iteration_seconds", [])
    return Spread.of_pairs(*pairs, value=value, per="iteration")


def thread_check(network_rows: Sequence[dict[str, Any]], allocator: dict[str, Any]) -> dict:
    """The allocator's thread count against the others it considered, on its own devices."""
    same = [
        r for r in network_rows if (r["rollout"], r["storage"], r["update"]) == (
            allocator["rollout"], allocator["storage"], allocator["update"])
    ]  # fmt: skip
    if allocator["threads"] is None or len(same) < 2:
        return {"threads_verdict": None}
    best = min(same, key=lambda r: r["seconds_per_iteration"])
    ratio = _ratio(allocator, best)
    if withheld(network_rows):  # right or wrong, from a busy machine's timings, would be a guess
        verdict = NOT_JUDGED
    elif (pairs := len(allocator["iteration_seconds"])) < MIN_PAIRS:  # one side by chance
        verdict = f"no verdict: {pairs} paired iteration(s), a verdict needs {MIN_PAIRS}"
    elif best is allocator:
        others = [r for r in same if r is not allocator]
        runner = min(others, key=lambda r: r["seconds_per_iteration"])
        margin = _ratio(runner, allocator)
        noise = "past" if margin.beyond(1.0) is True else "though within"
        verdict = f"right: faster than {runner['threads']} thread(s), {noise} the noise"
    elif ratio.beyond(1.0) is True:
        verdict = f"wrong: {best['threads']} thread(s) were faster, past the noise"
    else:
        verdict = f"as good as {best['threads']} thread(s) within the noise"
    return {
        "threads_chosen": allocator["threads"],
        "threads_best": best["threads"],
        "threads_seconds": {str(r["threads"]): r["seconds_per_iteration"] for r in same},
        "threads_ratio": ratio.value,
        "threads_low": ratio.low,
        "threads_high": ratio.high,
        "threads_verdict": verdict,
    }


def criterion(rows: Sequence[dict[str, Any]], tolerance: float = TOLERANCE) -> list[dict[str, Any]]:
    """Per network: the allocator's configuration against the best fixed one, and the rule's.

    ``slowdown``: the allocator's seconds / the best fixed plan's - 1 (0 when they are one
    configuration, negative when the allocator found a cheaper one), with ``slowdown_low``
    and ``slowdown_high`` from their paired iterations; ``within_tolerance``: True when the
    whole paired spread lies within ``tolerance``, False when it lies beyond, None when it
    straddles it or one iteration measured no spread; ``configurations``: how many distinct
    configurations the five plans ran as (1 without an accelerator: nothing to compare);
    ``decision_ok``: measuring took under :data:`DECISION_LIMIT_S`; ``saved_vs_fixed_rule``:
    the share of the fixed rule's time the allocator's configuration saves (the article
    reports 22% on Atari, C11), with ``saved_low``/``saved_high``; and the thread check
    (:func:`thread_check`).
    """
    result = []
    plans_by_network = by_plan(rows)
    for network, plans in plans_by_network.items():
        fixed_cost = {name: plans[name]["seconds_per_iteration"] for name in FIXED_PLANS}
        best = min(fixed_cost, key=fixed_cost.get)
        chosen = plans["allocator"]
        slowdown = _ratio(chosen, plans[best])
        saved = _ratio(chosen, plans["fixed-rule"])
        decision_s = chosen["decision_seconds"]
        result.append(
            {
                "network": network,
                "best_fixed": best,
                "best_fixed_s": fixed_cost[best],
                "allocator_s": chosen["seconds_per_iteration"],
                "slowdown": slowdown.value - 1,
                "slowdown_low": None if slowdown.low is None else slowdown.low - 1,
                "slowdown_high": None if slowdown.high is None else slowdown.high - 1,
                "configurations": len({id(plans[name]) for name in PLANS}),
                "saved_vs_fixed_rule": 1 - saved.value,
                "saved_low": None if saved.high is None else 1 - saved.high,
                "saved_high": None if saved.low is None else 1 - saved.low,
                "decision_seconds": decision_s,
                "within_tolerance": slowdown.side(1 + tolerance, above=False),
                "decision_ok": decision_s < DECISION_LIMIT_S,
                **thread_check([r for r in rows if r["network"] == network], chosen),
            }
        )
    return result


@guarded("the curriculum")
def curriculum(
    decisions: Sequence[Decision], rows: Sequence[dict[str, Any]], stages: Sequence[str]
) -> dict[str, Any]:
    """The comparison read as a curriculum whose network grows through ``stages`` (network names).

    ``timeline``: per stage, what the allocator did (held or switched, its plan and the
    devices of its rollout and update, the seconds its measuring took) and every plan's
    measured seconds for the stage's timed iterations. ``totals``: each plan's seconds over
    all stages, the allocator's with every stage's measuring time added. ``saved``: seconds
    the allocator saved against each fixed plan (negative: it lost time). ``threads``: the
    allocator's devices at each fixed thread count through every stage, where measured.
    ``iteration_sums`` (per plan) and ``thread_iteration_sums`` (per thread count): the k-th
    timed iteration's seconds summed over the stages, paired across contenders (:func:`worth`).
    """
    grouped = by_plan(rows)
    by_name = {decision.workload: decision for decision in decisions}
    unknown = [stage for stage in stages if stage not in grouped or stage not in by_name]
    if unknown:
        raise UsageError(f"no comparison rows or decision for stage(s) {unknown}")
    timeline = []
    for stage in stages:
        decision, plans = by_name[stage], grouped[stage]
        chosen = plans["allocator"]
        same = [r for r in rows if r["network"] == stage and _devices(r) == _devices(chosen)]
        timeline.append(
            {
                "stage": stage,
                "decision": decision.chosen.label,
                "rollout": str(decision.placement.rollout_device),
                "update": str(decision.placement.update_device),
                "held": decision.held,
                "decision_seconds": chosen["decision_seconds"],
                "seconds": {plan: plans[plan]["total_seconds"] for plan in PLANS},
                "rows": {plan: plans[plan]["label"] for plan in PLANS},
                "by_threads": {
                    str(r["threads"]): r["total_seconds"] for r in same if r["threads"] is not None
                },
            }
        )
    totals = {plan: sum(step["seconds"][plan] for step in timeline) for plan in PLANS}
    totals["allocator"] += sum(step["decision_seconds"] for step in timeline)
    saved = {plan: totals[plan] - totals["allocator"] for plan in FIXED_PLANS}
    counts = set.intersection(*(set(step["by_threads"]) for step in timeline)) if timeline else ()
    threads = {n: sum(step["by_threads"][n] for step in timeline) for n in sorted(counts, key=int)}
    return {
        "stages": list(stages),
        "timeline": timeline,
        "totals": totals,
        "saved": saved,
        "threads": threads if len(threads) > 1 else {},
        **paired_sums(rows, stages),
    }


def paired_sums(rows: Sequence[dict[str, Any]], stages: Sequence[str]) -> dict[str, Any]:
    """The k-th timed iteration's seconds summed over the stages, per plan (``iteration_sums``)
    and per thread count on the allocator's devices (``thread_iteration_sums``, where every
    stage ran it). The configurations of a stage ran interleaved, so these sums pair up
    across contenders: the spread of the allocator's worth (:func:`worth`)."""
    grouped = by_plan(rows)

    def sums(stage_rows: Sequence[dict[str, Any]]) -> list[float]:
        per_stage = [row["iteration_seconds"] for row in stage_rows]
        return [float(sum(values)) for values in zip(*per_stage, strict=True)]

    at_threads: dict[str, list[dict[str, Any]]] = {}
    for stage in stages:
        chosen = _devices(grouped[stage]["allocator"])
        for r in rows:
            if r["network"] == stage and _devices(r) == chosen and r["threads"] is not None:
                at_threads.setdefault(str(r["threads"]), []).append(r)
    every = {n: found for n, found in at_threads.items() if len(found) == len(stages)}
    return {
        "iteration_sums": {plan: sums([grouped[s][plan] for s in stages]) for plan in PLANS},
        "thread_iteration_sums": {n: sums(found) for n, found in every.items() if len(every) > 1},
    }


def contenders(summary: dict[str, Any]) -> dict[str, tuple[float, list[float]]]:
    """What running without the allocator would have cost over a curriculum (``summary``: the
    output of :func:`curriculum`): per contender, its seconds over all stages and its paired
    iteration sums. Fixed plans that ran as one configuration at every stage are merged into
    one contender; then each fixed thread count on the allocator's devices."""
    timeline, sums = summary["timeline"], summary.get("iteration_sums", {})
    groups: dict[tuple[str, ...], list[str]] = {}
    for plan in FIXED_PLANS:
        groups.setdefault(tuple(step["rows"][plan] for step in timeline), []).append(plan)
    found = {
        ", ".join(names): (summary["totals"][names[0]], sums.get(names[0], []))
        for names in groups.values()
    }
    thread_sums = summary.get("thread_iteration_sums", {})
    found |= {
        f"its devices at {n} thread(s) throughout": (s, thread_sums.get(n, []))
        for n, s in summary.get("threads", {}).items()
    }
    return found


def worth(summary: dict[str, Any]) -> dict[str, Any]:
    """Whether the allocator, its measuring included, beat the best contender over a curriculum.

    Returns ``contenders`` (seconds over all stages, by name), ``best`` (the cheapest),
    ``allocator_s``, ``measuring_s``, ``spread`` (the best's seconds over the allocator's,
    paired by timed iteration, the measuring spread evenly over them; above 1: the
    allocator saved time) and ``saved``: True or False only where the whole spread lies on
    one side of 1, None inside the noise (or with no paired iterations recorded).
    """
    found = contenders(summary)
    best = min(found, key=lambda name: found[name][0])
    allocator = summary["totals"]["allocator"]
    measuring = sum(step["decision_seconds"] for step in summary["timeline"])
    best_s, best_sums = found[best]
    mine = summary.get("iteration_sums", {}).get("allocator", [])
    ours = [s + measuring / len(mine) for s in mine]
    value = best_s / allocator
    spread = (
        Spread.of_pairs(best_sums, ours, value, per="iteration")
        if mine and best_sums
        else Spread(value, how="no paired iterations recorded")
    )
    return {
        "contenders": {name: seconds for name, (seconds, _) in found.items()},
        "best": best,
        "allocator_s": allocator,
        "measuring_s": measuring,
        "spread": spread,
        "saved": spread.beyond(1.0),
    }


def _devices(row: dict[str, Any]) -> tuple[str, str, str]:
    return row["rollout"], row["storage"], row["update"]


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
