"""Notebooks 01 and 03's tables and sentences: PPO runs, phases, copies, plans, threads."""

from __future__ import annotations

import statistics
from typing import Any

from IPython.display import Markdown

from hetero_tutorial.core import results
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import Spread, format_seconds
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.rl.ppo.runs import PPOResult
from hetero_tutorial.rl.ppo.trainer import PHASES
from hetero_tutorial.studies import sweeps
from hetero_tutorial.studies.threads import ROLES

percent = "{:.0%}".format


def placement_sentence(plan: Placement) -> str:
    """Where this plan's phases run *here*, and what that means for its copies."""
    if plan.accelerator_missing:
        return (
            f"On this machine the {plan.name} plan runs every phase on the CPU (there is no "
            "accelerator), so it makes no host<->device copies; the copies it would make on "
            "an accelerator are counted below on the meta device, which stands in for one."
        )
    devices = ", ".join(str(d) for d in plan.devices)
    return f"On this machine the {plan.name} plan uses {devices}: its copies are real."


def run_line(run: PPOResult) -> str:
    return (
        f"{run.env_steps:,} steps; the steady iterations (all but the first) took "
        f"{run.wall_seconds:.1f} s: {run.env_steps_per_s:,.0f} steps/s; the first took "
        f"{format_seconds(run.iteration_seconds[0])}. Greedy return after training: "
        f"{run.eval_return_mean:.1f} (mean of {len(run.eval_returns)} episodes)."
    )


def phase_table(run: PPOResult) -> Markdown:
    """Seconds and share of each phase, in the order an iteration runs them."""
    total = sum(run.phase_seconds.values())
    rows = [
        {"phase": p, "seconds": run.phase_seconds[p], "share": run.phase_seconds[p] / total}
        for p in PHASES
        if p in run.phase_seconds
    ]
    return markdown_table(
        rows,
        {"phase": "phase", "seconds": "seconds", "share": "share of the timed phases"},
        {"seconds": format_seconds, "share": percent},
    )


def phase_sentence(run: PPOResult) -> str:
    """Which phases ran, which did not and why, and where the time went."""
    ran = [p for p in PHASES if p in run.phase_seconds]
    total = sum(run.phase_seconds.values())
    ordered = sorted(ran, key=lambda p: -run.phase_seconds[p])
    text = (
        f"This run timed {len(ran)} of PPO's {len(PHASES)} phases ({', '.join(ran)}); "
        f"the most time went to {ordered[0]} ({run.phase_seconds[ordered[0]] / total:.0%}), "
        f"then {ordered[1]} ({run.phase_seconds[ordered[1]] / total:.0%})."
    )
    if "weight_sync" not in ran:
        text += (
            " weight_sync did not run: the rollout's policy is the learner itself when the "
            "rollout and the update share a device."
        )
    return text


def copies_table(counted: dict[str, Any]) -> Markdown:
    """A placement's copies by phase (:func:`hetero_tutorial.studies.copies.ppo_copies`)."""
    rows = [{"phase": phase, **found} for phase, found in counted["by_phase"].items()]
    if not rows:
        return Markdown(f"{counted['placement']}: {counted.get('note', 'no copies')}.")
    return markdown_table(
        rows,
        {
            "phase": "phase",
            "count_per_iteration": "copies per iteration",
            "count_per_env_step": "per env step",
            "bytes_per_iteration": "bytes per iteration",
        },
        {"count_per_env_step": "{:.4f}".format, "bytes_per_iteration": "{:,.0f}".format},
    )


def counted_line(counted: dict[str, Any]) -> str:
    where = counted["counted_on"]
    on = (
        "the meta device (a stand-in: the code's copies, no data moved)"
        if where == "meta"
        else where
    )
    return (
        f"{counted['placement']} on {counted['env_id']}: {counted['copies_per_iteration']:g} "
        f"copies per iteration of {counted['steps_counted']:,} steps, "
        f"{counted['copies_per_env_step']:.4f} per environment step, counted on {on}."
    )


def peer_line() -> str:
    """Our PPO against CleanRL with CleanRL's settings, from the recorded peer benchmark."""
    records = results.load_references("bench.ppo_peers")
    if not records:
        return "No peer benchmark recorded in data/reference/ (benchmarks/ppo_peers.py)."
    ratios = [
        r
        for rec in records
        for r in rec.data["summary"]["cleanrl"]["steps_per_s"]["ours_over"]["cleanrl"][
            "round_ratios"
        ]
    ]
    return (
        f"Recorded against CleanRL with its own settings ({len(ratios)} rounds on "
        f"{records[0].hardware}): ours {statistics.median(ratios):.2f}x its speed per step "
        f"(rounds {min(ratios):.2f}-{max(ratios):.2f}x)."
    )


def ppo_references(plan_name: str) -> Markdown:
    found = [
        r
        for r in results.load_references("bench.ppo", with_accelerator=True)
        if r.data["placement"] == plan_name
    ]
    if not found:
        return Markdown(results.NO_ACCELERATOR_REFERENCES)
    return markdown_table(
        [
            {
                "machine": r.hardware,
                "env": r.data["env_id"],
                "sps": r.data["env_steps_per_s"],
                "copies": r.data["copies_per_env_step"],
                "rollout": r.data["phase_seconds"]["rollout"] / r.data["wall_seconds"],
            }
            for r in found
        ],
        {
            "machine": "machine",
            "env": "env",
            "sps": "steps/s",
            "copies": "copies per step",
            "rollout": "rollout share",
        },
        {"sps": "{:,.0f}".format, "copies": "{:.2f}".format, "rollout": percent},
    )


