"""Notebook 01's tables and sentences: the baseline's run, its phases, the peers, the tricks."""

from __future__ import annotations

import statistics
from typing import Any

from IPython.display import Markdown

from hetero_tutorial.core import results
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import format_seconds
from hetero_tutorial.notebook.exercises import prediction_line
from hetero_tutorial.notebook.tables import counted_line, markdown_table
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import PPOResult
from hetero_tutorial.rl.ppo.trainer import PHASES
from hetero_tutorial.studies.learning import best_and_final, returns_phrase

percent = "{:.0%}".format


def placement_sentence(placement: Placement) -> str:
    """Where this placement's phases run *here*, and what that means for its copies."""
    if placement.accelerator_missing:
        return (
            f"On this machine the {placement.name} plan runs every phase on the CPU (there is no "
            "accelerator), so it makes no host<->device copies; the copies it would make on "
            "an accelerator are counted below on the meta device, which stands in for one."
        )
    devices = ", ".join(str(d) for d in placement.devices)
    return f"On this machine the {placement.name} plan uses {devices}: its copies are real."


def plan_label(placement: Placement) -> str:
    """A plan's name as a title or a legend gives it: with the device it really used where a
    preset wanted an accelerator and ran on the CPU (an "all-accelerator" curve drawn from a
    CPU run must not read as an accelerator's)."""
    if placement.accelerator_missing:
        return f"{placement.name} (on the CPU here)"
    return placement.name


def run_line(run: PPOResult) -> str:
    return (
        f"{run.env_steps:,} steps; the steady iterations (all but the first) took "
        f"{run.wall_seconds:.1f} s: {run.env_steps_per_s:,.0f} steps/s; the first took "
        f"{format_seconds(run.iteration_seconds[0])}. Greedy evaluations (10 episodes each): "
        f"{returns_phrase(run.evaluations)}."
    )


SOLVED = 475.0
"""CartPole-v1's goal (Gymnasium's ``reward_threshold``): the greedy return of a solved policy."""


def learning_sentence(run: PPOResult) -> str:
    """What the greedy curve shows, from its numbers: the best and the final return, whether
    the run solved CartPole and stayed solved over its last three evaluations, and, for a run
    that stopped before its annealing horizon, how much of its step size it still had."""
    phrase = returns_phrase(run.evaluations)
    best, _ = best_and_final(run.evaluations)
    last = [value for _, value in run.evaluations[-3:]]
    shown = ", ".join(f"{value:.1f}" for value in last)
    if min(last) >= SOLVED:
        verdict = f"solved ({SOLVED:.0f} or more) and stayed solved: the last three were {shown}"
    elif best >= SOLVED:
        verdict = (
            f"it reached {SOLVED:.0f} but did not stay there: the last three were {shown}, "
            "a policy that solved and then forgot"
        )
    else:
        verdict = f"it never reached {SOLVED:.0f}, the return of a solved policy"
    return f"Greedy evaluations: {phrase}; {verdict}.{_stopped_early(run.config)}"


def _annealed(config: PPOConfig) -> str:
    """What decays in ``config``: "the learning rate and clip range", one of them, or ""."""
    names = [
        name
        for name, on in (("learning rate", config.anneal_lr), ("clip range", config.anneal_clip))
        if on
    ]
    return "the " + " and ".join(names) if names else ""


def _left_at_end(config: PPOConfig) -> float:
    """The share of the step size (learning rate, clip range) of the run's last iteration."""
    return config.schedule_left(config.num_iterations - 1)


def _stopped_early(config: PPOConfig) -> str:
    """A sentence for a run that stopped before its decays reached zero, else ""."""
    what = _annealed(config)
    if not what or config.anneal_iterations == config.num_iterations:
        return ""
    trained = config.num_iterations * config.batch_size
    both = " and " in what
    return (
        f" This run trained {trained:,} of the {config.anneal_steps:,} steps over which "
        f"{what} {'decay' if both else 'decays'}: its last iteration still trained with "
        f"{_left_at_end(config):.0%} of {'their starting values' if both else 'its start'}."
    )


def first_solved(evaluations: list[tuple[int, float]]) -> int | None:
    """The environment step of the first greedy evaluation at :data:`SOLVED` or more."""
    return next((step for step, value in evaluations if value >= SOLVED), None)


