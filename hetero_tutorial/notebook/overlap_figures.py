"""Notebook 06's figures: the Gantt chart of who waits for whom, the speed-up by worker
count against its ideal, training returns by lag bound, and approx KL and clip fraction by
lag (the tables and sentences are :mod:`~hetero_tutorial.notebook.overlap_report`'s)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

KINDS = {
    "rollout": {"color": "tab:blue", "label": "rollout (collect + advantages)"},
    "update": {"color": "tab:orange", "label": "update (copy in, epochs, weights out)"},
    "wait_rollout": {"color": "0.8", "hatch": "//", "label": "learner waits for a rollout"},
    "wait_weights": {"color": "0.8", "hatch": "..", "label": "worker waits for new weights"},
    "wait_slot": {"color": "0.8", "hatch": "xx", "label": "worker waits for a free slot"},
}
"""How each kind of interval is drawn. Blank space is idle time nobody recorded."""


def _steady_start(timeline: Sequence[dict[str, Any]]) -> float:
    """Where a timeline's steady part begins: the start of its second rollout."""
    starts = sorted(i["start"] for i in timeline if i["kind"] == "rollout")
    return starts[1] if len(starts) > 1 else min((i["start"] for i in timeline), default=0.0)


def gantt(timelines: dict[str, Sequence[dict[str, Any]]], seconds: float = 1.0) -> Figure:
    """One panel per timeline, one row per process: ``seconds`` of each, from its steady part.

    ``timelines`` maps a title to intervals ``{process, kind, start, end}`` (seconds). The
    panels share the time axis, so the same second of work can be compared across plans.
    """
    rows = [len({i["process"] for i in timeline}) for timeline in timelines.values()]
    fig, axes = plt.subplots(
        len(timelines),
        1,
        figsize=(9, 1.2 + sum(0.5 + 0.45 * n for n in rows)),
        sharex=True,
        height_ratios=[0.5 + n for n in rows],
        squeeze=False,
    )
    axes = axes[:, 0]
    for ax, (title, timeline) in zip(axes, timelines.items(), strict=True):
        origin = _steady_start(timeline)
        processes = sorted({i["process"] for i in timeline}, key=_process_order)
        ax.yaxis.update_units(processes)  # one row per process, named: a category axis
        for process in processes:
            for kind, style in KINDS.items():
                spans = [
                    (i["start"] - origin, i["end"] - i["start"])
                    for i in timeline
                    if i["process"] == process and i["kind"] == kind and i["end"] > origin
                ]
                if spans:
                    starts, widths = zip(*spans, strict=True)
                    ax.barh(
                        [process] * len(spans),
                        widths,
                        left=starts,
                        height=0.7,
                        color=style["color"],
                        hatch=style.get("hatch"),
                        edgecolor="0.5" if "hatch" in style else style["color"],
                        linewidth=0.3,
                    )
        ax.set_ylim(-0.6, len(processes) - 0.4)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
    axes[-1].set_xlim(0, seconds)
    axes[-1].set_xlabel("seconds (from the second rollout; blank = idle)")
    handles = [
        Patch(facecolor=s["color"], hatch=s.get("hatch"), edgecolor="0.5", label=s["label"])
        for s in KINDS.values()
    ]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, bbox_to_anchor=(0.5, 0))
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def _process_order(process: str) -> tuple[int, str]:
    return (0 if "rollout" in process or process.startswith("worker") else 1, process)


