"""DDPG trained with each replay buffer design side by side (C8), and its runs compared.

:func:`train_designs` interleaves one run per design, a slow minute of the machine costing
every design alike; :func:`train_seeds` repeats it over seeds and hands notebook 04 one
:class:`DDPGSummary` per design. :func:`summarise` writes the fields of a ``bench.ddpg``
record from runs over several seeds; :func:`time_ratio` compares two designs' records seed
by seed, only where they ran the same settings and seeds (:func:`unpaired_reason`).

The designs themselves, timed alone (throughput, memory, correlation, pinned sampling), are
:mod:`hetero_tutorial.studies.buffer_designs`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.placement import Placement, as_placement
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.rl.buffers import DESIGNS
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.runs import DDPGResult, interleave
from hetero_tutorial.rl.ddpg.trainer import DDPGTrainer
from hetero_tutorial.speed.compiler import compile_switches


@dataclass(frozen=True, kw_only=True)
class DDPGRun:
    """One seed's DDPG run as a ``bench.ddpg`` record holds it: the figures a report reads,
    and the run's whole record fields (``record``), written back as they came."""

    env_steps_per_s: float
    """environment steps per second once updates run"""
    episode_end_steps: list[int]
    """environment step at which each training episode ended"""
    total_steps: int
    """environment steps of the run"""
    learning_starts: int
    """random-action steps before the first update"""
    count_copies_steps: int = 0
    """last steps run with copies counted, not timed"""
    record: dict[str, Any]
    """the run's record fields (:meth:`DDPGResult.fields`), unchanged"""

    @classmethod
    def from_dict(cls, run: dict[str, Any]) -> DDPGRun:
        """A run from its record fields (a ``bench.ddpg`` record's ``runs``, read back)."""
        config = run["config"]
        return cls(
            env_steps_per_s=run["env_steps_per_s"],
            episode_end_steps=list(run.get("episode_end_steps", [])),
            total_steps=config["total_steps"],
            learning_starts=config["learning_starts"],
            count_copies_steps=config.get("count_copies_steps", 0),
            record=run,
        )


@dataclass(frozen=True, kw_only=True)
class DDPGSummary:
    """Runs of one buffer design over several seeds: the fields of a ``bench.ddpg`` record."""

    buffer: str
    """the buffer design"""
    placement: str
    seeds: list[int]
    env_steps_per_s: float
    """the runs' median environment steps per second"""
    seconds_per_episode: float
    """the runs' median seconds per episode run wholly with updates"""
    copies_per_1000_samples: float
    """the runs' median host<->device copies per 1000 environment steps"""
    eval_return_mean: float
    """the mean over seeds of each run's mean greedy return"""
    eval_return_by_seed: list[float]
    eval_return_spread: float
    """the highest seed's greedy return less the lowest's"""
    runs: list[DDPGRun]

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> DDPGSummary:
        """A summary from a ``bench.ddpg`` record's fields (:func:`summarise`, or read back)."""
        return cls(
            buffer=data["buffer"],
            placement=data["placement"],
            seeds=list(data["seeds"]),
            env_steps_per_s=data["env_steps_per_s"],
            seconds_per_episode=data["seconds_per_episode"],
            copies_per_1000_samples=data["copies_per_1000_samples"],
            eval_return_mean=data["eval_return_mean"],
            eval_return_by_seed=list(data["eval_return_by_seed"]),
            eval_return_spread=data["eval_return_spread"],
            runs=[DDPGRun.from_dict(run) for run in data["runs"]],
        )

    def fields(self) -> dict[str, Any]:
        """The fields of its ``bench.ddpg`` record, as :func:`summarise` writes them."""
        return {
            "buffer": self.buffer,
            "placement": self.placement,
            "seeds": list(self.seeds),
            "env_steps_per_s": self.env_steps_per_s,
            "seconds_per_episode": self.seconds_per_episode,
            "copies_per_1000_samples": self.copies_per_1000_samples,
            "eval_return_mean": self.eval_return_mean,
            "eval_return_by_seed": list(self.eval_return_by_seed),
            "eval_return_spread": self.eval_return_spread,
            "runs": [run.record for run in self.runs],
        }


@guarded("the DDPG buffer race")
def train_designs(
    config: DDPGConfig,
    designs: Sequence[str] = DESIGNS,
    placement: Placement | str = "all-cpu",
    seed: int = 0,
    *,
    threads: int | None = 1,
    eval_episodes: int = 10,
    chunk_steps: int = 200,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, DDPGResult]:
    """DDPG with ``config`` and each buffer design, interleaved ``chunk_steps`` at a time, as
    :func:`~hetero_tutorial.rl.ddpg.runs.train_side_by_side` runs placements: a slow minute
    of the machine costs every design alike. Results keyed by design."""
    placement = as_placement(placement)
    trainers = {
        design: DDPGTrainer(replace(config, buffer=design), placement, seed, threads=threads)
        for design in designs
    }
    return interleave(
        trainers, eval_episodes=eval_episodes, chunk_steps=chunk_steps, progress=progress
    )


