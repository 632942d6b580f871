"""The allocator's criterion (C10, C11): per network, its configuration against the best of
the fixed plans and against the article's rule, and its thread choice against the other
counts it considered, read from the rows of :func:`~hetero_tutorial.allocator.trials.compare`.

Every verdict is judged by the spread of paired iterations (the configurations of a network
ran interleaved), so a difference inside the noise is said to be one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import NOT_JUDGED, withheld
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.studies.threads import MIN_PAIRS

PLANS = ("fixed-rule", "hybrid", "all-cpu", "all-accelerator", "allocator")
"""The five ways to pick a placement that a trial compares (the allocator's last)."""
FIXED_PLANS = PLANS[:-1]
TOLERANCE = 0.05
"""The allocator may be this much slower than the best fixed plan and still pass its criterion."""
DECISION_LIMIT_S = 2.0
"""The most a decision's measuring may cost, in seconds."""


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
    # The chosen count against the other it beat or lost to: above 1, the other was faster.
    other = best if best is not allocator else min(
        (r for r in same if r is not allocator), key=lambda r: r["seconds_per_iteration"]
    )  # fmt: skip
    ratio = _ratio(allocator, other)
    if withheld(network_rows):  # right or wrong, from a busy machine's timings, would be a guess
        verdict = NOT_JUDGED
    elif (pairs := len(allocator["iteration_seconds"])) < MIN_PAIRS:  # one side by chance
        verdict = f"no verdict: {counted(pairs, 'paired iteration')}, a verdict needs {MIN_PAIRS}"
    elif (side := ratio.beyond(1.0)) is False:
        verdict = f"right: faster than {counted(other['threads'], 'thread')}, past the noise"
    elif side is True:
        were = "was" if other["threads"] == 1 else "were"
        verdict = f"wrong: {counted(other['threads'], 'thread')} {were} faster, past the noise"
    else:  # the paired iterations fell on both sides of 1
        verdict = (
            f"no clear effect against {counted(other['threads'], 'thread')}: per iteration "
            f"{ratio.low:.2f}-{ratio.high:.2f}x, both sides of 1"
        )
    return {
        "threads_chosen": allocator["threads"],
        "threads_best": best["threads"],
        "threads_other": other["threads"],
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
