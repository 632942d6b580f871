"""The trials read as a curriculum (C13): the MLP networks in order of growing width, run with
one allocator that measures again at each stage (the signature changed) and keeps its
placement when a new best is within its margin; whether that, its measuring included,
beat the best contender that never measures (:func:`worth`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hetero_tutorial.allocator.criterion import FIXED_PLANS, PLANS, by_plan
from hetero_tutorial.allocator.decision import Decision
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import Spread


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
        f"its devices at {counted(n, 'thread')} throughout": (s, thread_sums.get(n, []))
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
