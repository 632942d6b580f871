"""Findings from an overlap study's numbers: sentences saying which configuration is faster,
whether policy lag hurt learning beyond the spread over seeds, and what Ray costs.

Every conclusion a notebook or the ``bench overlap`` command prints comes from here,
computed from the measured values, so another machine prints its own conclusions. (The
acceptance targets this engine was built to are tests, and ``benchmarks/README.md``
says what they are; they are not the package's to ship.)
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.findings import Check, Expectation, Finding
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.rl.overlapped.timeline import configuration_label
from hetero_tutorial.studies import overlap
from hetero_tutorial.studies.learning import compare_learning
from hetero_tutorial.studies.overlap import SEQUENTIAL


def label(entry: dict[str, Any]) -> str:
    """A configuration's name: ``sequential`` or ``mp, 1 worker, lag 1``."""
    if entry["plan"] == SEQUENTIAL:
        return SEQUENTIAL
    return configuration_label(entry["backend"], entry["workers"], entry["max_policy_lag"])


def find(summary: Sequence[dict[str, Any]], **key: Any) -> dict[str, Any] | None:
    """The summary entry whose fields match ``key`` (e.g. backend="mp", workers=1), if any."""
    return next((e for e in summary if all(e[k] == v for k, v in key.items())), None)


def speed_spread(entry: dict[str, Any]) -> Spread:
    """A configuration's speed-up over the sequential plan and its range over the seeds
    (no range, so no spread measured, with one seed)."""
    ratio = entry["speedup_vs_sequential"]
    if entry["seeds"] < 2:
        return Spread(ratio, how="one seed")
    return Spread(ratio, entry["speedup_low"], entry["speedup_high"], "seeds", entry["seeds"])


def speed_finding(entry: dict[str, Any], summary: Sequence[dict[str, Any]] = ()) -> str:
    """One overlapped configuration's speed-up over the sequential plan, over the seeds: a
    side of 1 is named only when every seed's speed-up lies on it; then how it came out
    against its ideal (:func:`ideal_finding`)."""
    spread, subject = speed_spread(entry), f"{label(entry)}, speed-up over the sequential plan"
    if spread.decides:
        side = {True: "faster", False: "slower", None: "no clear effect"}
        subject += f" ({side[spread.beyond(1.0)]})"
    return str(ideal_finding(entry, subject, summary))


SAME_WORK_MARGIN = 1.05
"""How far a lag-0, one-worker run (the sequential plan's own decisions) may run faster than
the sequential run before that run is named as slow: past the few percent two runs of one
plan differ by on a quiet machine."""


