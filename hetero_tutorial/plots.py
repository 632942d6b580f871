"""The matplotlib figures the notebooks show. Each takes measured rows and returns the figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure


def forward_cost_heatmap(rows: Sequence[dict[str, Any]], devices: Sequence[str]) -> Figure:
    """One heat map per device of microseconds per sample over width x batch size (log colour)."""
    widths = sorted({r["width"] for r in rows})
    batches = sorted({r["batch_size"] for r in rows})
    cost = {(r["device"], r["width"], r["batch_size"]): r["seconds_per_sample"] * 1e6 for r in rows}
    fig, axes = plt.subplots(1, len(devices), figsize=(5.2 * len(devices), 4), squeeze=False)
    values = np.array(list(cost.values()))
    norm = plt.matplotlib.colors.LogNorm(vmin=values.min(), vmax=values.max())
    for ax, device in zip(axes[0], devices, strict=True):
        grid = np.array([[cost[(device, w, b)] for b in batches] for w in widths])
        image = ax.imshow(grid, origin="lower", cmap="viridis", norm=norm, aspect="auto")
        for i in range(len(widths)):
            for j in range(len(batches)):
                shade = "k" if norm(grid[i, j]) > 0.6 else "w"  # dark text on the bright cells
                ax.text(
                    j, i, f"{grid[i, j]:.3g}", ha="center", va="center", color=shade, fontsize=7
                )
        ax.set_xticks(range(len(batches)), [str(b) for b in batches])
        ax.set_yticks(range(len(widths)), [str(w) for w in widths])
        ax.set_xlabel("batch size")
        ax.set_ylabel("hidden width")
        ax.set_title(f"{device}: us per sample")
    fig.colorbar(image, ax=axes[0].tolist(), label="microseconds per sample (log)")
    return fig
