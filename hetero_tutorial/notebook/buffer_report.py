"""Notebook 04's tables, sentences and figures: buffer designs, their costs, DDPG with each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown
from matplotlib.figure import Figure

from hetero_tutorial.core import results
from hetero_tutorial.core.timing import format_seconds
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.studies.buffer_designs import time_ratio

count = "{:,.0f}".format


def copies_sentence(copies: dict[str, int], target: str) -> str:
    """What one batch to ``target`` costs in copies, per design, and what that means."""
    text = f"Copies per batch to {target}: " + ", ".join(f"{d} {n}" for d, n in copies.items())
    if copies["trajectory"] >= copies["transition"]:
        text += ". Pattern B copies no less than pattern A: A, as written, already copies per field"
    return text + f". The tensor buffer moves a batch in {copies['tensor']} copy."


def _at(rows: list[dict[str, Any]], capacity: int, device: str = "cpu") -> dict[str, dict]:
    return {r["design"]: r for r in rows if r["capacity"] == capacity and r["device"] == device}


def memory_table(rows: list[dict[str, Any]]) -> Markdown:
    """Bytes per stored transition of each design at the largest capacity, against the raw."""
    largest = max(r["capacity"] for r in rows)
    shown = [
        {
            "design": d,
            "bytes": r["bytes_per_transition"],
            "x raw": r["bytes_per_transition"] / r["raw_bytes_per_transition"],
        }
        for d, r in _at(rows, largest).items()
    ]
    table = markdown_table(
        shown,
        {"design": "design", "bytes": "bytes / transition", "x raw": "x raw"},
        {"bytes": "{:.1f}".format, "x raw": "{:.2f}".format},
    )
    raw = rows[0]["raw_bytes_per_transition"]
    return Markdown(f"{largest:,} transitions stored; raw fields: {raw} bytes\n\n{table.data}")


def speed_table(rows: list[dict[str, Any]]) -> Markdown:
    columns = {
        "design": "design",
        "capacity": "capacity",
        "device": "to",
        "copies_per_batch": "copies",
        "sample_transitions_per_s": "sampled / s",
        "add_transitions_per_s": "added / s",
        "neighbour_fraction": "neighbour fraction",
    }
    formats = {
        "sample_transitions_per_s": count,
        "add_transitions_per_s": count,
        "capacity": count,
        "neighbour_fraction": "{:.3f}".format,
    }
    return markdown_table(rows, columns, formats)


def sampling_sentence(rows: list[dict[str, Any]]) -> str:
    """The designs' sampling rates to the CPU at the largest capacity, as ratios."""
    largest = max(r["capacity"] for r in rows)
    rate = {d: r["sample_transitions_per_s"] for d, r in _at(rows, largest).items()}
    return (
        f"At {largest:,} transitions, sampling to the CPU: the tensor buffer is "
        f"{rate['tensor'] / rate['transition']:.1f}x pattern A, pattern B "
        f"{rate['trajectory'] / rate['transition']:.1f}x pattern A, the tensor buffer "
        f"{rate['tensor'] / rate['trajectory']:.1f}x pattern B (batches of "
        f"{rows[0]['batch_size']}, no copies on the CPU)."
    )


def pinned(study: dict[str, Any]) -> Markdown:
    """Hybrid DDPG's pinned sampling path beside the same buffer unpinned, or why not timed."""
    if not study.get("pinned_rows"):
        return Markdown(f"Pinned path: {study.get('pinned_note') or 'not timed'}.")
    return markdown_table(
        study["pinned_rows"],
        {
            "capacity": "capacity",
            "device": "to",
            "pin_memory": "pinned",
            "sample_transitions_per_s": "sampled / s",
            "copies_per_batch": "copies",
        },
        {"capacity": count, "sample_transitions_per_s": count},
    )


def ddpg_settings(config: DDPGConfig, seeds: int) -> str:
    """The settings every DDPG run of section 3 trains with, from its config."""
    return (
        f"DDPG on {config.env_id}: {config.hidden} units per hidden layer, batch "
        f"{config.batch_size}, one update per environment step after {config.learning_starts:,} "
        f"random-action steps, {config.total_steps:,} steps per run, {seeds} seed(s); buffers "
        f"of {config.buffer_capacity:,} transitions (pattern B in segments of "
        f"{config.segment_length})."
    )


def ddpg_table(summaries: dict[str, dict[str, Any]]) -> Markdown:
    whole, one = "{:.0f}".format, "{:.1f}".format
    columns = {
        "buffer": "buffer",
        "env_steps_per_s": "env steps / s",
        "seconds_per_episode": "s / episode",
        "eval_return_mean": "greedy return (mean)",
        "eval_return_by_seed": "by seed",
    }
    formats = {
        "eval_return_mean": whole,
        "env_steps_per_s": one,
        "seconds_per_episode": "{:.2f}".format,
        "eval_return_by_seed": lambda returns: ", ".join(map(whole, returns)),
    }
    return markdown_table(list(summaries.values()), columns, formats)


def sampling_costs(rows: list[dict[str, Any]], batch_size: int, capacity: int) -> dict[str, float]:
    """Seconds one batch takes to sample to the CPU, per design, at the capacity nearest."""
    nearest = min({r["capacity"] for r in rows}, key=lambda c: abs(c - capacity))
    return {d: batch_size / r["sample_transitions_per_s"] for d, r in _at(rows, nearest).items()}


