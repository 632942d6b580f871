"""Notebook 07's two figures: environment throughput against the number of environments,
with the crossings marked, and PPO's training seconds to solve CartPole per configuration."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from hetero_tutorial.studies.env_throughput import crossings

STYLES = {"gymnasium-sync": "o-", "gymnasium-vector": "s--", "batched-cpu": "^-"}
"""Marker and line per implementation; an accelerator's batched line gets ``D-``."""


def throughput_lines(rows: Sequence[dict[str, Any]], env_ids: Sequence[str]) -> Figure:
    """Env steps/s against the number of environments, log-log, one panel per env id.

    Every implementation is a line; a cross marks where two lines cross (interpolated
    between the measured points around it).
    """
    fig, axes = plt.subplots(1, len(env_ids), figsize=(6 * len(env_ids), 4), squeeze=False)
    for ax, env_id in zip(axes[0], env_ids, strict=True):
        measured = [r for r in rows if r["env_id"] == env_id and r["env_steps_per_s"]]
        for name in dict.fromkeys(r["implementation"] for r in measured):
            points = sorted((r["num_envs"], r["env_steps_per_s"]) for r in measured
                            if r["implementation"] == name)  # fmt: skip
            n, rate = np.array(points, dtype=float).T
            ax.plot(n, rate, STYLES.get(name, "D-"), label=name)
        for cross in crossings(rows, env_id):
            lo, hi = cross["between"]
            rates = [_rate(measured, cross["faster_above"], n) for n in (lo, hi)]
            at = cross["num_envs"]  # the crossing's height, interpolated like its position
            height = np.exp(np.interp(np.log(at), np.log([lo, hi]), np.log(rates)))
            ax.plot([at], [height], "kx", markersize=9)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers (1k, 10M), not mathtext powers
            axis.set_major_formatter(FuncFormatter(_compact))
        ax.set_xlabel("number of environments (N)")
        ax.set_ylabel("environment steps per second")
        ax.set_title(f"{env_id}: throughput (x: lines cross)")
        ax.grid(alpha=0.3, which="both")
        ax.legend()
    fig.tight_layout()
    return fig


def _compact(value: float, _position: object = None) -> str:
    """A log axis's tick as a short plain number: 0.1, 1, 100, 1k, 10M."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"


def _rate(rows: Sequence[dict[str, Any]], name: str, num_envs: int) -> float:
    return next(
        r["env_steps_per_s"]
        for r in rows
        if r["implementation"] == name and r["num_envs"] == num_envs
    )


def seconds_to_solve(rows: Sequence[dict[str, Any]], budget_note: str = "") -> Figure:
    """Wall seconds of training to solve (:func:`rule_words`), one column per configuration.

    Each seed is a dot, the median of the solved seeds a bar; a seed that did not solve
    within its budget is a red cross on the top edge.
    """
    configurations = list(dict.fromkeys((r["implementation"], r["num_envs"]) for r in rows))
    fig, ax = plt.subplots(figsize=(1.6 * len(configurations) + 2, 3.8))
    solved_times = [r["seconds_to_475"] for r in rows if r["solved"]]
    top = 1.15 * max(solved_times, default=1.0)
    # one column per configuration, named: a category axis
    ax.xaxis.update_units([f"{name}\nN={n}" for name, n in configurations])
    for x, (name, n) in enumerate(configurations):
        runs = [r for r in rows if (r["implementation"], r["num_envs"]) == (name, n)]
        times = [r["seconds_to_475"] for r in runs if r["solved"]]
        if times:
            ax.bar(x, np.median(times), color="C0", alpha=0.35, width=0.6)
        ax.plot([x] * len(times), times, "o", color="C0")
        misses = len(runs) - len(times)
        ax.plot([x] * misses, [top] * misses, "x", color="red", markersize=9, clip_on=False)
    ax.set_ylim(0, top)
    ax.set_ylabel("training seconds to solve")
    ax.set_title(
        "PPO on CartPole-v1: wall time to solve (bar: median; x: not solved)" + budget_note
    )
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig
