"""Notebook 03's tables, sentences and figures: hybrid and baseline side by side, the width
and thread sweeps, copy costs."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown
from matplotlib import ticker
from matplotlib.figure import Figure

from hetero_tutorial.core import results
from hetero_tutorial.core.configurations import devices_key, where
from hetero_tutorial.core.machine_load import NOT_JUDGED, judged, readings_of
from hetero_tutorial.core.modes import quick_mode
from hetero_tutorial.core.placement import placement
from hetero_tutorial.core.timing import Spread, format_seconds
from hetero_tutorial.notebook.prose import gpu_paragraph
from hetero_tutorial.notebook.tables import markdown_table, paired_note
from hetero_tutorial.rl.ppo.runs import PPOResult
from hetero_tutorial.studies import sweeps
from hetero_tutorial.studies.learning import returns_phrase
from hetero_tutorial.studies.threads import MIN_PAIRS, NO_VERDICT, ROLES, rule_parts, too_few

percent = "{:.0%}".format

RATIO_TICKS = (0.25, 0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0)
"""The thread plot's ratio ticks (a log axis): those inside the data's range are shown."""


@judged()
def runs_sentence(runs: dict[str, PPOResult], note: str | None) -> str:
    """Notebook 03's side by side: the hybrid plan's speed-up with its paired spread, or why
    there is none (the plans resolved to the same devices and ran once)."""
    if len(runs) < 2:
        return (note + " " if note else "One configuration stood for both plans: ") + (
            "no ratio to take on this machine (C6 needs an accelerator)."
        )
    baseline, hybrid = runs["all-accelerator"], runs["hybrid"]
    value = baseline.median_iteration_seconds / hybrid.median_iteration_seconds
    spread = Spread.of_pairs(
        baseline.steady_iterations, hybrid.steady_iterations, value, per="iteration"
    )
    side = spread.side(1.0)
    verdict = {True: "faster than the baseline", False: "slower than the baseline"}.get(
        side, "no clear effect" + spread.noise()
    )
    return f"hybrid: {spread} the baseline's speed: {verdict} (the article: 1.41x)."


def ran_on(name: str) -> str:
    """A plan's name and where it really ran here: ``all-accelerator (everything on cpu)``."""
    return f"{name} ({where(placement(name))})"


def curves_title(runs: dict[str, PPOResult], env_id: str) -> str:
    """The learning curves' title: the task and where the runs really ran."""
    ran = " / ".join(dict.fromkeys(where(placement(name)) for name in runs))
    return f"PPO on {env_id} ({ran}): one seed"


def learning_lines(runs: dict[str, PPOResult]) -> list[str]:
    """Each run's best and final greedy return, and what they may be read for: nothing
    about learning in quick mode (too short to learn), the plans' agreement otherwise."""
    lines = [f"{ran_on(name)}: {returns_phrase(run.evaluations)}" for name, run in runs.items()]
    steps = next(iter(runs.values())).env_steps
    if quick_mode():
        lines.append(
            f"quick mode: no learning verdict ({steps:,} environment steps per plan are too "
            "few to learn this task; the full mode runs longer)"
        )
    elif len(runs) == 1:
        lines.append("One configuration ran: there is no second plan's curve to set beside it.")
    return lines


def copies_lines(runs: dict[str, PPOResult], counted: dict[str, dict[str, Any]]) -> list[str]:
    """Per plan, the copies its code asks for (counted here, on the meta device where there
    is no accelerator: what the plan would copy with one) beside the copies that really
    moved data in section 1's run; then what the count is."""
    lines, places = [], set()
    for name, found in counted.items():
        key = devices_key(placement(name))  # a plan that ran as another is that run
        ran = next((n for n in runs if devices_key(placement(n)) == key), None)
        real = "not run" if ran is None else f"{runs[ran].copies_per_env_step:.3f} per step"
        real += f" (it ran as {ran})" if ran not in (None, name) else ""
        steps = found.get("steps_counted")
        per = f" of {steps:,} environment steps" if steps else ""
        lines.append(
            f"{name}: {found['copies_per_iteration']:,} copies per iteration{per}, "
            f"{found['copies_per_env_step']:.4f} per environment step; really moved in "
            f"section 1's run: {real}."
        )
        places.add(found["counted_on"])
    where = ", ".join(sorted(places))
    what = (
        "the meta device: the copies each plan's code asks for; none moved data"
        if where == "meta"
        else f"{where}: the copies each plan's code makes"
    )
    return [*lines, f"Counted on {what}."]


