"""Notebook 00's tables, findings and heat map: devices, stopwatches, the forward grid, C1-C3."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown
from matplotlib import ticker
from matplotlib.figure import Figure

from hetero_tutorial.core import machine_load, results
from hetero_tutorial.core.machine import fingerprint
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.timing import Spread, format_seconds
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.studies.crossover_grid import batching_sentence
from hetero_tutorial.studies.neighbours import CASES, NeighbourRun

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
) -> list[str]:
    """What notebook 00 measured on this CPU, each line from the numbers."""
    cpu = timers["cpu"]
    step, env = policy_step["cpu"]["median_s"], policy_step["env_only"]["median_s"]
    return [
        f"Honest timing: a 1024-unit forward pass (batch 512) takes "
        f"{format_seconds(cpu['honest_s'])} here; the naive timer read "
        f"{cpu['naive_s'] / cpu['honest_s']:.2f}x that.",
        batching_sentence(grid),
        f"One 128-unit policy step: {format_seconds(step)} ({format_seconds(env)} of it the "
        f"environment), {operations} PyTorch operators; C1's CPU half says 300 us.",
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


def _apart(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


@judged()
def drift_sentence(
    first: dict[str, float],
    second: dict[str, float],
    seconds_apart: float,
    earlier: Sequence[results.Record] | None = None,
    what: str = "C1's CPU step",
) -> str:
    """One piece timed twice in one run, minutes apart: the drift between the two medians
    beside each timing's own IQR, and (``earlier``, for C1's step) the step of earlier runs
    on this kind of machine.

    ``first`` and ``second``: the two timings (median and IQR in seconds). A spread within
    one timing says how steady a minute was; the gap between two timings says how steady the
    machine is, and only the second is a fair error bar for a comparison with another day's
    run. A piece at several threads sees what a thread sweep sees: one thread of a team
    that others preempt stalls the whole team, where a one-thread piece barely notices.
    """
    a, b = first["median_s"], second["median_s"]
    drift = abs(b - a) / a
    iqr = max(first["iqr_s"] / a, second["iqr_s"] / b)
    text = (
        f"{what} timed twice, {_apart(seconds_apart)} apart: {format_seconds(a)} "
        f"(IQR {format_seconds(first['iqr_s'])}), then {format_seconds(b)} (IQR "
        f"{format_seconds(second['iqr_s'])}): the medians differ by {drift:.0%}, against IQRs "
        f"of at most {iqr:.0%} of a median. "
    )
    if drift > iqr:
        text += (
            "The drift between the timings is wider than either timing's own spread: an IQR "
            "says how steady one minute was, not this machine; compare across runs with the "
            f"range {format_seconds(min(a, b))}-{format_seconds(max(a, b))}."
        )
    else:
        text += "The drift stayed within the timings' own spread this time."
    if earlier is None:
        return text
    if not earlier:
        return text + (
            " No earlier run of this CPU (the same model, family and vector instructions) is "
            "recorded in data/reference/, so there is no day-to-day range to set beside it."
        )
    for record in earlier:
        then = record.data["policy_step"]["cpu"]["median_s"]
        text += (
            f" An earlier run on this kind of machine ({record.hardware}, "
            f"{record.provenance['date'][:16].replace('T', ' ')} UTC) measured "
            f"{format_seconds(then)}: {then / a:.2f}x this run's first timing."
        )
    return text


def against_reference(
    grid: Sequence[dict[str, Any]] = (), value_update: dict[str, dict[str, float]] | None = None
) -> None:
    """Hand the CPU figures just measured to the busy-machine guard beside the newest earlier
    run of this CPU (:func:`earlier_steps`), which flags the study where one sits 3x or more
    from it while its own spread is tight (:func:`machine_load.compare_to_reference`)."""
    found = earlier_steps()
    if not found:
        return
    reference = max(found, key=lambda r: r.provenance["date"]).data
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


def guard_reading(figures: object) -> str:
    """What the busy-machine guard read while the study that returned ``figures`` ran."""
    found = machine_load.readings_of(figures)
    if not found:
        return "The busy-machine guard took no reading of this study (it is switched off)."
    return " ".join(r.line() if r.busy else r.quiet_line() for r in found)


def neighbour_table(runs: Sequence[NeighbourRun]) -> Markdown:
    """One row per run of the pinned loop: its speed, its wait, others' load, the guard."""
    rows = [
        {
            "case": r.case,
            "round": r.round + 1,
            "calls_per_s": r.calls_per_s,
            "wait": "not read here" if r.wait_share is None else f"{r.wait_share:.3f}",
            "on_its_cpu": r.others_on_its_cpu,
            "anywhere": r.others_anywhere,
            "guard": "judged" if r.judged else "not judged",
        }
        for r in runs
    ]
    return markdown_table(
        rows,
        {
            "case": "the loop ran",
            "round": "round",
            "calls_per_s": "calls/s",
            "wait": "wait per CPU second",
            "on_its_cpu": "others on its CPU (cores)",
            "anywhere": "others anywhere (cores)",
            "guard": "the guard",
        },
        {
            "calls_per_s": "{:,.0f}".format,
            "on_its_cpu": "{:.2f}".format,
            "anywhere": "{:.2f}".format,
        },
    )