@guarded("the DDPG buffer race")
def train_seeds(
    config: DDPGConfig,
    seeds: Sequence[int],
    runs: dict[str, list[DDPGResult]],
    *,
    threads: int | None = 1,
    eval_episodes: int = 10,
    follow: Callable[[], Callable[[int, int], None]] | None = None,
) -> dict[str, DDPGSummary]:
    """:func:`train_designs` for each of ``seeds`` in turn, each result appended to ``runs``
    (per design), so a notebook can spread its seeds over cells that each show a result.
    Returns the summary of every run in ``runs`` so far, per design (:func:`summarise`;
    its record fields are :meth:`DDPGSummary.fields`). ``follow``: makes one progress
    callback per seed (``Progress.follow``)."""
    for seed in seeds:
        together = train_designs(
            config,
            list(runs),
            seed=seed,
            threads=threads,
            eval_episodes=eval_episodes,
            progress=follow() if follow is not None else None,
        )
        for design, result in together.items():
            runs[design].append(result)
    return {
        design: DDPGSummary.from_fields(summarise(found)) for design, found in runs.items() if found
    }


def summarise(results: Sequence[DDPGResult]) -> dict[str, Any]:
    """The fields of a ``bench.ddpg`` record: runs of one configuration over several seeds."""
    return summarise_fields([r.fields() for r in results])


def summarise_fields(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """:func:`summarise` from the runs' record fields (as separate processes write them)."""
    eval_means = [run["eval_return_mean"] for run in runs]
    return {
        "buffer": runs[0]["config"]["buffer"],
        "placement": runs[0]["placement"],
        "seeds": [run_settings(run)[0] for run in runs],
        "env_steps_per_s": statistics.median(run["env_steps_per_s"] for run in runs),
        "seconds_per_episode": statistics.median(run["seconds_per_episode"] for run in runs),
        "copies_per_1000_samples": statistics.median(
            run["copies_per_1000_samples"] for run in runs
        ),
        "eval_return_mean": statistics.mean(eval_means),
        "eval_return_by_seed": eval_means,
        "eval_return_spread": max(eval_means) - min(eval_means),
        "runs": list(runs),
    }


def run_settings(run: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """``(seed, settings)`` of one DDPG run's record fields; the settings are everything that
    shaped the run (config, placement, threads) but its buffer design and its seed.

    Records written while ``DDPGConfig`` held the seed, the placement and the threads keep
    them in ``config``; newer ones beside it, as PPO's do. Both read the same here.
    """
    settings = dict(run["config"])
    if isinstance(settings.get("compile"), str):
        # Records written while DDPGConfig's compile was a mode ("eager", "compile",
        # "cudagraphs") read as the two switches that replaced it, so that an older run
        # pairs with a newer one of the same settings. The records stay as measured.
        settings |= compile_switches(settings["compile"])
    if "seed" in settings:
        seed = settings.pop("seed")
    else:
        seed = run["seed"]
        settings |= {"placement": run["placement"], "threads": run["threads"]}
    settings.pop("buffer", None)
    return seed, settings


def unpaired_reason(top: dict[str, Any], bottom: dict[str, Any]) -> str | None:
    """Why two ``bench.ddpg`` records' runs cannot be paired seed by seed; None when they can.

    A paired ratio means something only when the two ran the same seeds, in the same
    order, with the same settings apart from the buffer: otherwise it compares other
    workloads (another step count, width or placement), not two buffer designs.
    """
    runs = top.get("runs", []), bottom.get("runs", [])
    read = [[run_settings(run) for run in side] for side in runs]
    seeds = [[seed for seed, _ in side] for side in read]
    if not seeds[0] or seeds[0] != seeds[1]:
        return f"the two ran different seeds ({seeds[0]} and {seeds[1]}), so none pair up"
    differ = sorted({
        key
        for (_, a), (_, b) in zip(*read, strict=True)
        for key in a.keys() | b.keys()
        if a.get(key) != b.get(key)
    })  # fmt: skip
    if differ:
        return f"the two ran different settings besides the buffer ({', '.join(differ)})"
    return None


def time_ratio(top: dict[str, Any], bottom: dict[str, Any]) -> tuple[Spread, str]:
    """``top``'s time per episode over ``bottom``'s (two ``bench.ddpg`` records' fields, whose
    seeds ran side by side), spread by their seeds; where no whole episode ran with updates
    (a short run), the inverse ratio of their speeds per step. Returns the spread and what
    it is per (``"per episode"`` or ``"per step"``). Raises :class:`UsageError` when the two
    cannot be paired (:func:`unpaired_reason`)."""
    reason = unpaired_reason(top, bottom)
    if reason is not None:
        raise UsageError(f"cannot compare these DDPG runs: {reason}; run both designs together")
    value = top["seconds_per_episode"] / bottom["seconds_per_episode"]
    if np.isfinite(value):
        runs = [[run["seconds_per_episode"] for run in r["runs"]] for r in (top, bottom)]
        return Spread.of_pairs(*runs, value=value, per="seed"), "per episode"
    value = bottom["env_steps_per_s"] / top["env_steps_per_s"]
    runs = [[run["env_steps_per_s"] for run in r["runs"]] for r in (bottom, top)]
    per = "per step (no whole episode ran with updates)"
    return Spread.of_pairs(*runs, value=value, per="seed"), per
