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
from hetero_tutorial.core.findings import Check, Expectation, Finding
from hetero_tutorial.core.machine import fingerprint
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import Spread, format_seconds, quartiles
from hetero_tutorial.ledger.rules import C1_CPU_BAND, C1_CPU_S
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
        said = f"{format_seconds(both.value)} over two timings ({_span(both)})"
    c1 = f"One 128-unit policy step: {said} ({format_seconds(env)} of it the environment), "
    c1 += f"{operations} PyTorch operators"
    if again is not None:
        finding = c1_cpu_finding(policy_step["cpu"], again["cpu"])
        c1 += f"; C1's CPU half: {finding.outcome.value}"
    c1 += "."
    cheapest = {b["width"]: b["batch_size"] for b in batches_that_pay(grid)}
    largest = max(r["batch_size"] for r in grid if r["device"] == "cpu")
    stops = [f"batch {b} (width {w})" for w, b in cheapest.items() if b != largest]
    still = [str(w) for w, b in cheapest.items() if b == largest]
    paid = f"batch {largest:,}, the largest measured"
    if stops:
        batching = f"Batching stops paying at {', '.join(stops)}"
        batching += f"; at width {', '.join(still)} it still paid at {paid}" if still else ""
    else:
        batching = f"Batching still paid at {paid}, at width {', '.join(still)}"
    return [
        f"Honest timing: a 1024-unit forward pass (batch 512) takes "
        f"{format_seconds(cpu['honest_s'])} here; the naive timer read "
        f"{cpu['naive_s'] / cpu['honest_s']:.2f}x that.",
        batching + ".",
        c1,
    ]


def earlier_steps(kind: str = "bench.crossover") -> list[results.Record]:
    """Earlier runs of notebook 00 recorded on this kind of machine (``data/reference/``):
    the same reference folder (CPU model and core count, or accelerator) and the same CPU
    identity (:func:`results.same_machine`)."""
    here = fingerprint()
    return [
        r
        for r in results.load_references(kind)
        if results.same_machine(here, r.provenance["fingerprint"]) and "policy_step" in r.data
    ]


def unmatched_note(kind: str = "bench.crossover") -> str:
    """Why a record of this machine's name does not count as this kind of machine ("" where
    there is none): its fingerprint predates the CPU identity, and a CPU of the same name may
    be another generation (:func:`results.same_machine`)."""
    here = fingerprint()
    others = [
        r
        for r in results.load_references(kind)
        if results.machine_slug(r.provenance["fingerprint"]) == results.machine_slug(here)
        and not results.same_machine(here, r.provenance["fingerprint"])
    ]
    if not others:
        return ""
    one = len(others) == 1
    return (
        f" ({counted(len(others), 'record')} of a CPU of this name {'is' if one else 'are'} "
        "there without this CPU's identity (family, model, vector instructions): another "
        f"generation may share the name, so {'it does' if one else 'they do'} not count.)"
    )


