"""Sentences from an overlap study's numbers: which configuration is faster, whether policy
lag hurt learning beyond the spread over seeds, what Ray costs, and the issue's targets.

Every conclusion a notebook or the ``bench pipeline`` command prints comes from here,
computed from the measured values, so another machine prints its own conclusions.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from hetero_tutorial.rl.pipeline_results import configuration_label
from hetero_tutorial.studies.overlap import SEQUENTIAL


def label(entry: dict[str, Any]) -> str:
    """A configuration's name: ``sequential`` or ``mp, 1 worker, lag 1``."""
    if entry["plan"] == SEQUENTIAL:
        return SEQUENTIAL
    return configuration_label(entry["backend"], entry["workers"], entry["max_policy_lag"])


def find(summary: Sequence[dict[str, Any]], **key: Any) -> dict[str, Any] | None:
    """The summary entry whose fields match ``key`` (e.g. backend="mp", workers=1), if any."""
    return next((e for e in summary if all(e[k] == v for k, v in key.items())), None)


def speed_verdict(entry: dict[str, Any]) -> str:
    """Whether one overlapped configuration beat the sequential plan, over the seeds."""
    name, ratio = label(entry), entry["speedup_vs_sequential"]
    seeds = f"seeds {entry['speedup_low']:.2f}-{entry['speedup_high']:.2f}x"
    if entry["seeds"] < 2:
        seeds = "one seed, so no spread to judge by"
    ideal = (
        f"; the ideal here is {entry['ideal_speedup']:.2f}x, of which it reached "
        f"{entry['share_of_ideal']:.0%}"
    )
    if entry["speedup_low"] > 1:
        return f"{name}: faster than the sequential plan, {ratio:.2f}x its steps/s ({seeds}){ideal}"
    if entry["speedup_high"] < 1:
        return f"{name}: slower than the sequential plan, {ratio:.2f}x its steps/s ({seeds}){ideal}"
    return f"{name}: no clear difference from the sequential plan, {ratio:.2f}x ({seeds}){ideal}"


def learning_verdict(a: dict[str, Any], b: dict[str, Any]) -> str:
    """Whether configuration ``b`` learned worse than ``a`` beyond the spread over seeds."""
    diff = b["eval_return_mean"] - a["eval_return_mean"]
    spread = max(a["eval_return_spread"], b["eval_return_spread"])  # as no_worse() judges
    numbers = (
        f"greedy return {b['eval_return_mean']:.1f} ({label(b)}) vs {a['eval_return_mean']:.1f} "
        f"({label(a)}), over {min(a['seeds'], b['seeds'])} seed(s)"
    )
    if min(a["seeds"], b["seeds"]) < 2:
        return f"{numbers}: with one seed there is no spread to judge a difference against"
    if diff < -spread:
        gap = f"the gap {-diff:.1f} exceeds the spread {spread:.1f}"
        return f"{label(b)} learned worse: {numbers}; {gap}"
    return (
        f"{label(b)} learned no worse than {label(a)} beyond the spread over seeds: {numbers}; "
        f"difference {diff:+.1f}, spread (standard deviation) {spread:.1f}"
    )


def ray_ratios(rows: Sequence[dict[str, Any]]) -> dict[tuple[int, int], list[float]]:
    """Per (workers, lag): Ray's steps/s over the process engine's, seed by seed."""
    speed = {
        (r["backend"], r["workers"], r["max_policy_lag"], r["seed"]): r["env_steps_per_s"]
        for r in rows
        if r["plan"] != SEQUENTIAL
    }
    ratios: dict[tuple[int, int], list[float]] = {}
    for (backend, workers, lag, seed), value in speed.items():
        mp = speed.get(("mp", workers, lag, seed))
        if backend == "ray" and mp:
            ratios.setdefault((workers, lag), []).append(value / mp)
    return ratios