def sweep_note(sweep: list[dict[str, Any]]) -> str:
    """What the sweep timed: placements (those that ran as one), thread counts, and how many
    paired iterations each configuration has (against the verdicts' minimum)."""
    counts = sorted({r["threads"] for r in sweep})
    plans = sweeps.distinct_plans_measured(sweep)
    merged = [r["stands_for"] for r in sweep if len(r.get("stands_for", [])) > 1]
    pairs = min(len(r["iteration_seconds"]) for r in sweep)
    same = f" ({', '.join(merged[0])}: the same devices here)" if merged else ""
    text = (
        f"Timed: {plans} placement{'s' * (plans != 1)}{same} at "
        f"{' and '.join(map(str, counts))} threads, {pairs} paired iterations each"
    )
    if pairs < MIN_PAIRS and len(counts) > 1:
        return f"{text}: too few for a thread verdict ({too_few(pairs)})."
    return text + "."


def speedups_table(sweep: list[dict[str, Any]]) -> Markdown:
    speed = sweeps.speedups(sweep)
    return markdown_table(
        [{"width": w, **s} for w, s in speed.items()],
        {
            "width": "hidden width",
            "hybrid": "hybrid speed vs baseline",
            "all-cpu": "all-CPU speed vs baseline",
        },
        {"hybrid": "{:.2f}x".format, "all-cpu": "{:.2f}x".format},
    )


def thread_table(effects: list[dict[str, Any]]) -> Markdown:
    """Per width and role: seconds at one thread and at all cores, their paired ratio."""
    rows = [
        {
            **e,
            "who": ROLES[e["role"]],
            "spread": "—" if e["low"] is None else f"{e['low']:.2f}-{e['high']:.2f}x",
            "verdict": (
                f"{NO_VERDICT} ({e['pairs']} pairs)" if e["verdict"] == NO_VERDICT else e["verdict"]
            ),
        }
        for e in effects
    ]
    threads = effects[0]["threads"] if effects else "all"
    table = markdown_table(
        rows,
        {
            "width": "width",
            "who": "part",
            "one_thread_s": "1 thread",
            "all_cores_s": f"{threads} threads",
            "ratio": "median paired ratio",
            "spread": "paired spread",
            "verdict": "verdict",
        },
        {"one_thread_s": format_seconds, "all_cores_s": format_seconds, "ratio": "{:.2f}x".format},
    ).data
    pairs = [
        (f"{e['role']} at width {e['width']}", e["one_thread_s"], e["all_cores_s"], e["ratio"])
        for e in effects
        if e["ratio"] is not None
    ]
    return Markdown(table + paired_note(pairs, "iteration"))


def copy_costs_table(rows: list[dict[str, Any]]) -> Markdown:
    """Host-to-device copy costs per size and mode, with each row's note (MPS, XPU)."""
    return markdown_table(
        rows,
        {
            "size_bytes": "bytes",
            "mode": "mode",
            "seconds": "median",
            "gb_per_s": "GB/s",
            "note": "note",
        },
        {"seconds": format_seconds, "gb_per_s": "{:.2f}".format, "size_bytes": "{:,}".format},
    )


NO_COPIES_TO_TIME = "No accelerator: there is no host-to-device copy to time on this machine."


@judged()
def copy_costs_sentences(rows: list[dict[str, Any]]) -> list[str]:
    """Per copy size, each mode's time against a pageable copy's, with a verdict only where
    the two medians' IQRs leave no overlap (``Spread.of_medians``): what notebook 03 says
    about pinned copies, from this machine's rows (one line saying so without any)."""
    if not rows:
        return [NO_COPIES_TO_TIME]
    lines = []
    for size in sorted({row["size_bytes"] for row in rows}):
        here = {row["mode"]: row for row in rows if row["size_bytes"] == size}
        base = here["pageable"]
        parts = []
        for mode, row in here.items():
            if mode == "pageable":
                continue
            spread = Spread.of_medians(
                {"median_s": row["seconds"], "iqr_s": row["iqr_s"]},
                {"median_s": base["seconds"], "iqr_s": base["iqr_s"]},
            )
            word = {True: "slower", False: "faster", None: "no clear effect"}[spread.side(1.0)]
            parts.append(f"{mode} {spread.value:.2f}x its time ({word}{_pinning(row)})")
        compared = "; ".join(parts) or "no other mode timed here"
        lines.append(
            f"- {size:,} bytes: pageable {format_seconds(base['seconds'])} per copy; {compared}."
        )
    return lines


def _pinning(row: dict[str, Any]) -> str:
    """How often pinning on the fly allocated new page-locked memory, where that was counted."""
    blocks = row.get("new_pinned_blocks")
    if blocks is None:
        return ""
    return (
        f"; {blocks} new pinned block{'s' * (blocks != 1)} in {row['calls']} calls, "
        "the others reused from PyTorch's cache: what it adds is the host copy"
    )


def hybrid_references() -> Markdown | None:
    """The width sweeps of machines with an accelerator; where none are recorded, the
    notebook's one line about the GPU case (or nothing, once it was shown)."""
    found = results.load_references("bench.hybrid", with_accelerator=True)
    if not found:
        gpu_paragraph(results.NO_ACCELERATOR_REFERENCES)
        return None
    return markdown_table(
        [
            {"machine": r.hardware, "width": w, **s}
            for r in found
            for w, s in sweeps.speedups(r.data["width_sweep"]).items()
        ],
        {
            "machine": "machine",
            "width": "width",
            "hybrid": "hybrid vs baseline",
            "all-cpu": "all-CPU vs baseline",
        },
        {"hybrid": "{:.2f}x".format, "all-cpu": "{:.2f}x".format},
        timed=False,
    )


