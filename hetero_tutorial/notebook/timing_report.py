"""Notebook 00's tables, findings and heat map: devices, stopwatches, the forward grid, C1-C3
(its section 6, busy means contended, is :mod:`~hetero_tutorial.notebook.neighbour_findings`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown
from matplotlib import ticker
from matplotlib.figure import Figure

from hetero_tutorial.core import machine_load, results
from hetero_tutorial.core.findings import Outcome
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.plural import listed
from hetero_tutorial.core.timing import Spread, format_seconds
from hetero_tutorial.notebook.exercises import UNSOLVED
from hetero_tutorial.notebook.step_drift import c1_cpu_finding, earlier_steps, unmatched_note
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.studies.crossover_grid import batches_that_pay

ARTICLE_STEP = {"article: cpu": 0.0003, "article: gpu": 0.0005}
"""The article's C1 figures, in seconds per step: claims to test, not measurements."""


def timers_table(timers: dict[str, dict[str, float]]) -> Markdown:
    """One row per device: the first call, the naive timer and the honest one."""
    seconds = dict.fromkeys(("first_call_s", "naive_s", "honest_s"), format_seconds)
    return markdown_table(
        [{"device": name, **row} for name, row in timers.items()],
        {
            "device": "device",
            "first_call_s": "first call",
            "naive_s": "naive (per call)",
            "honest_s": "honest (median)",
        },
        seconds,
    )


def policy_step_table(costs: dict[str, dict[str, float]]) -> Markdown:
    """One CartPole step per device (and the environment alone), beside the article's."""
    rows = [{"what": name, **cost} for name, cost in costs.items()]
    rows += [
        {"what": name, "median_s": s, "note": "the article's"} for name, s in ARTICLE_STEP.items()
    ]
    return markdown_table(
        rows,
        {"what": "one step", "median_s": "median", "iqr_s": "IQR", "note": ""},
        {"median_s": format_seconds, "iqr_s": format_seconds},
    )


def value_update_table(costs: dict[str, dict[str, float]]) -> Markdown:
    return markdown_table(
        [{"device": name, **cost} for name, cost in costs.items()],
        {"device": "device", "median_s": "median per update", "iqr_s": "IQR"},
        {"median_s": format_seconds, "iqr_s": format_seconds},
    )


def crossover_table(widths_by_batch: dict[int, int | None]) -> Markdown:
    return markdown_table(
        [
            {"batch": b, "width": w if w is not None else "never"}
            for b, w in widths_by_batch.items()
        ],
        {"batch": "batch size", "width": "accelerator wins from width"},
    )


def references() -> Markdown | None:
    """Notebook 00's measurements recorded on machines with an accelerator; None where there
    are none (the notebook's one line about the GPU case says so)."""
    found = results.load_references("bench.crossover", with_accelerator=True)
    if not found:
        return None
    return markdown_table(
        [
            {
                "machine": r.hardware,
                "date": r.provenance["date"][:10],
                "c1": r.data["policy_step_speedup"],
                "c2": r.data["value_update_speedup"],
                "crossover": r.data["crossover_width_by_batch"],
            }
            for r in found
        ],
        {
            "machine": "machine",
            "date": "date",
            "c1": "C1: accel/CPU speed, one step",
            "c2": "C2: accel/CPU speed, update",
            "crossover": "crossover width by batch",
        },
        timed=False,
    )


@judged("all")
def findings(
    timers: dict[str, dict[str, float]],
    grid: list[dict[str, Any]],
    policy_step: dict[str, dict[str, float]],
    operations: int,
    again: dict[str, dict[str, float]] | None = None,
) -> list[str]:
    """What notebook 00 measured on this CPU, each line from the numbers; with ``again`` (the
    step timed a second time), C1's CPU half as a finding over the two timings."""
    cpu = timers["cpu"]
    step, env = policy_step["cpu"]["median_s"], policy_step["env_only"]["median_s"]
    said = format_seconds(step)
    if again is not None:  # the figure C1's finding reads: both timings, widened by their drift
        both = Spread.across_runs(policy_step["cpu"], again["cpu"])
        said = f"{format_seconds(both.value)} over two timings ({format_seconds(both.low)} to "
        said += f"{format_seconds(both.high)})"
    c1 = f"One 128-unit policy step: {said}, {format_seconds(env)} of it the environment, "
    c1 += f"{operations} PyTorch operators"
    if again is not None:
        finding = c1_cpu_finding(policy_step["cpu"], again["cpu"])
        c1 += f"; C1's CPU half: {finding.outcome.value}"
        if finding.outcome is Outcome.NOT_HELD:  # which way: a verdict without it says little
            cheaper = finding.expected.place(finding.measured.value) == "below"
            c1 += (
                f", {'cheaper' if cheaper else 'dearer'} than the article's 0.3 ms by more "
                "than its factor of 2"
            )
    c1 += "."
    cheapest = {b["width"]: b["batch_size"] for b in batches_that_pay(grid)}
    largest = max(r["batch_size"] for r in grid if r["device"] == "cpu")
    stops = [f"batch {b} (width {w})" for w, b in cheapest.items() if b != largest]
    still = [str(w) for w, b in cheapest.items() if b == largest]
    paid = f"batch {largest:,}, the largest measured"
    if stops:
        batching = f"Batching stops paying at {', '.join(stops)}"
        batching += f"; at {listed(still, 'width')} it still paid at {paid}" if still else ""
    else:
        batching = f"Batching still paid at {paid}, at {listed(still, 'width')}"
    return [
        f"Honest timing: a 1024-unit forward pass (batch 512) takes "
        f"{format_seconds(cpu['honest_s'])} here; the naive timer read "
        f"{cpu['naive_s'] / cpu['honest_s']:.2f}x that.",
        batching + ".",
        c1,
    ]