def horizon_table(runs: dict[int, PPOResult]) -> Markdown:
    """One row per annealing horizon of :func:`~hetero_tutorial.studies.annealing.horizon_runs`:
    where its schedule stood at the end, and what the greedy evaluations saw."""
    rows = []
    for horizon, run in sorted(runs.items()):
        c = run.config
        left = _left_at_end(c)
        best, final = best_and_final(run.evaluations)
        solved = first_solved(run.evaluations)
        rows.append(
            {
                "horizon": horizon,
                "left": left,
                "lr": c.learning_rate * left if c.anneal_lr else c.learning_rate,
                "clip": c.clip_coef * left if c.anneal_clip else c.clip_coef,
                "best": best,
                "solved": "never" if solved is None else f"{solved:,}",
                "final": final,
            }
        )
    return markdown_table(
        rows,
        {
            "horizon": "decays to zero over (steps)",
            "left": "share left in the last iteration",
            "lr": "its learning rate",
            "clip": "its clip range",
            "best": "best greedy return",
            "solved": f"first at {SOLVED:.0f} (step)",
            "final": "final greedy return",
        },
        {
            "horizon": "{:,}".format,
            "left": percent,
            "lr": "{:.2e}".format,
            "clip": "{:.3f}".format,
            "best": "{:.1f}".format,
            "final": "{:.1f}".format,
        },
        timed=False,
    )


def horizon_sentence(runs: dict[int, PPOResult]) -> str:
    """What the horizons did to the same seed's same steps, from the numbers of each run."""
    ordered = sorted(runs.items())
    parts = []
    for horizon, run in ordered:
        solved = first_solved(run.evaluations)
        best, final = best_and_final(run.evaluations)
        outcome = (
            f"first reached {SOLVED:.0f} at {solved:,} steps"
            if solved is not None
            else f"never reached {SOLVED:.0f} (best {best:.1f})"
        )
        parts.append(
            f"decayed over {horizon:,} steps ({_left_at_end(run.config):.0%} left in the last "
            f"iteration), it {outcome} and ended at {final:.1f}"
        )
    steps = ordered[0][1].env_steps
    text = f"The same seed, {steps:,} steps each: " + "; ".join(parts) + "."
    reached = [horizon for horizon, run in ordered if first_solved(run.evaluations) is not None]
    if reached and len(reached) < len(ordered):
        text += (
            f" Only the schedule differed, and only the run{'s' if len(reached) > 1 else ''} "
            f"decayed over {' and '.join(f'{h:,}' for h in reached)} steps reached "
            f"{SOLVED:.0f}."
        )
    elif reached:
        text += f" Every horizon reached {SOLVED:.0f} here: the schedule changed when, not whether."
    else:
        text += f" No horizon reached {SOLVED:.0f} in {steps:,} steps on this seed."
    return text + " One seed: this shows what the horizon can do, not how often it does."


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


def ppo_references(plan_name: str) -> Markdown | None:
    """The plan's runs recorded on machines with an accelerator; None where there are none
    (the notebook's one line about the GPU case says so)."""
    found = [
        r
        for r in results.load_references("bench.ppo", with_accelerator=True)
        if r.data["placement"] == plan_name
    ]
    if not found:
        return None
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
        timed=False,
    )


def copies_exercise_line(
    answer: int | None, counted: dict[str, Any], config: Any, guess: int | None = None
) -> list[str]:
    """The learner's prediction and formula for the rollout's copies beside what the counter
    saw."""
    seen = counted["by_phase"].get("rollout", {}).get("count_per_iteration")
    predicted = prediction_line("The rollout's copies per iteration", guess, seen, tolerance=0)
    if answer is None:
        return [predicted, "Solve the exercise above to compare your formula too."]
    steps = config.num_envs * config.num_steps
    extra = (
        ""
        if answer == seen
        else (
            f"; the difference, {seen - answer}, is episodes cut off by the time limit (two each)"
        )
    )
    return [
        predicted,
        f"Your formula: {answer} copies per rollout of {steps:,} steps ({answer / steps:.4f} per "
        f"environment step); the counter saw {seen}{extra}.",
    ]


@judged("all")
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
        learning_sentence(run),
        counted_line(counted),
        f"Speed tricks: {verdict(every)}.",
    ]


def tricks_table(rows: list[dict[str, Any]]) -> Markdown:
    """One row per PPO speed trick of :func:`hetero_tutorial.studies.ppo_tricks.trick_speeds`."""
    columns = {
        "trick": "trick",
        "what": "what it saves",
        "with_steps_per_s": "steps/s with it",
        "without_steps_per_s": "steps/s without it",
        "ratio": "ratio (median of rounds)",
        "spread": "range over rounds",
    }
    shown = [{**row, "spread": f"{row['ratio_low']:.2f}-{row['ratio_high']:.2f}x"} for row in rows]
    formats = {
        "with_steps_per_s": "{:,.0f}".format,
        "without_steps_per_s": "{:,.0f}".format,
        "ratio": "{:.2f}x".format,
    }
    return markdown_table(shown, columns, formats)