def bytes_line(answer: int | None, counted: dict[str, Any], guess: int | None = None) -> str:
    """The learner's rollout size (and their prediction) beside the hybrid plan's counted
    transfer."""
    seen = counted["by_phase"].get("transfer", {}).get("bytes_per_iteration")
    predicted = (
        " (no prediction written)"
        if guess is None
        else f"; you predicted {guess:,} ({guess / seen:.2f}x what it moved)"
    )
    if answer is None:
        return (
            f"The counter saw the transfer move {seen:,.0f} bytes{predicted}; solve the exercise "
            "to compare your function too."
        )
    same = "the same" if seen == answer else f"{seen:,.0f}: they differ"
    return f"Your rollout_bytes: {answer:,} bytes; the counted transfer moved {same}{predicted}."


@judged()
def thread_rule_lines(effects: list[dict[str, Any]]) -> list[str]:
    """The rule this machine gives, per part, without the figures the table above shows."""
    return [rule_parts(effects, role, seen=False)[0] + "." for role in ROLES]


def _busy(*figures: object) -> list[str]:
    """The studies behind ``figures`` that ran on a busy machine, each named once."""
    return list(dict.fromkeys(r.study for r in readings_of(*figures) if r.busy))


def hybrid_findings(
    runs: dict[str, PPOResult],
    counted: dict[str, dict[str, Any]],
    effects: list[dict[str, Any]],
    copy_rows: list[dict[str, Any]],
) -> list[str]:
    """What notebook 03 measured on this machine, each line from the numbers. A busy
    study's lines give way to one line naming it (its full reading is printed under it);
    the copy counts, which time nothing, always print."""
    busy = _busy(runs, effects, copy_rows)
    lines = [f"{NOT_JUDGED}: {', '.join(busy)}; each reading is under its study."] * bool(busy)
    if len(runs) > 1 and not _busy(runs):
        lines.append(runs_sentence(runs, None))
    elif not _busy(runs):
        ((name, run),) = runs.items()
        lines.append(
            f"One configuration ({name}): {format_seconds(run.median_iteration_seconds)} "
            f"per iteration, {run.env_steps_per_s:,.0f} steps/s."
        )
    lines.append(
        "Copies per iteration, counted: "
        + ", ".join(f"{name} {found['copies_per_iteration']:,}" for name, found in counted.items())
        + "."
    )
    if not _busy(effects):  # section 4's rules in a clause each (the reasons are there)
        clauses = [
            re.sub(r" \([^)]*\)", "", line.split(". ")[0]) for line in thread_rule_lines(effects)
        ]
        said = "; ".join(c[0].lower() + c[1:].rstrip(".") for c in clauses[:2])
        lines.append(f"Threads (section 4): {said}.")
    if copy_rows and not _busy(copy_rows):
        fastest = max(copy_rows, key=lambda row: row["gb_per_s"])
        lines.append(
            f"Fastest copy: {fastest['mode']} at {fastest['size_bytes']:,} bytes, "
            f"{fastest['gb_per_s']:.1f} GB/s."
        )
    return lines


def _percent(value: float) -> str:
    return f"{value:.0f}"


def ppo_runs_table(runs: dict[str, PPOResult]) -> Markdown:
    """One row per run: median seconds per iteration, steps/s, copies per step, CPU and GPU use."""
    rows = [
        {
            "plan": name,
            "per_iteration": run.median_iteration_seconds,
            "sps": run.env_steps_per_s,
            "copies": run.copies_per_env_step,
            **run.utilisation,
        }
        for name, run in runs.items()
    ]
    columns = {
        "plan": "plan",
        "per_iteration": "median s per iteration",
        "sps": "steps/s (all steady iterations)",
        "copies": "real copies per step",
        "process_cpu_percent": "CPU % (of one core)",
        "gpu_percent": "GPU %",
    }
    formats = {
        "per_iteration": format_seconds,
        "sps": "{:,.0f}".format,
        "copies": "{:.3f}".format,
        "process_cpu_percent": _percent,
        "gpu_percent": _percent,
    }
    return markdown_table(rows, columns, formats)


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
    low, high = ax.get_ylim()
    ax.set_yticks([t for t in RATIO_TICKS if low <= t <= high] or [1.0])
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:g}x"))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xticks(sorted({e["width"] for e in effects}))  # the widths measured, no others
    ax.xaxis.set_major_formatter(ticker.ScalarFormatter())
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.set_xlabel("hidden width (units per layer)")
    ax.set_ylabel(f"seconds at 1 thread / at {threads} threads")
    ax.set_title("Above 1: all cores are faster for that part")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig
