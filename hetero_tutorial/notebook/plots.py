"""The matplotlib figures the notebooks show. Each takes measured rows and returns the figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import ticker
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
    ax.set_title(title)
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
    fig.tight_layout()
    return fig


def _plans_label(row: dict[str, Any]) -> str:
    plans = row.get("plans", [row["plan"]])
    names = "all five plans" if len(plans) == 5 else ", ".join(plans) or "allocator's devices"
    return f"{names} ({row.get('label', row['plan'])})"


def allocator_comparison(rows: Sequence[dict[str, Any]], tolerance: float = 0.05) -> Figure:
    """Seconds per iteration of each configuration over the best fixed plan's, per network.

    ``rows``: :func:`hetero_tutorial.allocator.trials.compare`'s, one per configuration run
    (the plans it stood for, its devices and threads). The allocator's configuration is
    hatched; the dotted line marks the allowed ``tolerance`` above the best fixed plan.
    """
    fixed = {"fixed-rule", "hybrid", "all-cpu", "all-accelerator"}
    labels, values, hatched = [], [], []
    for network in dict.fromkeys(r["network"] for r in rows):
        mine = [r for r in rows if r["network"] == network]
        best = min(
            r["seconds_per_iteration"] for r in mine if fixed & set(r.get("plans", [r["plan"]]))
        )
        for row in mine:
            labels.append(f"{network}: {_plans_label(row)}")
            values.append(row["seconds_per_iteration"] / best)
            hatched.append("allocator" in row.get("plans", [row["plan"]]))
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.32 * len(labels)))
    positions = np.arange(len(labels))[::-1]
    colours = ["tab:orange" if h else "tab:blue" for h in hatched]
    # bars grow from 1 (the best fixed plan) on a log axis, a dot at each value (1 included)
    bars = ax.barh(positions, np.asarray(values) - 1.0, left=1.0, color=colours, height=0.6)
    for bar, chosen in zip(bars, hatched, strict=True):
        bar.set_hatch("//" if chosen else None)
    ax.scatter(values, positions, color=colours, zorder=3, s=18)
    ax.axvline(1.0, color="k", linewidth=0.8)
    ax.axvline(1 + tolerance, color="k", linestyle=":", label=f"best fixed plan + {tolerance:.0%}")
    ax.set_yticks(positions, labels, fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(min(0.8, min(values) / 1.2), max(1.25, max(values) * 1.2))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}x"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("seconds per iteration / the best fixed plan's (orange: the allocator's)")
    ax.legend(loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def curriculum_timeline(summary: dict[str, Any]) -> Figure:
    """One bar per contender through the curriculum's stages; the allocator's measuring hatched.

    ``summary``: :func:`hetero_tutorial.allocator.trials.curriculum`'s result. Fixed plans
    that ran as one configuration at every stage share a bar; ``threads`` adds the
    allocator's devices at each fixed thread count.
    """
    timeline = summary["timeline"]
    groups: dict[tuple[str, ...], list[str]] = {}
    for plan in summary["totals"]:
        if plan != "allocator":
            groups.setdefault(tuple(step["rows"][plan] for step in timeline), []).append(plan)
    bars = {"allocator (its measuring, then its choice)": [
        (step["decision_seconds"], step["seconds"]["allocator"]) for step in timeline]}  # fmt: skip
    for names in groups.values():
        label = ", ".join(names) + " (at the allocator's threads)"
        bars[label] = [(0.0, step["seconds"][names[0]]) for step in timeline]
    for count in summary.get("threads", {}):
        label = f"allocator's devices, {count} thread{'s' * (count != '1')} at every stage"
        bars[label] = [(0.0, step["by_threads"][count]) for step in timeline]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = plt.subplots(figsize=(9, 0.8 + 0.5 * len(bars)))
    for row, stages in enumerate(bars.values()):
        start = 0.0
        for index, (measuring, seconds) in enumerate(stages):
            if measuring:
                ax.barh(row, measuring, left=start, color="lightgrey", hatch="xx")
                start += measuring
            ax.barh(row, seconds, left=start, color=colours[index % len(colours)])
            start += seconds
    handles = [
        plt.matplotlib.patches.Patch(color=colours[i % len(colours)], label=stage["stage"])
        for i, stage in enumerate(timeline)
    ]
    handles.append(
        plt.matplotlib.patches.Patch(facecolor="lightgrey", hatch="xx", label="measuring")
    )
    ax.set_yticks(range(len(bars)), list(bars), fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds (timed iterations of every stage, in order)")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1, 1))
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def thread_effects(effects: Sequence[dict[str, Any]]) -> Figure:
    """One thread's seconds over all cores', against the width: a line per role.

    ``effects``: :func:`hetero_tutorial.studies.threads.thread_effects`. Above 1, all
    cores are faster; the bars span the paired iterations' ratios (their IQR from five
    on, else their range).
    """
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for role, style in (("rollout", "-o"), ("update", "-s"), ("iteration", ":^")):
        mine = sorted((e for e in effects if e["role"] == role), key=lambda e: e["width"])
        if not mine:
            continue
        widths = [e["width"] for e in mine]
        ratios = np.array([e["ratio"] for e in mine])
        low = np.array([e["low"] if e["low"] is not None else e["ratio"] for e in mine])
        high = np.array([e["high"] if e["high"] is not None else e["ratio"] for e in mine])
        spread = np.vstack([np.maximum(ratios - low, 0), np.maximum(high - ratios, 0)])
        name = {"rollout": "actor (rollout)", "update": "learner (update)"}.get(role, "iteration")
        ax.errorbar(widths, ratios, yerr=spread, fmt=style, capsize=3, label=name)
    threads = effects[0]["threads"] if effects else "all"
    ax.axhline(1.0, color="k", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")  # a ratio: 2x faster and 2x slower lie as far from 1
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:g}x"))
    ax.xaxis.set_major_formatter(ticker.ScalarFormatter())
    ax.set_xlabel("hidden width (units per layer)")
    ax.set_ylabel(f"seconds at 1 thread / at {threads} threads")
    ax.set_title("Above 1: all cores are faster for that part")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


def share_errors(shares: Sequence[float], errors: Sequence[float]) -> np.ndarray:
    """Error bars (2, n) for shares: +- ``errors``, cut at 0% and 100% (a share is neither
    negative nor above one, whatever its standard error)."""
    shares, errors = np.asarray(shares, float), np.asarray(errors, float)
    return np.vstack([np.minimum(errors, shares), np.minimum(errors, 1.0 - shares)])


def transfer_share_bars(runs: dict[str, dict[str, Any]], article: float | None = None) -> Figure:
    """Left: each run's share of training samples in transfers; right: that share per phase.

    ``runs`` maps a label to a ``bench.profile`` record's fields (``transfer_share``,
    ``transfer_share_stderr``, ``transfer_share_by_phase``, ``samples_by_phase``).
    Error bars: binomial standard errors, wide for a phase with few samples.
    ``article``: the article's claimed share, drawn as a dashed line and labelled as
    the article's.
    """
    labels = list(runs)
    fig, (overall, by_phase) = plt.subplots(1, 2, figsize=(10, 3.6), width_ratios=(1, 2))
    shares = [runs[label]["transfer_share"] for label in labels]
    errors = [runs[label].get("transfer_share_stderr", 0.0) for label in labels]
    overall.bar(labels, shares, yerr=share_errors(shares, errors), capsize=4, color="tab:red")
    if article is not None:
        overall.axhline(
            article, color="k", linestyle="--", label=f"article's claim ({article:.0%})"
        )
        overall.legend()
    overall.set_ylabel("share of training samples")
    overall.set_title("in transfers and waits")
    phases = list(dict.fromkeys(p for r in runs.values() for p in r["transfer_share_by_phase"]))
    width = 0.8 / len(labels)
    for i, label in enumerate(labels):
        values = np.array([runs[label]["transfer_share_by_phase"].get(p, 0.0) for p in phases])
        counts = np.array([runs[label]["samples_by_phase"].get(p, 0) for p in phases])
        spread = np.sqrt(values * (1 - values) / np.maximum(counts, 1))
        x = np.arange(len(phases)) + i * width
        by_phase.bar(x, values, width, yerr=share_errors(values, spread), capsize=3, label=label)
    by_phase.set_xticks(np.arange(len(phases)) + width * (len(labels) - 1) / 2, phases)
    by_phase.set_ylabel("share of the phase's samples")
    by_phase.set_title("in transfers and waits, per phase")
    by_phase.legend()
    for ax in (overall, by_phase):
        ax.yaxis.set_major_formatter(ticker.PercentFormatter(1.0))
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def buffer_sampling_rates(rows: Sequence[dict[str, Any]]) -> Figure:
    """Sampled transitions per second against buffer capacity: a line per design and device."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    devices = list(dict.fromkeys(r["device"] for r in rows))
    for design in dict.fromkeys(r["design"] for r in rows):
        for device, style in zip(devices, ("-o", "--s", ":^"), strict=False):
            points = sorted(
                (r["capacity"], r["sample_transitions_per_s"])
                for r in rows
                if r["design"] == design and r["device"] == device
            )
            capacities, rates = zip(*points, strict=True)
            ax.plot(capacities, rates, style, label=f"{design} -> {device}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("buffer capacity (transitions)")
    ax.set_ylabel("sampled transitions per second")
    ax.set_title(f"sampling batches of {rows[0]['batch_size']}")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    return fig


def seconds_per_round_bars(
    measured: dict[str, float], article: dict[str, float], measured_label: str
) -> Figure:
    """Measured seconds per episode per design beside the article's seconds per round.

    The two panels have separate axes: the article's figures come from its own
    (unstated) hardware and round length, so only ratios within a panel compare.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    left.bar(list(measured), list(measured.values()), color="tab:blue")
    left.set_title(f"measured here: {measured_label}", fontsize=10)
    left.set_ylabel("seconds per episode")
    right.bar(list(article), list(article.values()), color="tab:gray", hatch="//")
    right.set_title("the article's figures (not measured here)", fontsize=10)
    right.set_ylabel("seconds per round")
    for ax in (left, right):
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def curves_by_design(
    curves: dict[str, dict[int, Sequence[tuple[int, float]]]], title: str = ""
) -> Figure:
    """One panel per design, one line per seed: training episode return against env steps.

    The returns are raw (not smoothed), so the wobble within a curve and the spread
    between seeds, the two senses of "stable", can both be seen.
    """
    fig, axes = plt.subplots(
        1, len(curves), figsize=(3.6 * len(curves), 3.4), sharey=True, squeeze=False
    )
    for ax, (design, by_seed) in zip(axes[0], curves.items(), strict=True):
        for seed, points in by_seed.items():
            steps, returns = np.array(points, dtype=float).T
            ax.plot(steps, returns, alpha=0.8, label=f"seed {seed}")
        ax.set_title(design)
        ax.set_xlabel("environment steps")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("training episode return")
    axes[0][0].legend()
    fig.suptitle(title)
    fig.tight_layout()
    return fig


_RATIO_TICKS = (0.1, 0.2, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0)
"""Ratios labelled on a log axis of ratios (a log axis alone labels only powers of ten)."""


def claim_ratios(table: Sequence[dict[str, Any]]) -> Figure:
    """The article's ratio beside each machine's measured one, for claims that state a ratio.

    A machine without a measured ratio for a claim (not measurable there) shows no bar.
    """
    claims = list(dict.fromkeys(r["claim"] for r in table if r["article_ratio"]))
    machines = list(dict.fromkeys(r["machine"] for r in table if r["ratio"] is not None))
    ratio = {(r["claim"], r["machine"]): r["ratio"] for r in table}
    series = {
        "article": [next(r["article_ratio"] for r in table if r["claim"] == c) for c in claims]
    }
    for machine in machines:
        series[machine] = [ratio[(c, machine)] or np.nan for c in claims]
    height = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(7, 0.3 * len(claims) * len(series) + 1.2))
    for index, (label, values) in enumerate(series.items()):
        color = "0.6" if label == "article" else f"C{index - 1}"
        positions = [p + index * height for p in range(len(claims))]
        # Bars grow from 1 (no difference): rightwards for a ratio above 1, leftwards below.
        ax.barh(
            positions, np.asarray(values, float) - 1.0, height, left=1.0, label=label, color=color
        )
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks([p + 0.4 - height / 2 for p in range(len(claims))], claims)
    ax.set_xscale("log")
    finite = [v for values in series.values() for v in values if np.isfinite(v)] + [1.0]
    low, high = min(finite) / 1.15, max(finite) * 1.15
    ax.set_xlim(low, high)
    ax.xaxis.set_major_locator(ticker.FixedLocator([t for t in _RATIO_TICKS if low <= t <= high]))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}x"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("ratio, as each claim defines it (1 = no difference)")
    ax.legend(loc="best")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