def speedup_by_workers(summary: Sequence[dict[str, Any]]) -> Figure | None:
    """Speed-up over the sequential plan against the number of workers, one line per
    backend and lag (median and range over seeds), beside each lag's ideal (dashed); None,
    and no figure, where the study ran one worker count."""
    entries = [e for e in summary if e["plan"] != "sequential"]
    if len({e["workers"] for e in entries}) < 2:
        return None  # one worker count: a plot against workers would have one x value
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    lags = sorted({e["max_policy_lag"] for e in entries})
    for colour, lag in zip(plt.rcParams["axes.prop_cycle"].by_key()["color"], lags, strict=False):
        for backend, marker in (("mp", "o-"), ("ray", "s:")):
            mine = sorted(
                (e for e in entries if e["backend"] == backend and e["max_policy_lag"] == lag),
                key=lambda e: e["workers"],
            )
            if not mine:
                continue
            workers = [e["workers"] for e in mine]
            median = np.array([e["speedup_vs_sequential"] for e in mine])
            spread = [median - [e["speedup_low"] for e in mine], [e["speedup_high"] for e in mine]]
            spread[1] = np.array(spread[1]) - median
            label = f"{backend}, lag {lag}"
            ax.errorbar(workers, median, yerr=spread, fmt=marker, color=colour, label=label)
        ideal = {e["workers"]: e["ideal_speedup"] for e in entries if e["max_policy_lag"] == lag}
        points = sorted(ideal.items())
        ax.plot(
            *zip(*points, strict=True),
            "--",
            marker="_",
            markersize=24,
            color=colour,
            alpha=0.6,
            label=f"ideal, lag {lag}",
        )
    ax.axhline(1.0, color="k", linewidth=0.8, label="sequential plan")
    ax.set_xticks(sorted({e["workers"] for e in entries}))
    ax.set_xlabel("rollout workers")
    ax.set_ylabel("env steps/s / sequential plan's")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def learning_by_lag(
    curves: dict[str, Sequence[Sequence[tuple[int, float]]]], title: str = ""
) -> Figure:
    """Training return against environment steps: per label, the mean over seeds of their
    learning curves (points at the same steps), and the range over seeds as a band."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    styles = ("-", "--", ":", "-.")
    for (label, per_seed), style in zip(curves.items(), styles * len(curves), strict=False):
        by_step: dict[int, list[float]] = {}
        for curve in per_seed:
            for step, value in curve:
                by_step.setdefault(step, []).append(value)
        steps = sorted(s for s, v in by_step.items() if len(v) == len(per_seed))
        if not steps:
            continue
        values = [by_step[s] for s in steps]
        mean = [float(np.mean(v)) for v in values]
        (line,) = ax.plot(steps, mean, style, label=f"{label} (mean of {len(per_seed)} seeds)")
        low, high = [min(v) for v in values], [max(v) for v in values]
        ax.fill_between(steps, low, high, color=line.get_color(), alpha=0.2)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("training episode return")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def clipping_by_lag(by_lag: dict[str, dict[str, float]]) -> Figure:
    """Approx KL and clip fraction at an update's first and last minibatch, per policy lag."""
    lags = list(by_lag)
    fig, (kl, clip) = plt.subplots(1, 2, figsize=(9, 3.2))
    x = np.arange(len(lags))
    for ax, first, last, name in (
        (kl, "start_approx_kl", "approx_kl", "approx KL"),
        (clip, "start_clipfrac", "clipfrac", "clip fraction"),
    ):
        ax.xaxis.update_units([f"lag {g}" for g in lags])  # named groups: a category axis
        bars = [
            ax.bar(x - 0.2, [by_lag[g][first] for g in lags], 0.4, label="first minibatch"),
            ax.bar(x + 0.2, [by_lag[g][last] for g in lags], 0.4, label="last minibatch"),
        ]
        for group in bars:  # a bar of height 0 is a measured 0, not a missing one: say it
            ax.bar_label(group, fmt="%.2g", fontsize=7, padding=1)
        ax.set_ylim(bottom=0)
        if not any(bar.get_height() > 0 for group in bars for bar in group):
            ax.set_ylim(0, 1)
            ax.text(0.5, 0.6, f"{name} 0 at every lag", ha="center", transform=ax.transAxes)
        ax.set_title(name)
        ax.grid(axis="y", alpha=0.3)
    kl.legend(fontsize=8)
    fig.tight_layout()
    return fig