def timeline_phases(lanes: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """(rollout, update) seconds of a sequential timeline's iterations (medians)."""
    return tuple(  # type: ignore[return-value]
        statistics.median(i["end"] - i["start"] for i in lanes if i["kind"] == kind)
        for kind in ("rollout", "update")
    )


def ideal_finding(
    entry: dict[str, Any],
    subject: str = "speed-up",
    summary: Sequence[dict[str, Any]] = (),
    timeline: tuple[float, float] | None = None,
) -> Finding:
    """A configuration's speed-up against the ideal, the most overlapping could give: a
    ceiling. Where the run beats it, the causes it can check: its own rollouts and updates
    ran at other speeds than the sequential run's (the ideal's R and U come from that
    separate run), rollouts it collected but never trained on count in its steps/s, (from
    ``summary``) the sequential run itself ran slow: a lag-0 run with one worker makes its
    very decisions, yet ran faster than it by more than :data:`SAME_WORK_MARGIN`, and (from
    ``timeline``, a second run of the sequential plan: its (rollout, update) seconds) two
    runs of one plan took their phases further apart than the run's excess."""
    sequential = entry.get("sequential_phase_s")
    own = entry.get("own_phase_s")
    checks = []
    if sequential and own and math.isfinite(entry.get("own_phase_ideal", math.nan)):
        checks.append(
            Check(
                f"its own phases ({own[0] * 1e3:.1f} and {own[1] * 1e3:.1f} ms) set a ceiling "
                f"of {entry['own_phase_ideal']:.2f}x, which its median stays within",
                entry["own_phase_ideal"] >= entry["speedup_vs_sequential"],
            )
        )
    dropped = entry.get("dropped_rollouts", 0)
    unused = f"{counted(dropped, 'rollout')} collected but never trained on count in its steps/s"
    checks.append(Check(unused, dropped > 0))
    same_work = [e for e in summary if e["plan"] != SEQUENTIAL and e["max_policy_lag"] == 0
                 and e["workers"] == 1 and label(e) != label(entry)]  # fmt: skip
    if same_work:  # the entry's own speed-up is no evidence about the sequential run
        slowest = min(same_work, key=lambda e: e["speedup_vs_sequential"])
        ratio = slowest["speedup_vs_sequential"]
        said = (
            f"{label(slowest)}, which makes the sequential plan's very decisions, ran "
            f"{ratio:.2f}x its speed"
        )
        if len(same_work) > 1:
            said = (
                "every other lag-0 run with one worker, which makes the sequential plan's very "
                f"decisions, ran at least {ratio:.2f}x its speed, the slowest {label(slowest)}"
            )
        checks.append(Check(f"the sequential run ran slow: {said}", ratio > SAME_WORK_MARGIN))
    if sequential and timeline:
        drift = sum(sequential) / sum(timeline)
        checks.append(
            Check(
                f"the sequential plan's phases took {drift:.2f}x as long in the study (means) as "
                "in the timeline's separate run (medians): R and U, and so the ideal, are "
                "uncertain by more than this run's excess",
                drift > SAME_WORK_MARGIN
                and entry["speedup_vs_sequential"] <= entry["ideal_speedup"] * drift,
            )
        )
    return Finding(
        subject,
        speed_spread(entry),
        Expectation.at_most(entry["ideal_speedup"], "its ideal"),
        checks=tuple(checks),
    )


def outside_ideal_lines(
    summary: Sequence[dict[str, Any]], timeline: tuple[float, float] | None = None
) -> list[str]:
    """One line per overlapped configuration outside its ideal (:func:`ideal_finding`), with
    the causes its run can check; a cause every one of them shares (a slow sequential run) is
    said once, above them."""
    outside = []
    for entry in summary:
        if entry["plan"] == SEQUENTIAL:
            continue
        finding = ideal_finding(entry, summary=summary, timeline=timeline)
        value = finding.measured.value
        place = finding.expected.place(value)
        if place != "inside":
            head = f"- {label(entry)}, {place} its ideal by {finding.expected.gap_words(value)}"
            outside.append((head, [c.cause for c in finding.checks if c.applies]))
    first = outside[0][1] if len(outside) > 1 else []
    shared = [c for c in first if all(c in causes for _, causes in outside)]
    lines = [f"Every run outside its ideal: {'; '.join(shared)}."] if shared else []
    for head, causes in outside:
        own = [c for c in causes if c not in shared]
        if own:
            lines.append(f"{head}: {'; '.join(own)}.")
        elif shared:
            lines.append(f"{head}: no other cause this run can check.")
        else:
            lines.append(f"{head}: no cause this run can check explains it.")
    return lines


@judged()
def speed_findings(summary: Sequence[dict[str, Any]]) -> list[str]:
    """:func:`speed_finding` of every overlapped configuration of a study's summary."""
    return [speed_finding(e, summary) for e in summary if e["plan"] != SEQUENTIAL]


def phase_times_sentence(study: dict[str, Any]) -> str:
    """The sequential plan's rollout and update milliseconds per iteration, the R and U
    of the ideal speed-up (means over the seeds)."""
    rollout, update = overlap.sequential_phase_times(study)
    return (
        f"this machine, sequential plan: R = {rollout * 1e3:.1f} ms rollout, "
        f"U = {update * 1e3:.1f} ms update per iteration (means over "
        f"{counted(len(study['seeds']), 'seed')})"
    )


def ideal_vs_measured(
    summary: Sequence[dict[str, Any]], timeline: tuple[float, float] | None = None, **key: Any
) -> str:
    """One overlapped configuration's ideal speed-up (the summary's: the median of the
    per-seed ideals) beside its measured one (``timeline``: :func:`ideal_finding`'s)."""
    entry = find(summary, **key)
    if entry is None or entry["plan"] == SEQUENTIAL:
        raise UsageError(
            f"no overlapped configuration {key} in this study; it ran "
            + ", ".join(label(e) for e in summary if e["plan"] != SEQUENTIAL)
        )
    return f"{label(entry)}: {ideal_finding(entry, summary=summary, timeline=timeline)}"


def learning_finding(a: dict[str, Any], b: dict[str, Any], env_id: str) -> str:
    """Whether configurations ``a`` and ``b`` learned differently, by the series' one rule
    (:func:`~hetero_tutorial.studies.learning.compare_learning`: two seeds per arm, runs past
    the task's learning bar, ranges over seeds apart), from each seed's greedy return."""
    arms = {label(a): a["eval_returns_by_seed"], label(b): b["eval_returns_by_seed"]}
    return str(compare_learning(arms, env_id))


def learning_findings(study: dict[str, Any]) -> list[str]:
    """:func:`learning_finding` of lag 1 against lag 0 per engine and worker count, then of
    Ray against processes per worker count and lag bound: one sentence each, led by the
    configuration it judges (a "no verdict" names none of its own)."""
    summary, env_id, found = study["summary"], study["env_id"], []
    overlapped = [e for e in summary if e["plan"] != SEQUENTIAL]
    for backend in dict.fromkeys(e["backend"] for e in overlapped):
        for workers in dict.fromkeys(e["workers"] for e in overlapped if e["backend"] == backend):
            lag0 = find(summary, backend=backend, workers=workers, max_policy_lag=0)
            lag1 = find(summary, backend=backend, workers=workers, max_policy_lag=1)
            if lag0 and lag1:
                judged = configuration_label(backend, workers, 1)
                found.append(f"{judged} against lag 0: {learning_finding(lag0, lag1, env_id)}")
    for entry in overlapped:
        if entry["backend"] == "ray":
            key = {"workers": entry["workers"], "max_policy_lag": entry["max_policy_lag"]}
            mp = find(summary, backend="mp", **key)
            if mp:
                found.append(
                    f"{label(entry)} against processes: {learning_finding(mp, entry, env_id)}"
                )
    return found


def learning_lines(study: dict[str, Any]) -> list[str]:
    """:func:`learning_findings` with the comparisons that share one verdict on one line
    (four "no verdict" lines from one seed read as one)."""
    by_verdict: dict[str, list[str]] = {}
    for line in learning_findings(study):
        compared, _, verdict = line.partition(": ")
        by_verdict.setdefault(verdict, []).append(compared)
    return [f"{'; '.join(names)}: {verdict}" for verdict, names in by_verdict.items()]


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


@judged()
def ray_findings(study: dict[str, Any]) -> list[str]:
    """Ray's cost against plain processes on this machine, per configuration (the guard's
    line instead where the study ran busy: not judged)."""
    found = []
    for (workers, lag), ratios in ray_ratios(study["rows"]).items():
        name = configuration_label("ray", workers, lag)
        spread = Spread.of_ratios(ratios, per="seed")
        side = {True: "faster than", False: "slower than", None: "no clear effect against"}
        verdict = side[spread.beyond(1.0)] if spread.decides else "no verdict against"
        found.append(f"{name}: {verdict} the process engine, {spread} its steps/s")
    if study.get("ray_start_seconds") is not None:
        found.append(f"starting Ray here took {study['ray_start_seconds']:.1f} s (once per study)")
    return found


def load_finding(study: dict[str, Any]) -> str:
    """How busy other programs kept the machine's cores while the study ran, from the runs
    long enough to tell (:data:`~hetero_tutorial.studies.overlap.LOAD_MIN_INTERVALS`
    sampling intervals); a sentence saying why not where none was."""
    rows = [r for r in study["rows"] if "other_load_cores" in r]
    if not rows:
        return "the load from other programs was not measured"
    loads = [r["other_load_cores"] for r in rows if r["other_load_cores"] is not None]
    if not loads:
        longest = max(r.get("run_seconds", 0.0) for r in rows)
        interval = rows[0].get("load_interval_seconds", 0.5)
        return (
            f"others' load not reported: the longest run took {longest:.1f} s, under "
            f"{overlap.LOAD_MIN_INTERVALS} sampling intervals of {interval:g} s, too short to "
            "tell other programs' CPU time from this run's own processes ending"
        )
    text = (
        f"other programs kept {statistics.median(loads):.2f} of the {study['cores']} cores busy "
        f"during a run (median over {len(loads)} of {len(rows)} runs long enough to tell; "
        f"{max(loads):.2f} at most)"
    )
    if max(loads) >= 0.25:
        text += (
            ": an overlapped run needs a free core for each of its processes, so others' load "
            "slows it more than the one-process sequential plan; read its speed-ups as "
            "measured under that load"
        )
    return text


def resolved(study: dict[str, Any]) -> bool:
    """Whether another seed could change no verdict: every overlapped configuration's
    speed-up lies on one side of 1 over enough seeds (:data:`~hetero_tutorial.core.timing.
    MIN_REPEATS`), and no learning comparison between runs
    that learned is still "no difference detected". (A comparison of runs that did not
    learn, or one seed's, is not unresolved by the spread: more seeds of it cannot help.)"""
    for entry in study["summary"]:
        if entry["plan"] == SEQUENTIAL:
            continue
        spread = speed_spread(entry)
        if spread.too_few or (spread.measured and spread.low <= 1 <= spread.high):
            return False
    return not any("no difference detected" in line for line in learning_findings(study))


def further_seed(study: dict[str, Any], seed: int, budget_seconds: float | None) -> str | None:
    """Why ``seed`` is not run, or None to run it: a further seed runs only while a verdict
    is unresolved (:func:`resolved`) and one more round, as long as the rounds so far took
    on average, keeps the study within ``budget_seconds`` (None: no budget)."""
    seeds = len(study["seeds"])
    if resolved(study):
        return f"every verdict is resolved with {seeds} seeds: seed {seed} not run"
    per_round = study["seconds"] / seeds
    if budget_seconds is not None and study["seconds"] + per_round > budget_seconds:
        return (
            f"seed {seed} not run: a round takes about {per_round:.0f} s here and the study "
            f"has had {study['seconds']:.0f} s of its {budget_seconds:.0f} s; the unresolved "
            "verdicts stay unresolved (`python -m hetero_tutorial bench overlap --env "
            f"{study['env_id']} --steps {study['config']['total_steps']} --seeds "
            f"{' '.join(str(s) for s in [*study['seeds'], seed])}` runs them outside class)"
        )
    return None


@judged("all")
def findings(study: dict[str, Any]) -> list[str]:
    """Every conclusion the study's numbers support, as sentences."""
    return [
        load_finding(study),
        *speed_findings(study["summary"]),
        *learning_findings(study),
        *ray_findings(study),
    ]


def record_fields(study: dict[str, Any]) -> dict[str, Any]:
    """The fields of a ``bench.overlap`` record: the study and its findings."""
    return {**study, "findings": findings(study)}