def _apart(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _span(spread: Spread) -> str:
    return f"{format_seconds(spread.low)} to {format_seconds(spread.high)}"


@judged()
def drift_sentence(
    first: dict[str, float],
    second: dict[str, float],
    seconds_apart: float,
    earlier: Sequence[results.Record] | None = None,
    what: str = "C1's CPU step",
) -> str:
    """One piece timed twice in one run, seconds or minutes apart: the drift between the two
    medians beside each timing's own IQR, the error bar to quote (``Spread.of_timings``), and
    (``earlier``, for C1's step) the step of earlier runs on this kind of machine.

    ``first`` and ``second``: the two timings (median and IQR in seconds). A spread within
    one timing says how steady a minute was; the gap between two timings says how steady the
    machine is, and only the range of both is a fair error bar for a comparison with another
    day's run. A piece at several threads sees what a thread sweep sees: one thread of a team
    that others preempt stalls the whole team, where a one-thread piece barely notices.
    """
    a, b = first["median_s"], second["median_s"]
    drift = Spread.drift(first, second) - 1  # as the ledger reads it: the larger over the smaller
    iqr = max(first["iqr_s"] / a, second["iqr_s"] / b)
    honest = Spread.across_runs(first, second)
    text = (
        f"{what} timed twice, {_apart(seconds_apart)} apart: {format_seconds(a)} "
        f"(IQR {format_seconds(first['iqr_s'])}), then {format_seconds(b)} (IQR "
        f"{format_seconds(second['iqr_s'])}): the medians lie {drift + 1:.2f}x apart, "
    )
    if drift > iqr:
        text += f"wider than either timing's own spread (IQRs at most {iqr:.0%} of a median)."
    else:
        text += f"which stayed within the timings' own spread (IQRs up to {iqr:.0%})."
    text += f" Quote against another run: {_span(honest)}."
    if earlier is None:
        return text
    if not earlier:  # a record of this CPU's name alone: said once, under the grid
        unmatched = (
            " (one of a CPU of this name, named above, does not count)" if unmatched_note() else ""
        )
        return (
            text + " No earlier notebook 00 run (bench.crossover) on this kind of machine is "
            f"recorded in data/reference/{unmatched}."
        )
    for record in earlier:
        then = record.data["policy_step"]["cpu"]["median_s"]
        inside = honest.low <= then <= honest.high
        text += (
            f" An earlier run on this kind of machine ({record.hardware}, "
            f"{record.provenance['date'][:16].replace('T', ' ')} UTC) measured "
            f"{format_seconds(then)}: {then / a:.2f}x this run's first timing, "
            f"{'inside' if inside else 'outside'} that error bar."
        )
    return text


def c1_cpu_finding(first: dict[str, float], second: dict[str, float]) -> Finding:
    """C1's CPU half: this CPU's step, as the range of its two timings widened by their drift
    (``Spread.across_runs``, as the ledger's rule reads it), against the article's 0.3 ms
    within the ledger's factor of 2 (:data:`C1_CPU_BAND`)."""
    spread = Spread.across_runs(first, second)
    micro = Spread(spread.value * 1e6, spread.low * 1e6, spread.high * 1e6, spread.how)
    low, high = (C1_CPU_S * 1e6 * bound for bound in C1_CPU_BAND)
    return Finding(
        "C1's CPU half, one step",
        micro,
        Expectation.between(low, high, "the article's 0.3 ms within a factor of 2"),
        unit="{:.3g} us",
        figures=(first, second),
    )


def _cell(grid: Sequence[dict[str, Any]], width: int) -> dict[str, Any] | None:
    """The CPU's batch-1 row of ``grid`` at ``width`` (or the nearest width measured)."""
    ones = [r for r in grid if r["device"] == "cpu" and r["batch_size"] == 1]
    return min(ones, key=lambda r: abs(r["width"] - width), default=None)


WIDE_IQR = 0.25
"""An IQR above this share of its median: a timing whose own repeats disagree."""


def forward_against_step(
    grid: Sequence[dict[str, Any]],
    policy_step: dict[str, dict[str, float]],
    again: dict[str, dict[str, float]] | None = None,
    width: int = 128,
) -> Finding | str:
    """The grid's forward alone at ``width``, batch 1, against the policy's part of one
    CartPole step (the step less the environment), which runs a forward of that width plus
    its glue (tensor from NumPy, argmax, ``.item()``): at most that part, if both timings hold.
    ``again``: the step timed a second time; the forward must fit under both timings' parts,
    and where it fits under one only, the drift between them is the cause."""
    cell = _cell(grid, width)
    if cell is None:
        return "The grid measured no batch of 1 on the CPU: nothing to set beside the step."
    median, iqr = cell["seconds_per_call"], cell["iqr_s"]
    low, high = quartiles({"median_s": median} | cell)
    parts = sorted(
        timing["cpu"]["median_s"] - timing.get("env_only", policy_step["env_only"])["median_s"]
        for timing in [policy_step, *([again] if again else [])]
    )
    loops = cell.get("calls_per_repeat", 1)
    timings = "both timings of " if again else ""
    checks = [
        Check(
            f"the grid cell's own repeats disagree (IQR {iqr / median:.0%} of its median)",
            iqr / median > WIDE_IQR,
        ),
        Check("the grid timed single calls, the step loops of 50 steps", loops == 1),
    ]
    if again:
        drift = again["cpu"]["median_s"] / policy_step["cpu"]["median_s"]
        checks.append(
            Check(
                f"the step drifted {max(drift, 1 / drift):.2f}x between its timings, and the "
                f"forward fits under the other's policy part ({parts[-1] * 1e6:.3g} us)",
                high <= parts[-1],
            )
        )
    return Finding(
        f"The grid's forward alone (width {cell['width']}, batch 1)",
        Spread(median * 1e6, max(0.0, low) * 1e6, high * 1e6, "middle half"),
        Expectation.at_most(
            parts[0] * 1e6, f"{timings}the step's policy part, that forward plus its glue"
        ),
        unit="{:.3g} us",
        checks=tuple(checks),
        figures=(grid, policy_step, *([again] if again else [])),
    )


def drift_plot(pairs: dict[str, tuple[dict[str, float], dict[str, float]]]) -> Figure:
    """One panel per piece timed twice: each timing's median with its IQR as a bar, and the
    error bar to quote (``Spread.of_timings``) shaded behind them."""
    fig, axes = plt.subplots(1, len(pairs), figsize=(3.2 * len(pairs), 2.8), squeeze=False)
    for ax, (label, (first, second)) in zip(axes[0], pairs.items(), strict=True):
        scale, unit = (1e6, "us") if first["median_s"] < 1e-3 else (1e3, "ms")
        honest = Spread.of_timings(first, second)
        ax.axhspan(
            honest.low * scale, honest.high * scale, color="0.88", label="error bar to quote"
        )
        for x, timing in zip(("first", "second"), (first, second), strict=True):
            low, high = quartiles(timing)
            median = timing["median_s"]
            ax.errorbar(
                [x],
                [median * scale],
                yerr=[[(median - low) * scale], [(high - median) * scale]],
                fmt="o",
                color="C0",
                capsize=6,
                label="median, middle half" if x == "first" else None,
            )
        ax.set_xlim(-0.6, 1.6)  # the two timings as categories, 0 and 1
        ax.set_ylabel(unit)
        ax.set_title(f"{label}{machine_load.busy_mark()}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


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
        return "Solve the exercise above, then run this cell to compare with your guess."
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
