"""Rollout and update at the same time: what overlapping buys over the sequential hybrid plan.

:func:`overlap_study` trains, seed by seed, the sequential hybrid plan
(:func:`~hetero_tutorial.rl.ppo.runs.train`) and then every overlapped configuration
(:func:`~hetero_tutorial.rl.overlapped.loop.train_overlapped`: backend x workers x policy lag)
from the same seed: A, B, C, A, B, C, ... so that the machine's drift (up to 2x over
minutes on shared machines) hits every configuration alike, and each speed-up is a
ratio within one seed's round. A run is a whole training run; the greedy return after
it says what was learned, at equal environment steps.

The ideal speed-up comes from the sequential run's own phase times (:func:`ideal_speedup`).
:func:`add_seed_round` runs the study one seed at a time, merging the rounds as they come.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, replace
from typing import Any

from hetero_tutorial.core.contention import LoadMeter
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine import usable_cores
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.placement import Placement, as_placement
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import torch_threads
from hetero_tutorial.rl.overlapped.loop import train_overlapped
from hetero_tutorial.rl.overlapped.timeline import OverlappedResult, Timeline, configuration_label
from hetero_tutorial.rl.overlapped.worker import CLOCK
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import PPOResult, train
from hetero_tutorial.rl.ppo.trainer import PPOTrainer

ROLLOUT_PHASES = ("rollout", "advantages")
"""The sequential plan's phases a rollout worker takes over."""
UPDATE_PHASES = ("transfer", "update", "weight_sync")
"""The sequential plan's phases the learner keeps."""
SEQUENTIAL = "sequential"
CURVE_BINS = 30
"""Points of each run's learning curve in a record (the mean training return per span)."""
TIMELINE_SECONDS = 1.5
"""Seconds of each overlapped timeline kept in a record, from the start of its steady window."""
LOAD_MIN_INTERVALS = 10
"""Sampling intervals a run must last for its "others' load" to be reported: the figure's
resolution is about one interval of CPU per process that ends during the run (see
:class:`~hetero_tutorial.core.contention.LoadMeter`), so a run of a few intervals would
report its own processes' exits as others' load."""


def ideal_speedup(
    rollout_seconds: float, update_seconds: float, workers: int, cores: int, max_policy_lag: int
) -> float:
    """The speed-up overlapping could give at best, from a sequential run's phase times.

    With rollout time R and update time U per iteration, the sequential plan takes
    R + U. Overlapped, ``W_eff`` workers collect while the learner updates, so an
    iteration takes max(R / W_eff, U) at best::

        ideal = (R + U) / max(R / W_eff, U),   W_eff = min(W, cores - 1, max_policy_lag)

    The learner keeps one core, so at most ``cores - 1`` workers run beside it; and
    under a lag bound L at most L rollouts can be collected during an update (rollout
    k waits until k - L are done), so a bound of 0 allows no overlap: ideal 1.
    Overheads (copying rollouts, waking processes) are left out: they are what the
    measured speed-up pays on top.
    """
    effective = min(workers, cores - 1, max_policy_lag)
    if effective < 1:
        return 1.0
    return (rollout_seconds + update_seconds) / max(rollout_seconds / effective, update_seconds)


def predicted_lags(
    iterations: int, max_policy_lag: int, rollout_seconds: float, update_seconds: float
) -> dict[int, int]:
    """The policy lag of every rollout of one worker, simulated: how many rollouts have each.

    The lag schedule's rules (rl/overlapped/schedule.py): the learner sends the request for
    rollout k as soon as both hold: it is done with k - max_policy_lag rollouts, and one
    of the worker's ``max(2, max_policy_lag + 1)`` slots is free (a slot frees when the
    learner copies a rollout out, as its update starts). The request names the learner's
    weight version when it is sent; the worker works through its requests in order; the
    learner updates on each rollout once it has arrived and the previous update ended.
    The learner is at version k when it reaches rollout k (one worker drops none), so
    rollout k's lag is k minus the version its request named.
    """
    slots = max(2, max_policy_lag + 1)
    copied_at: list[float] = []  # when the learner copied rollout j out (its update began)
    done_at: list[float] = []  # when the update on rollout j ended
    worker_free = 0.0
    lags = []
    for k in range(iterations):
        done_enough = done_at[k - max_policy_lag - 1] if k > max_policy_lag else 0.0
        slot_free = copied_at[k - slots] if k >= slots else 0.0
        sent = max(done_enough, slot_free)
        version = sum(1 for end in done_at if end <= sent)
        worker_free = max(worker_free, sent) + rollout_seconds  # the rollout arrives then
        copied_at.append(max(worker_free, done_at[-1] if done_at else 0.0))
        done_at.append(copied_at[-1] + update_seconds)
        lags.append(k - version)
    return dict(sorted(Counter(lags).items()))