def ray_verdicts(study: dict[str, Any]) -> list[str]:
    """Ray's cost against plain processes on this machine, per configuration."""
    found = []
    for (workers, lag), ratios in ray_ratios(study["rows"]).items():
        name = configuration_label("ray", workers, lag)
        found.append(
            f"{name}: {statistics.median(ratios):.2f}x the process engine's steps/s "
            f"(seeds {min(ratios):.2f}-{max(ratios):.2f}x)"
        )
    if study.get("ray_start_seconds") is not None:
        found.append(f"starting Ray here took {study['ray_start_seconds']:.1f} s (once per study)")
    return found


def load_verdict(study: dict[str, Any]) -> str:
    """How busy other programs kept the machine's cores while the study ran."""
    loads = [r["other_load_cores"] for r in study["rows"] if "other_load_cores" in r]
    if not loads:
        return "the load from other programs was not measured"
    text = (
        f"other programs kept {statistics.median(loads):.2f} of the {study['cores']} cores busy "
        f"during a run (median over runs; {max(loads):.2f} at most)"
    )
    if max(loads) >= 0.25:
        text += (
            ": an overlapped run needs a free core for each of its processes, so others' load "
            "slows it more than the one-process sequential plan; read its speed-ups as "
            "measured under that load"
        )
    return text


def verdicts(study: dict[str, Any]) -> list[str]:
    """Every conclusion the study's numbers support, as sentences."""
    summary = study["summary"]
    found = [load_verdict(study)]
    found += [speed_verdict(e) for e in summary if e["plan"] != SEQUENTIAL]
    for backend in dict.fromkeys(e["backend"] for e in summary if e["backend"]):
        for workers in dict.fromkeys(e["workers"] for e in summary if e["backend"] == backend):
            lag0 = find(summary, backend=backend, workers=workers, max_policy_lag=0)
            lag1 = find(summary, backend=backend, workers=workers, max_policy_lag=1)
            if lag0 and lag1:
                found.append(learning_verdict(lag0, lag1))
    return found + ray_verdicts(study)


TARGETS = {
    "share_of_ideal": 0.9,
    "speedup_vs_sequential": 1.3,
    "ray_over_mp": 0.8,
}
"""Issue 14's targets for one worker at lag 1 on a 2-core machine (Acrobot-v1, CleanRL's PPO)."""


def targets(study: dict[str, Any], workers: int = 1, lag: int = 1) -> list[dict[str, Any]]:
    """Each target of issue 14: what was measured, and whether it was met (None: not run)."""
    summary = study["summary"]
    mp = find(summary, backend="mp", workers=workers, max_policy_lag=lag)
    ray = find(summary, backend="ray", workers=workers, max_policy_lag=lag)
    mp0 = find(summary, backend="mp", workers=workers, max_policy_lag=0)
    ratios = ray_ratios(study["rows"]).get((workers, lag))
    rows = []
    for name in ("share_of_ideal", "speedup_vs_sequential"):
        measured = mp[name] if mp else None
        rows.append(_target(f"mp {name}", TARGETS[name], measured))
    ray_ratio = statistics.median(ratios) if ratios else None
    rows.append(_target("ray over mp steps/s", TARGETS["ray_over_mp"], ray_ratio))
    for name, a, b in (("lag 1 learns as lag 0", mp0, mp), ("ray learns as mp", mp, ray)):
        met = None if not (a and b) else no_worse(a, b)
        rows.append({"target": name, "at_least": None, "measured": None, "met": met})
    return rows


def _target(name: str, at_least: float, measured: float | None) -> dict[str, Any]:
    met = None if measured is None else measured >= at_least
    return {"target": name, "at_least": at_least, "measured": measured, "met": met}


def no_worse(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether ``b``'s greedy return is no worse than ``a``'s beyond the spread over seeds."""
    spread = max(a["eval_return_spread"], b["eval_return_spread"])
    return b["eval_return_mean"] - a["eval_return_mean"] >= -spread


def record_fields(study: dict[str, Any]) -> dict[str, Any]:
    """The fields of a ``bench.pipeline`` record: the study, its verdicts and its targets."""
    return {**study, "verdicts": verdicts(study), "targets": targets(study)}
