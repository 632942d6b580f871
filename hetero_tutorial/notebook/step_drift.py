"""Notebook 00's section 5: one step timed twice in one run, and against earlier runs of this
kind of machine. The drift between two timings, the error bar to quote, C1's CPU half over
both timings, the grid's forward set beside the step that runs it, and their picture."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from hetero_tutorial.core import machine_load, results
from hetero_tutorial.core.findings import Check, Expectation, Finding
from hetero_tutorial.core.machine import fingerprint
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import Spread, format_seconds, quartiles
from hetero_tutorial.ledger.rules import C1_CPU_BAND, C1_CPU_S


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
        (
            timing["cpu"]["median_s"] - timing.get("env_only", policy_step["env_only"])["median_s"],
            timing["cpu"]["median_s"],
            timing.get("env_only", policy_step["env_only"])["median_s"],
        )
        for timing in [policy_step, *([again] if again else [])]
    )
    (smaller, step, env), (larger, other_step, other_env) = parts[0], parts[-1]
    loops = cell.get("calls_per_repeat", 1)
    cheaper = " in its cheaper timing" if again else ""
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
                f"forward fits under the other's policy part ({larger * 1e6:.3g} us: "
                f"{format_seconds(other_step)} less the environment's "
                f"{format_seconds(other_env)})",
                high <= larger,
            )
        )
    return Finding(
        f"The grid's forward alone (width {cell['width']}, batch 1)",
        Spread(median * 1e6, max(0.0, low) * 1e6, high * 1e6, "middle half"),
        Expectation.at_most(
            smaller * 1e6,
            f"the step's policy part (that forward plus its glue){cheaper}, "
            f"{format_seconds(step)} less the environment's {format_seconds(env)}",
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