def against_reference(
    grid: Sequence[dict[str, Any]] = (), value_update: dict[str, dict[str, float]] | None = None
) -> str:
    """Hand the CPU figures just measured to the busy-machine guard beside the newest earlier
    run of this CPU (:func:`earlier_steps`), which flags the study where one sits 3x or more
    from it while its own spread is tight (:func:`machine_load.compare_to_reference`).
    Returns what was checked: the record it was held against, or that there is none."""
    found = earlier_steps()
    if not found:
        return (
            "No notebook 00 record (bench.crossover) from this kind of machine in data/reference/: "
            "no figure can be held against one, so only the run-queue wait can mark these "
            "timings busy." + unmatched_note()
        )
    newest = max(found, key=lambda r: r.provenance["date"])
    reference = newest.data
    then = {
        (r["width"], r["batch_size"]): r for r in reference.get("grid", []) if r["device"] == "cpu"
    }
    for row in grid:
        old = then.get((row["width"], row["batch_size"]))
        if row["device"] != "cpu" or old is None:
            continue
        machine_load.compare_to_reference(
            f"width {row['width']} at batch {row['batch_size']}:",
            row["seconds_per_call"],
            old["seconds_per_call"],
            row["iqr_s"] / row["seconds_per_call"],
        )
    if value_update is not None and "cpu" in reference.get("value_update", {}):
        now, old = value_update["cpu"], reference["value_update"]["cpu"]
        machine_load.compare_to_reference(
            "the value update:", now["median_s"], old["median_s"], now["iqr_s"] / now["median_s"]
        )
    return (
        f"Held against the record of {newest.provenance['date'][:10]} from this kind of "
        "machine: a figure 3x or more off it, with a tight spread, marks the study busy."
    )


def _row(device: str, width: int, batch: int, per_sample: float) -> dict[str, Any]:
    return {"device": device, "width": width, "batch_size": batch, "seconds_per_sample": per_sample}


def exercise_cases(grid: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The inputs the batching exercise is checked on: this machine's grid first, then a grid
    with a tie (the smaller batch wins it) and one with a second device to ignore."""
    tie = [_row("cpu", 64, 1, 3e-6), _row("cpu", 64, 16, 1e-6), _row("cpu", 64, 256, 1e-6)]
    two = [_row("cpu", 8, 1, 2e-6), _row("cpu", 8, 4, 1e-6), _row("cuda:0", 8, 1, 1e-7)]
    two += [_row("cuda:0", 8, 4, 9e-6), _row("cpu", 16, 4, 3e-6), _row("cpu", 16, 1, 4e-6)]
    return [(grid,), (tie,), (two, "cpu"), (two, "cuda:0")]


def guess_line(guess: int | None, answer: dict[int, int] | None, width: int) -> str:
    """The learner's prediction beside what their (checked) function found on this machine."""
    if answer is None:
        return UNSOLVED
    found = answer.get(width)
    if guess is None:
        return f"The cheapest batch per sample at width {width} here: {found}. (No guess written.)"
    verdict = "as you predicted" if guess == found else f"not {guess}, as you predicted"
    return f"The cheapest batch per sample at width {width} here is {found}: {verdict}."


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
        ax.set_title(f"{device}: us per sample{machine_load.busy_mark()}")
    bar = fig.colorbar(
        image,
        ax=axes[0].tolist(),
        label="microseconds per sample (log)",
        format=ticker.FuncFormatter(lambda value, _: f"{value:g}"),  # 0.1, 1, 10: not 10^-1
    )
    bar.ax.xaxis.set_visible(False)  # a vertical colour bar's width means nothing
    return fig