def ddpg_speed_sentence(
    summaries: dict[str, dict[str, Any]],
    rows: list[dict[str, Any]],
    batch_size: int,
    capacity: int = 100_000,
) -> str:
    """C8's speed: pattern A's time per episode over each design's, with its spread over seeds,
    beside what the designs' own sampling costs predict for it (sampling timed at the capacity
    nearest ``capacity``: pass the transitions the DDPG buffers held)."""
    sample = sampling_costs(rows, batch_size, capacity)
    step_a = 1 / summaries["transition"]["env_steps_per_s"]
    lines = []
    for design in ("trajectory", "tensor"):
        spread, per = time_ratio(summaries["transition"], summaries[design])
        predicted = step_a / (step_a - sample["transition"] + sample[design])
        inside = spread.measured and min(spread.low, spread.high) <= predicted <= max(
            spread.low, spread.high
        )
        said = (
            f"pattern A / {design}: {spread} {per}. Sampling alone: "
            f"{format_seconds(sample['transition'])} vs {format_seconds(sample[design])} a "
            f"batch, of a {format_seconds(step_a)} step, predicts {predicted:.2f}x"
        )
        if inside:
            said += ": the sampling costs explain the measured ratio"
        elif spread.measured and spread.value != 1:
            share = (predicted - 1) / (spread.value - 1)
            said += (
                f", {share:.0%} of the measured difference: outside its spread, so the rest "
                "is not the sampling"
            )
        lines.append(said + ".")
    return " ".join(lines) + " (The article: 72 s / 53 s = 1.36x.)"


def stability_lines(summaries: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for design, s in summaries.items():
        seeds = len(s["seeds"])
        spread = (
            f"spread over {seeds} seeds {s['eval_return_spread']:.0f}"
            if seeds > 1
            else ("one seed: no spread to compare")
        )
        lines.append(f"{design:10s} greedy return {s['eval_return_mean']:7.0f}, {spread}")
    return lines


def placements_table(rows: list[dict[str, Any]]) -> Markdown:
    """One row per configuration DDPG ran as (the placements it stood for), its speed."""
    return markdown_table(
        [{**r, "plans": ", ".join(r.get("stands_for", [r["placement"]]))} for r in rows],
        {"plans": "placements (one configuration)", "env_steps_per_s": "steps/s"},
        {"env_steps_per_s": "{:.0f}".format},
    )


def counted_table(counted: dict[str, dict[str, Any]]) -> Markdown:
    """Every placement's copies per 1000 steps, by phase, and where they were counted."""
    rows = [
        {
            "placement": name,
            "on": found["counted_on"],
            "total": found["copies_per_1000_samples"],
            "phases": ", ".join(
                f"{p} {c['count_per_1000_steps']:.0f}" for p, c in found["by_phase"].items()
            )
            or found.get("note", "none"),
        }
        for name, found in counted.items()
    ]
    return markdown_table(
        rows,
        {
            "placement": "placement",
            "on": "counted on",
            "total": "copies / 1000 samples",
            "phases": "by phase, per 1000 steps",
        },
        {"total": "{:.0f}".format},
    )


def references() -> Markdown:
    """Buffer and DDPG records from machines with an accelerator, or why none."""
    found = results.load_references("bench.buffers", with_accelerator=True)
    found += results.load_references("bench.ddpg", with_accelerator=True)
    if not found:
        return Markdown(results.NO_ACCELERATOR_REFERENCES)
    rows = [
        {
            "machine": r.hardware,
            "record": r.kind,
            "date": r.provenance["date"][:10],
            "buffer": r.data.get("buffer"),
            "sps": r.data.get("env_steps_per_s"),
            "rows": len(r.data.get("rows", [])) or None,
        }
        for r in found
    ]
    return markdown_table(
        rows,
        {
            "machine": "machine",
            "record": "record",
            "date": "date",
            "buffer": "DDPG buffer",
            "sps": "DDPG env steps / s",
            "rows": "buffer rows",
        },
        {"sps": "{:.0f}".format},
    )


def ring_cases() -> list[tuple[int, int, int]]:
    return [(998, 5, 1_000), (0, 3, 10), (7, 12, 5), (4, 0, 8)]


def td_cases() -> list[tuple[Any, ...]]:
    """A batch where one transition terminated and one was truncated; then gamma 0 and 1."""
    flags = (torch.tensor([0.0, 1.0, 0.0]), torch.tensor([0.0, 0.0, 1.0]))
    reward, next_q = torch.tensor([-1.0, -2.0, -3.0]), torch.tensor([5.0, 5.0, 5.0])
    rng = np.random.default_rng(0)
    random = [torch.tensor(rng.normal(size=4), dtype=torch.float32) for _ in range(2)]
    ended = (torch.tensor([1.0, 0.0, 0.0, 1.0]), torch.tensor([0.0, 1.0, 0.0, 0.0]))
    return [(reward, next_q, *flags, 0.9), (reward, next_q, *flags, 0.0), (*random, *ended, 1.0)]


def findings(
    summaries: dict, rows: list, counted: dict, batch_size: int, capacity: int = 100_000
) -> list[str]:
    """What notebook 04 measured on this machine, each line from the numbers."""
    return [
        sampling_sentence(rows),
        ddpg_speed_sentence(summaries, rows, batch_size, capacity),
        "Copies per 1000 samples, counted: "
        + ", ".join(f"{n} {c['copies_per_1000_samples']:.0f}" for n, c in counted.items())
        + f" (on {next(iter(counted.values()))['counted_on']}).",
    ]


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
