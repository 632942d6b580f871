"""Notebook 01's tables and sentences: the baseline's run, its phases, the peers, the tricks."""

from __future__ import annotations

import statistics
from typing import Any

from IPython.display import Markdown
from matplotlib.figure import Figure

from hetero_tutorial.core import results
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import format_seconds
from hetero_tutorial.notebook import peer_races, plots
from hetero_tutorial.notebook.exercises import prediction_line
from hetero_tutorial.notebook.tables import markdown_table, paired_note
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import PPOResult
from hetero_tutorial.rl.ppo.trainer import PHASES
from hetero_tutorial.studies.device_ppo import SOLVED_STREAK, solved_at
from hetero_tutorial.studies.learning import best_and_final, returns_phrase

percent = "{:.0%}".format


def placement_sentence(placement: Placement) -> str:
    """Where this placement's phases run *here*, and what that means for its copies."""
    if placement.accelerator_missing:
        return (
            "So it makes no host<->device copies here; section 5 counts those an accelerator "
            "would get, on the meta device."
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


def config_line(config: PPOConfig) -> str:
    """The settings a learner reads the run by, in one line (not the dataclass's 25 fields)."""
    return (
        f"{config.env_id}: {config.num_envs} envs x {config.num_steps} steps per rollout, "
        f"{config.update_epochs} epochs of minibatch {config.minibatch_size}, "
        f"{config.hidden} units, learning rate {config.learning_rate:g} and clip "
        f"{config.clip_coef:g} decaying over {config.anneal_steps or config.total_steps:,} steps; "
        f"this run trains {config.total_steps:,}."
    )


def run_line(run: PPOResult) -> str:
    return (
        f"{run.env_steps:,} steps; the steady iterations (all but the first) took "
        f"{run.wall_seconds:.1f} s: {run.env_steps_per_s:,.0f} steps/s; the first took "
        f"{format_seconds(run.iteration_seconds[0])}."
    )


SOLVED = 475.0
"""CartPole-v1's goal (Gymnasium's ``reward_threshold``): the greedy return of a solved policy."""


def solved_step(evaluations: list[tuple[int, float]]) -> int | None:
    """The environment step a run solved CartPole at, by the series' one rule
    (:func:`~hetero_tutorial.studies.device_ppo.solved_at`): the first of
    :data:`SOLVED_STREAK` greedy evaluations in a row at :data:`SOLVED` or more."""
    index = solved_at(evaluations, SOLVED, SOLVED_STREAK)
    return None if index is None else evaluations[index][0]


def learning_sentence(run: PPOResult) -> str:
    """What the greedy curve shows, from its numbers: the best and the final return, whether
    the run solved CartPole (:func:`solved_step`) and whether its last three evaluations
    still held 475, and, for a run that stopped before its annealing horizon, how much of
    its step size it still had."""
    phrase = returns_phrase(run.evaluations)
    best, _ = best_and_final(run.evaluations)
    last = [value for _, value in run.evaluations[-3:]]
    shown = ", ".join(f"{value:.1f}" for value in last)
    solved = solved_step(run.evaluations)
    if solved is not None:
        kept = "and stayed solved" if min(last) >= SOLVED else "then fell back"
        verdict = (
            f"solved at {solved:,} steps (the first of {SOLVED_STREAK} evaluations in a row at "
            f"{SOLVED:.0f} or more) {kept}: the last three were {shown}"
        )
    elif best >= SOLVED:
        verdict = (
            f"it reached {SOLVED:.0f} but did not stay there (never {SOLVED_STREAK} evaluations "
            f"in a row): not solved; the last three were {shown}"
        )
    else:
        verdict = f"it never reached {SOLVED:.0f}"
    return f"Greedy evaluations: {phrase}; {verdict}.{_stopped_early(run.config)}"


def learning_plot(run: PPOResult, placement: Placement) -> Figure:
    """The training and greedy curves (:func:`plots.learning_curves`) with the goal drawn, and
    the legend under the axes, where it hides no evaluation."""
    fig = plots.learning_curves(
        {
            "training episodes (sampled actions)": run.episodes,
            "greedy evaluation (mean of 10 episodes)": run.evaluations,
        },
        title=f"PPO on {run.config.env_id}, {plan_label(placement)}",
    )
    ax = fig.axes[0]
    ax.axhline(SOLVED, color="0.5", linestyle=":", linewidth=1, label=f"goal, {SOLVED:.0f}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=3, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def phase_plot(run: PPOResult, placement: Placement) -> Figure:
    """:func:`plots.phase_bars` of this run, with the update's bar out of red (red means a
    copy between devices in section 1's pipeline)."""
    fig = plots.phase_bars({plan_label(placement): run.phase_seconds}, per="per run")
    ax = fig.axes[0]
    for container in ax.containers:
        if container.get_label() == "update":
            for bar in container:
                bar.set_facecolor("tab:purple")
    ax.legend(loc="upper left", bbox_to_anchor=(1, 1))
    return fig


def folded(listing: Markdown, summary: str) -> Markdown:
    """A source listing (:func:`~hetero_tutorial.notebook.code.source`) folded under a one-line
    summary: implementation detail a reader opens when they want it."""
    return Markdown(f"<details><summary>{summary}</summary>\n\n{listing.data}\n\n</details>")


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
    """Which phase took the most time, and which did not run and why (the table gives the
    shares)."""
    ran = [p for p in PHASES if p in run.phase_seconds]
    total = sum(run.phase_seconds.values())
    most = max(ran, key=lambda p: run.phase_seconds[p])
    text = f"The most time went to {most} ({run.phase_seconds[most] / total:.0%})."
    if "weight_sync" not in ran:
        text += (
            " weight_sync did not run: the rollout's policy is the learner itself when the "
            "rollout and the update share a device."
        )
    return text


def peer_line() -> str:
    """Our PPO against CleanRL at CleanRL's own settings, from the recorded peer benchmark,
    naming those settings and where the series races CleanRL at other ones (notebook 07)."""
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
    settings = records[-1].data.get("settings", {}).get("cleanrl", {})
    shape = (
        f"{settings['num_envs']} envs x {settings['num_steps']} steps, {settings['update_epochs']} "
        f"epochs of minibatch {settings['minibatch_size']}, {settings['hidden']} units"
        if settings
        else "its defaults"
    )
    return (
        f"Recorded against CleanRL at its ppo.py defaults ({shape}), {len(ratios)} rounds on "
        f"{peer_races.recorded_on(records[0])}: ours {statistics.median(ratios):.2f}x its speed "
        f"per step (rounds {min(ratios):.2f}-{max(ratios):.2f}x). Notebook 07 races CleanRL at "
        "RL Zoo's tuned settings, which this notebook trains with (8 environments): other "
        "settings, another ratio."
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
        "So the rollout pays about 2 / num_envs copies per environment step "
        f"({2 / config.num_envs:.3f} here): observations in and actions out per vector step, "
        "plus a few per rollout.",
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
    best, final = best_and_final(run.evaluations)
    solved = solved_step(run.evaluations)
    learned = (
        "not solved" if solved is None else f"solved at {solved:,} steps"
    ) + f" (best greedy return {best:.1f}, final {final:.1f})"
    per_step = counted.get("copies_per_env_step")
    copied = "" if per_step is None else f"; {per_step:.4f} copies per environment step"
    return [
        f"PPO on {run.config.env_id} ({run.placement}): {run.env_steps_per_s:,.0f} steps/s; "
        f"time by phase: {shares}{copied}; {learned}.",
        f"Speed tricks: {verdict(every)}.",
    ]


def tricks_table(rows: list[dict[str, Any]]) -> Markdown:
    """One row per PPO speed trick of :func:`hetero_tutorial.studies.ppo_tricks.trick_speeds`."""
    columns = {
        "trick": "trick",
        "with_steps_per_s": "steps/s with it (median)",
        "without_steps_per_s": "steps/s without it (median)",
        "ratio": "median of the paired rounds' ratios",
        "spread": "range over rounds",
    }
    shown = [{**row, "spread": f"{row['ratio_low']:.2f}-{row['ratio_high']:.2f}x"} for row in rows]
    formats = {
        "with_steps_per_s": "{:,.0f}".format,
        "without_steps_per_s": "{:,.0f}".format,
        "ratio": "{:.2f}x".format,
    }
    table = markdown_table(shown, columns, formats).data
    pairs = [
        (r["trick"], r["with_steps_per_s"], r["without_steps_per_s"], r["ratio"]) for r in rows
    ]
    table += paired_note(pairs, "round")
    return Markdown(table)
