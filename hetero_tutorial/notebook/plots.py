"""The figures notebooks 01 and 03 both draw of PPO runs: learning curves and time per phase.

Each takes measured rows and returns the figure; a figure only one notebook draws lives in
that notebook's report module."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from hetero_tutorial.core import machine_load


def learning_curves(
    curves: dict[str, Sequence[tuple[int, float]]],
    title: str = "",
    window: int = 20,
    ylabel: str = "episode return",
) -> Figure:
    """Return against environment steps, one line per curve.

    A long curve (training episodes) is smoothed by a moving average over ``window``
    points, or over a tenth of its points, and its legend says so; a handful of points
    (greedy evaluations) stays raw.
    """
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for (label, points), style in zip(curves.items(), ("-", "--", ":", "-."), strict=False):
        if not points:
            continue
        steps, returns = np.array(points, dtype=float).T
        width = max(1, min(window, len(returns) // 10))
        kernel = np.ones(width) / width
        shown = label if width == 1 else f"{label} (moving average of {width})"
        ax.plot(steps[width - 1 :], np.convolve(returns, kernel, "valid"), style, label=shown)
    ax.set_xlabel("environment steps")
    ax.set_ylabel(ylabel)
    ax.set_title(title + machine_load.busy_mark())
    ax.legend()
    ax.grid(alpha=0.3)
    return fig


def phase_bars(phase_seconds: dict[str, dict[str, float]], per: str = "s") -> Figure:
    """Stacked bars of seconds per phase, one bar per run (``per`` labels the unit)."""
    labels = list(phase_seconds)
    phases = list(dict.fromkeys(p for run in phase_seconds.values() for p in run))
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(labels), 3.6))
    bottom = np.zeros(len(labels))
    for phase in phases:
        values = np.array([phase_seconds[label].get(phase, 0.0) for label in labels])
        ax.bar(labels, values, bottom=bottom, label=phase)
        bottom += values
    ax.set_ylabel(f"seconds {per}")
    ax.legend(loc="upper left", bbox_to_anchor=(1, 1))
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(machine_load.busy_mark().strip())
    fig.tight_layout()
    return fig