def _speed_against_alone(runs: Sequence[NeighbourRun], case: str) -> Spread:
    alone = {r.round: r.calls_per_s for r in runs if r.case == CASES[0]}
    beside = {r.round: r.calls_per_s for r in runs if r.case == case}
    rounds = sorted(alone.keys() & beside.keys())
    ratios = [beside[i] / alone[i] for i in rounds]
    return Spread.of_ratios(ratios, per="round")


def neighbour_findings(runs: Sequence[NeighbourRun], guess: str | None) -> list[str]:
    """What the neighbour study found, each comparison with the side it came out on, and
    the learner's guess (``"as fast"`` or ``"slower"``) beside it."""
    alone = [r for r in runs if r.case == CASES[0]]
    if not all(r.judged for r in alone):
        return [
            "The loop alone was itself held back (others ran on its CPU while it waited), so "
            "this machine is busy now: no verdict on the neighbours. Close other programs "
            "and run the cell again."
        ]
    lines = []
    for case in CASES[1:]:
        spread = _speed_against_alone(runs, case)
        mine = [r for r in runs if r.case == case]
        if not spread.measured:
            side = "one round gives no spread: no verdict on a change in speed"
        elif min(spread.low, spread.high) > 1 / 1.1:
            side = "within 10% in every round: as fast, by this measure"
        elif max(spread.low, spread.high) < 1 / 1.1:
            side = "slower than alone in every round"
        else:
            side = "slower in some rounds only: no verdict"
        judged = sum(r.judged for r in mine)
        lines.append(
            f"{case[0].upper()}{case[1:]}, the loop ran at {spread} its speed alone: "
            f"{side}. The guard judged {judged} of {len(mine)} such runs."
        )
    other = _speed_against_alone(runs, CASES[1])
    if guess not in ("as fast", "slower"):
        lines.append('Write "as fast" or "slower" into MY_NEIGHBOUR_GUESS to compare.')
    elif not other.measured:
        lines.append(f'You guessed "{guess}"; one round cannot tell: run more rounds.')
    else:
        as_fast = min(other.low, other.high) > 1 / 1.1
        slower = max(other.low, other.high) < 1 / 1.1
        if not (as_fast or slower):
            lines.append(f'You guessed "{guess}"; the rounds disagree: no verdict on it.')
        else:
            held = (guess == "as fast") == as_fast
            found = "as fast" if as_fast else "slower"
            lines.append(
                f'You guessed "{guess}" beside a neighbour on another core; it ran {found}: '
                f"{'your guess held' if held else 'your guess broke'}."
            )
    return lines