def phase_split(run: PPOResult) -> tuple[float, float]:
    """(rollout, update) seconds per iteration of a sequential run, the parts that overlap.

    Over the run's steady iterations, the ones its ``phase_seconds`` cover (the first, with
    the copy counter and a device's one-off start, is left out of both).
    """
    iterations = len(run.steady_iterations)
    rollout = sum(run.phase_seconds.get(p, 0.0) for p in ROLLOUT_PHASES) / iterations
    update = sum(run.phase_seconds.get(p, 0.0) for p in UPDATE_PHASES) / iterations
    return rollout, update


def lag_diagnostics(result: OverlappedResult) -> dict[str, dict[str, float]]:
    """Mean approx KL and clip fraction per policy lag: at an update's first minibatch
    (how far the behaviour policy is from the learner) and at its last (as CleanRL logs)."""
    by_lag: dict[str, dict[str, float]] = {}
    for lag in sorted({u["lag"] for u in result.updates}):
        mine = [u for u in result.updates if u["lag"] == lag]
        by_lag[str(lag)] = {
            name: statistics.fmean(u[name] for u in mine)
            for name in ("start_approx_kl", "start_clipfrac", "approx_kl", "clipfrac")
        } | {"updates": len(mine)}
    return by_lag


def learning_curve(
    episodes: Sequence[tuple[int, float]], total_steps: int, bins: int = CURVE_BINS
) -> list[tuple[int, float]]:
    """Training episode returns averaged in ``bins`` equal spans of environment steps:
    (the span's last step, mean return), spans without a finished episode left out."""
    width = total_steps / bins
    sums: dict[int, list[float]] = {}
    for step, value in episodes:
        sums.setdefault(min(int((step - 1) // width), bins - 1), []).append(value)
    return [(round((b + 1) * width), statistics.fmean(v)) for b, v in sorted(sums.items())]


def clipping_by_lag(rows: Sequence[dict[str, Any]], backend: str = "mp") -> dict[str, dict]:
    """Over every overlapped run of ``backend``: per observed lag, the mean approx KL and
    clip fraction at an update's first and last minibatch (weighted by updates)."""
    totals: dict[str, dict[str, float]] = {}
    for row in rows:
        if row["plan"] == SEQUENTIAL or row["backend"] != backend:
            continue
        for lag, stats in row["lag_diagnostics"].items():
            mine = totals.setdefault(lag, dict.fromkeys(stats, 0.0))
            for name, value in stats.items():
                mine[name] += value * stats["updates"] if name != "updates" else value
    return {
        lag: {k: (v / t["updates"] if k != "updates" else v) for k, v in t.items()}
        for lag, t in sorted(totals.items())
    }


def _row(run: PPOResult, **extra: Any) -> dict[str, Any]:
    use = run.utilisation
    return {
        "seed": run.seed,
        "env_steps": run.env_steps,
        "env_steps_per_s": run.env_steps_per_s,
        "eval_return_mean": run.eval_return_mean,
        "eval_returns": run.eval_returns,
        "learning_curve": learning_curve(run.episodes, run.env_steps),
        "process_cpu_percent": use.get("process_cpu_percent"),
        "gpu_percent": use.get("gpu_percent"),
        **extra,
    }


def overlapped_row(result: OverlappedResult, sequential: PPOResult) -> dict[str, Any]:
    """One overlapped run as a row, against the sequential run of the same seed."""
    rollout, update = phase_split(sequential)
    ideal = ideal_speedup(rollout, update, result.workers, result.cores, result.max_policy_lag)
    own_rollout, own_update = result.phase_seconds()
    own_ideal = ideal_speedup(
        own_rollout, own_update, result.workers, result.cores, result.max_policy_lag
    ) * ((rollout + update) / (own_rollout + own_update))
    speedup = result.env_steps_per_s / sequential.env_steps_per_s
    return _row(
        result.run,
        plan="overlapped",
        backend=result.backend,
        workers=result.workers,
        max_policy_lag=result.max_policy_lag,
        speedup_vs_sequential=speedup,
        ideal_speedup=ideal,
        share_of_ideal=speedup / ideal,
        sequential_phase_s=[rollout, update],
        own_phase_s=[own_rollout, own_update],
        own_phase_ideal=own_ideal,
        trained_env_steps_per_s=result.trained_env_steps_per_s,
        learner_idle_share=result.learner_idle_share,
        worker_idle_share=result.worker_idle_share,
        worker_wait_shares=result.worker_wait_shares(),
        worker_idle_shares=result.worker_idle_shares(),
        policy_lag_histogram={str(k): v for k, v in result.policy_lag_histogram.items()},
        dropped_rollouts=result.dropped_rollouts,
        startup_seconds=result.startup_seconds,
        lag_diagnostics=lag_diagnostics(result),
    )


def sequential_row(run: PPOResult) -> dict[str, Any]:
    rollout, update = phase_split(run)
    return _row(
        run,
        plan=SEQUENTIAL,
        backend=None,
        workers=0,
        max_policy_lag=None,
        speedup_vs_sequential=1.0,
        rollout_seconds_per_iteration=rollout,
        update_seconds_per_iteration=update,
    )


def load_fields(load: LoadMeter) -> dict[str, Any]:
    """A run's ``other_load_cores`` (None for a run shorter than :data:`LOAD_MIN_INTERVALS`
    sampling intervals: too short to tell) and its ``run_seconds``."""
    long_enough = load.wall_seconds >= LOAD_MIN_INTERVALS * load.interval
    return {
        "other_load_cores": load.other_cores if long_enough else None,
        "run_seconds": load.wall_seconds,
        "load_interval_seconds": load.interval,
    }


def configurations(
    backends: Sequence[str], workers: Sequence[int], lags: Sequence[int]
) -> list[tuple[str, int, int]]:
    """Every (backend, workers, max_policy_lag) to race, in the order each round runs them."""
    return [(b, w, lag) for b in backends for w in workers for lag in lags]


@guarded("the overlap study")
def overlap_study(
    config: PPOConfig,
    workers: Sequence[int] = (1,),
    backends: Sequence[str] = ("mp",),
    lags: Sequence[int] = (0, 1),
    seeds: Sequence[int] = (0, 1, 2),
    placement: Placement | str = "hybrid",
    eval_episodes: int = 10,
    threads: int = 1,
    progress: Callable[[str], None] | None = None,
    address: str | None = None,
) -> dict[str, Any]:
    """Sequential and overlapped runs, interleaved seed by seed; the fields of a record.

    Returns ``rows`` (one per run; sequential ones have ``plan`` "sequential"),
    ``summary`` (one per configuration, over seeds: see :func:`summarise`),
    ``timelines`` (the first seed's overlapped runs, and the sequential plan's, for
    Gantt charts), ``ray_start_seconds`` (None without Ray) and ``seconds`` (the study's
    wall time: what a further seed would cost). With ``"ray"`` among
    the backends, one local Ray serves every Ray run (its start is measured once).
    ``progress(label)`` is called before each run. ``address``: the Ray runs join that
    cluster (``"auto"``, ``"ray://host:10001"``) instead of a local Ray.
    """
    if not seeds:
        raise UsageError("give at least one seed")
    placement = as_placement(placement)
    rows: list[dict[str, Any]] = []
    timelines: dict[str, list[dict[str, Any]]] = {}
    began = time.perf_counter()
    with _ray_if("ray" in backends and address is None) as ray_start:
        for seed in seeds:
            if progress is not None:
                progress(f"seed {seed}: sequential")
            with LoadMeter() as load:
                sequential = train(
                    config,
                    placement,
                    seed,
                    count_copies=False,
                    threads=threads,
                    eval_episodes=eval_episodes,
                )
            rows.append(sequential_row(sequential) | load_fields(load))
            for backend, count, lag in configurations(backends, workers, lags):
                if progress is not None:
                    progress(f"seed {seed}: {backend}, {counted(count, 'worker')}, lag {lag}")
                with LoadMeter() as load:
                    result = train_overlapped(
                        config,
                        placement,
                        seed,
                        workers=count,
                        max_policy_lag=lag,
                        backend=backend,
                        address=address if backend == "ray" else None,
                        threads=threads,
                        eval_episodes=eval_episodes,
                    )
                rows.append(overlapped_row(result, sequential) | load_fields(load))
                if seed == seeds[0]:
                    start = result.window[0]
                    timelines[result.label] = [
                        i for i in result.timeline if i["start"] < start + TIMELINE_SECONDS
                    ]
    return {
        "env_id": config.env_id,
        "config": asdict(config),
        "placement": placement.name,
        "update_device": str(placement.update_device),
        "cores": usable_cores(),
        "threads": threads,
        "seeds": list(seeds),
        "rows": rows,
        "summary": summarise(rows),
        "timelines": timelines,
        "ray_start_seconds": ray_start,
        "seconds": time.perf_counter() - began,
    }


def merge_studies(rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One study from studies of one seed each (a notebook runs a round per cell): every
    round's rows, their summary over all the seeds, the first round's timelines and Ray
    start, and the rounds' seconds added up."""
    if not rounds:
        raise UsageError("give at least one study round")
    rows = [row for part in rounds for row in part["rows"]]
    return rounds[0] | {
        "seeds": [seed for part in rounds for seed in part["seeds"]],
        "rows": rows,
        "summary": summarise(rows),
        "seconds": sum(part["seconds"] for part in rounds),
    }


def add_seed_round(
    rounds: list[dict[str, Any]],
    config: PPOConfig,
    seed: int,
    workers: Sequence[int] = (1,),
    backends: Sequence[str] = ("mp",),
    lags: Sequence[int] = (0, 1),
    placement: Placement | str = "hybrid",
    eval_episodes: int = 10,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """One more seed's round of :func:`overlap_study` (the sequential plan, then every
    configuration, from ``seed``), appended to ``rounds``; returns the study of every round
    so far (:func:`merge_studies`).

    Notebook 06 runs a round per cell, so that each seed's table shows as soon as its
    minutes are spent, and a further seed only while a verdict needs it. The arguments are
    :func:`overlap_study`'s; ``progress(label)`` is called before each run.
    """
    rounds.append(
        overlap_study(
            config, workers, backends, lags, [seed], placement, eval_episodes, progress=progress
        )
    )
    return merge_studies(rounds)


@contextmanager
def _ray_if(wanted: bool) -> Iterator[float | None]:
    """A local Ray for the block when ``wanted`` and none is connected; yields its start seconds."""
    if not wanted:
        yield None
        return
    from hetero_tutorial.rl.overlapped.ray_engine import import_ray, local_ray

    context = nullcontext(None) if import_ray().is_initialized() else local_ray()
    with context as seconds:
        yield seconds


def sequential_phase_times(study: dict[str, Any]) -> tuple[float, float]:
    """(rollout, update) seconds per iteration of a study's sequential runs, means over seeds:
    the R and U of :func:`ideal_speedup` for this machine."""
    mine = [r for r in study["rows"] if r["plan"] == SEQUENTIAL]
    return (
        statistics.fmean(r["rollout_seconds_per_iteration"] for r in mine),
        statistics.fmean(r["update_seconds_per_iteration"] for r in mine),
    )


def learning_curves(
    study: dict[str, Any], backend: str, workers: int, lags: Sequence[int]
) -> dict[str, list[list[tuple[int, float]]]]:
    """Every seed's learning curve, per configuration: the sequential plan's, then
    ``backend`` with ``workers`` at each lag bound (keyed by the configuration's label)."""
    rows = study["rows"]
    curves = {SEQUENTIAL: [r["learning_curve"] for r in rows if r["plan"] == SEQUENTIAL]}
    for lag in lags:
        key = (backend, workers, lag)
        curves[configuration_label(*key)] = [
            r["learning_curve"]
            for r in rows
            if r["plan"] != SEQUENTIAL and (r["backend"], r["workers"], r["max_policy_lag"]) == key
        ]
    return curves


def _spread(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def summarise(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per configuration (the sequential plan first), over seeds.

    Speeds: the median over seeds, and the range (``*_low``, ``*_high``) of the per-seed
    ratios. Learning: each seed's greedy return (``eval_returns_by_seed``, what a learning
    verdict reads), their mean and standard deviation. ``other_load_cores``: the median
    (and ``_max``) over seeds of the CPU cores other programs kept busy during the runs
    (:class:`~hetero_tutorial.core.contention.LoadMeter`), None where every run was too
    short to tell (:func:`load_fields`).
    """
    keys = list(
        dict.fromkeys((r["plan"], r["backend"], r["workers"], r["max_policy_lag"]) for r in rows)
    )
    summary = []
    for plan, backend, workers, lag in keys:
        mine = [
            r
            for r in rows
            if (r["plan"], r["backend"], r["workers"], r["max_policy_lag"])
            == (plan, backend, workers, lag)
        ]
        returns = [r["eval_return_mean"] for r in mine]
        speedups = [r["speedup_vs_sequential"] for r in mine]
        loads = [r["other_load_cores"] for r in mine if r.get("other_load_cores") is not None]
        entry = {
            "plan": plan,
            "backend": backend,
            "workers": workers,
            "max_policy_lag": lag,
            "seeds": len(mine),
            "env_steps_per_s": statistics.median(r["env_steps_per_s"] for r in mine),
            "speedup_vs_sequential": statistics.median(speedups),
            "speedup_low": min(speedups),
            "speedup_high": max(speedups),
            "eval_return_mean": statistics.fmean(returns),
            "eval_returns_by_seed": returns,
            "eval_return_spread": _spread(returns),
            "other_load_cores": statistics.median(loads) if loads else None,
            "other_load_cores_max": max(loads) if loads else None,
        }
        if plan != SEQUENTIAL:
            entry |= {
                name: statistics.median(r[name] for r in mine)
                for name in (
                    "ideal_speedup",
                    "share_of_ideal",
                    "own_phase_ideal",
                    "learner_idle_share",
                    "worker_idle_share",
                )
            }
            entry["dropped_rollouts"] = sum(r["dropped_rollouts"] for r in mine)
            for name in ("sequential_phase_s", "own_phase_s"):
                entry[name] = [statistics.median(r[name][i] for r in mine) for i in (0, 1)]
        summary.append(entry)
    return summary


# --- The sequential plan's timeline, for the Gantt chart --------------------------------------


class _TimedTrainer(PPOTrainer):
    """PPOTrainer that also records its phases as intervals on the overlapped engine's clock."""

    timeline: Timeline

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = CLOCK()
        with super().phase(name):
            yield
        kind = "rollout" if name in ROLLOUT_PHASES else "update"
        process, last = f"{SEQUENTIAL}: {kind}", self.timeline.intervals[-1:]
        if last and last[0]["process"] == process:  # the next phase of the same kind: one bar
            last[0]["end"] = CLOCK() - self.timeline.origin
        else:
            self.timeline.add(process, kind, start, CLOCK())


def sequential_timeline(
    config: PPOConfig,
    placement: Placement | str = "hybrid",
    seed: int = 0,
    seconds: float = TIMELINE_SECONDS,
    threads: int = 1,
    max_iterations: int = 200,
) -> list[dict[str, Any]]:
    """Intervals of sequential iterations, one lane for the rollouts and one for the updates
    (each lane's gaps are its idle time: the other is working), covering at least ``seconds``
    from the start of the second rollout, as the overlapped timelines are drawn: so that
    both plans fill the same time axis (at most ``max_iterations``).

    ``threads``: PyTorch CPU threads, as the study's runs use (default 1: the learner and
    each worker keep to their own core; notebook 03 measures which count is fastest).
    """
    config = replace(config, total_steps=(max_iterations + 1) * config.batch_size)
    with torch_threads(threads):
        trainer = _TimedTrainer(config, as_placement(placement), seed)
        trainer.timeline = Timeline()
        trainer.run_iteration()  # warm-up, left out of the picture
        trainer.timeline = Timeline()
        for done in range(1, max_iterations + 1):
            trainer.run_iteration()
            intervals = trainer.timeline.intervals
            rollouts = [i["start"] for i in intervals if i["kind"] == "rollout"]
            if done >= 2 and intervals[-1]["end"] - rollouts[1] >= seconds:
                break
        trainer.close()
    return trainer.timeline.intervals
