"""Notebook 07's sections 2 and 3 in words: which environment implementation steps fastest
at which number of environments, where the lines cross, and what a step costs whatever its
size (a fixed part and a part per environment), from the rows of
:mod:`hetero_tutorial.studies.env_throughput`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.timing import format_seconds
from hetero_tutorial.studies.env_throughput import (
    TIE,
    crossings,
    rates_by_implementation,
    step_cost_fit,
    throughput_ratios,
)


def environments(value: float) -> str:
    """A number of environments: whole above 10, two significant digits below (0.1, 2.5)."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


@judged()
def throughput_findings(rows: Sequence[dict[str, Any]], env_id: str) -> str:
    """The fastest implementation at the smallest and largest N, the ratios there, the crossings."""
    measured = [r for r in rows if r["env_id"] == env_id and r["env_steps_per_s"]]
    if not measured:
        return f"{env_id}: nothing was measured."
    sizes = sorted({r["num_envs"] for r in measured})
    lines = []
    for n in dict.fromkeys((sizes[0], sizes[-1])):
        here = [r for r in measured if r["num_envs"] == n]
        best = max(here, key=lambda r: r["env_steps_per_s"])
        line = f"- {env_id}, N = {environments(n)}: fastest is {best['implementation']}"
        others = throughput_ratios(rows, env_id, n, best["implementation"])
        if others:
            slower = ", ".join(f"{1 / ratio:.3g}x {name}" for name, ratio in others.items())
            line += f" ({slower})"
        lines.append(line + f", at {environments(best['env_steps_per_s'])} env steps/s.")
    for cross in crossings(rows, env_id):
        lo, hi = cross["between"]
        line = (
            f"- {env_id}: {cross['faster_above']} overtakes {cross['faster_below']} at about "
            f"N = {environments(cross['num_envs'])} (between the measured {environments(lo)} "
            f"and {environments(hi)}"
        )
        if cross["tied_at"]:
            tied = ", ".join(environments(n) for n in cross["tied_at"])
            line += f"; within {TIE:.0%} of each other, a tie, at N = {tied}"
        lines.append(line + ").")
    return "\n".join(lines)


@judged()
def overhead_findings(rows: Sequence[dict[str, Any]], env_id: str) -> str:
    """Each implementation's fit, fixed cost per step plus cost per environment, in one
    template: the N where the two are equal, and the fit's ceiling, how far more
    environments can lift the rate over one environment's (``1 + fixed / per_env``)."""
    lines = []
    largest = max((r["num_envs"] for r in rows if r["env_id"] == env_id), default=0)
    for name, fit in step_cost_fit(rows, env_id).items():
        fixed, at = format_seconds(fit["fixed_s"]), fit["half_fixed_at"]
        if at > 10 * largest:
            lines.append(
                f"- {env_id}, {name}: {fixed} per step; the part per environment is too small "
                f"to measure up to N = {environments(largest)}."
            )
            continue
        line = (
            f"- {env_id}, {name}: {fixed} + {format_seconds(fit['per_env_s'])} x N; equal "
            f"at N = {environments(at)}, ceiling {environments(1 + at)}x"
        )
        lines.append(line + _past_ceiling(rows, env_id, name, 1 + at) + ".")
    return "\n".join(lines)


def _past_ceiling(rows: Sequence[dict[str, Any]], env_id: str, name: str, ceiling: float) -> str:
    """Where the measured rows lift the rate over the fewest environments' by more than the
    fit's ceiling allows (past a tenth, timing noise on a shared machine), the best such lift:
    a straight line does not fit those rows closely; "" where none does."""
    rates = rates_by_implementation(rows, env_id).get(name, {})
    if len(rates) < 2:
        return ""
    fewest = min(rates)
    best = max(rates, key=rates.get)
    lift = rates[best] / rates[fewest]
    if lift <= ceiling * (1 + TIE):
        return ""
    return (
        f", yet the rows lift the rate {lift:.2g}x at N = {environments(best)} (over N = "
        f"{environments(fewest)}): "
        "the straight line does not fit them closely"
    )


@judged()
def per_environment(finding: Callable[..., str], rows: Sequence[dict[str, Any]],
                    env_ids: Sequence[str]) -> str:  # fmt: skip
    """``finding(rows, env_id)`` for each environment, one after the other: on a busy
    machine, the guard's line once for all of them."""
    return "\n".join(finding(rows, env_id) for env_id in env_ids)