def copies_exercise_line(answer: int | None, counted: dict[str, Any], config: Any) -> str:
    """The learner's formula for the rollout's copies beside what the counter saw."""
    seen = counted["by_phase"].get("rollout", {}).get("count_per_iteration")
    if answer is None:
        return (
            f"The counter saw {seen} rollout copies per iteration; solve the exercise to compare."
        )
    steps = config.num_envs * config.num_steps
    extra = (
        ""
        if answer == seen
        else (
            f"; the difference, {seen - answer}, is episodes cut off by the time limit (two each)"
        )
    )
    return (
        f"Your formula: {answer} copies per rollout of {steps:,} steps ({answer / steps:.4f} per "
        f"environment step); the counter saw {seen}{extra}."
    )


def runs_sentence(runs: dict[str, PPOResult], note: str | None) -> str:
    """Notebook 03's side by side: the hybrid plan's speed-up with its paired spread, or why
    there is none (the plans resolved to the same devices and ran once)."""
    if len(runs) < 2:
        return (note or "One plan ran.") + (
            " No ratio to take on this machine: C6 needs an accelerator (reference records below)."
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


def sweep_note(sweep: list[dict[str, Any]]) -> str:
    counts = sorted({r["threads"] for r in sweep})
    plans = sweeps.distinct_plans_measured(sweep)
    merged = [r["stands_for"] for r in sweep if len(r.get("stands_for", [])) > 1]
    text = (
        f"The sweep timed {plans} distinct placement(s) at {', '.join(map(str, counts))} "
        f"thread(s), {len(sweep)} configurations in all."
    )
    if merged:
        text += f" {', '.join(merged[0])} ran as one (the same devices here)."
    return text


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
        }
        for e in effects
    ]
    threads = effects[0]["threads"] if effects else "all"
    return markdown_table(
        rows,
        {
            "width": "width",
            "who": "part",
            "one_thread_s": "1 thread",
            "all_cores_s": f"{threads} threads",
            "ratio": "ratio",
            "spread": "paired spread",
            "verdict": "verdict",
        },
        {"one_thread_s": format_seconds, "all_cores_s": format_seconds, "ratio": "{:.2f}x".format},
    )


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
            word = {True: "slower", False: "faster", None: "no clear difference"}[spread.side(1.0)]
            parts.append(f"{mode} {spread.value:.2f}x its time ({word})")
        compared = "; ".join(parts) or "no other mode timed here"
        lines.append(
            f"- {size:,} bytes: pageable {format_seconds(base['seconds'])} per copy; {compared}."
        )
    return lines


def hybrid_references() -> Markdown:
    found = results.load_references("bench.hybrid", with_accelerator=True)
    if not found:
        return Markdown(results.NO_ACCELERATOR_REFERENCES)
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
    )


def bytes_line(answer: int | None, counted: dict[str, Any]) -> str:
    """The learner's rollout size beside the hybrid plan's counted transfer."""
    seen = counted["by_phase"].get("transfer", {}).get("bytes_per_iteration")
    if answer is None:
        return (
            f"The counter saw the transfer move {seen:,.0f} bytes; solve the exercise to compare."
        )
    same = "the same" if seen == answer else f"{seen:,.0f}: they differ"
    return f"Your rollout_bytes: {answer:,} bytes; the counted transfer moved {same}."


def findings(run: PPOResult, counted: dict[str, Any], trick_rows: list[dict[str, Any]]) -> list:
    """What notebook 01 measured on this machine, each line from the numbers."""
    from hetero_tutorial.studies.ppo_tricks import verdict

    total = sum(run.phase_seconds.values())
    shares = ", ".join(
        f"{p} {run.phase_seconds[p] / total:.0%}" for p in PHASES if p in run.phase_seconds
    )
    every = next(row for row in trick_rows if row["trick"] == "all three")
    return [
        f"PPO on {run.config.env_id} ({run.placement}): {run.env_steps_per_s:,.0f} steps/s; "
        f"time by phase: {shares}.",
        counted_line(counted),
        f"Speed tricks: {verdict(every)}.",
    ]


def hybrid_findings(
    runs: dict[str, PPOResult],
    counted: dict[str, dict[str, Any]],
    effects: list[dict[str, Any]],
    copy_rows: list[dict[str, Any]],
) -> list[str]:
    """What notebook 03 measured on this machine, each line from the numbers."""
    from hetero_tutorial.studies.threads import thread_rule

    lines = []
    if len(runs) > 1:
        lines.append(runs_sentence(runs, None))
    else:
        ((name, run),) = runs.items()
        lines.append(
            f"One configuration ({name}): {format_seconds(run.median_iteration_seconds)} "
            f"per iteration, {run.env_steps_per_s:,.0f} steps/s."
        )
    lines += [counted_line(found) for found in counted.values()]
    lines += thread_rule(effects)[:2]
    if copy_rows:
        fastest = max(copy_rows, key=lambda row: row["gb_per_s"])
        lines.append(
            f"Fastest copy: {fastest['mode']} at {fastest['size_bytes']:,} bytes, "
            f"{fastest['gb_per_s']:.1f} GB/s."
        )
    return lines
