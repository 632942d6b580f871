"""Notebook 04's section 3, DDPG with each buffer design (C8): its settings, the runs'
table and seconds per episode, their speed against what the buffers' sampling costs predict,
their stability over seeds, and the figures beside the article's rounds."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown
from matplotlib.figure import Figure

from hetero_tutorial.core.findings import Check, Expectation, Finding
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.modes import quick_mode
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import MIN_REPEATS, Spread, format_seconds
from hetero_tutorial.notebook.buffer_report import at_capacity
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.studies.buffer_rows import SamplingRow
from hetero_tutorial.studies.ddpg_buffers import DDPGRun, DDPGSummary
from hetero_tutorial.studies.learning import compare_learning


def ddpg_settings(config: DDPGConfig, seeds: int) -> str:
    """The settings every DDPG run of section 3 trains with, from its config."""
    return (
        f"DDPG on {config.env_id}: {config.hidden} units per hidden layer, batch "
        f"{config.batch_size}, one update per environment step after {config.learning_starts:,} "
        f"random-action steps, {config.total_steps:,} steps per run, {counted(seeds, 'seed')}; "
        f"buffers of {config.buffer_capacity:,} transitions (pattern B in segments of "
        f"{config.segment_length})."
    )


MIN_TIMED_EPISODES = 5
"""Fewest whole episodes with updates per run for their median to stand beside steps/s."""


def timed_episodes(run: DDPGRun) -> int:
    """How many whole episodes of one DDPG run ran with timed updates: those its
    ``seconds_per_episode`` is the median of (as the trainer counts them)."""
    timed = run.total_steps - run.count_copies_steps
    ends = pairwise(run.episode_end_steps)
    return sum(a > run.learning_starts and b <= timed for a, b in ends)


def _fewest_episodes(summaries: dict[str, DDPGSummary]) -> int:
    return min(timed_episodes(run) for s in summaries.values() for run in s.runs)


def ddpg_table(summaries: dict[str, DDPGSummary]) -> Markdown:
    """Each buffer's DDPG speed and greedy returns. Seconds per episode only where every run
    timed :data:`MIN_TIMED_EPISODES` whole episodes; otherwise a line says why it is left out
    (a median of one or two episodes can rank the buffers against their steps/s)."""
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
    fewest, rows = _fewest_episodes(summaries), [s.fields() for s in summaries.values()]
    if fewest >= MIN_TIMED_EPISODES:
        return markdown_table(rows, columns, formats)
    del columns["seconds_per_episode"]
    table = markdown_table(rows, columns, formats)
    return Markdown(
        f"{table.data}\n\nNo s / episode: a run timed {counted(fewest, 'whole episode')} with "
        "updates, too few for a median."
    )


def episode_seconds(summaries: dict[str, DDPGSummary]) -> tuple[dict[str, float], str]:
    """Seconds per episode per buffer for the bars beside the article's rounds, and what they
    are: the measured median where the table shows it (:func:`ddpg_table`), else an episode's
    steps at the buffer's env steps/s, so that the bars rank the buffers as the table does."""
    if _fewest_episodes(summaries) >= MIN_TIMED_EPISODES:
        return {d: s.seconds_per_episode for d, s in summaries.items()}, "seconds per episode"
    ends = summaries["transition"].runs[0].episode_end_steps
    length = int(np.median(np.diff(ends)))
    found = {d: length / s.env_steps_per_s for d, s in summaries.items()}
    return found, f"seconds per {length} steps (one episode, from steps/s)"


def buffer_costs(rows: list[SamplingRow], batch_size: int, capacity: int) -> dict[str, float]:
    """Seconds a DDPG step spends in its buffer, per design: one batch sampled to the CPU and
    one transition added, as section 2 timed them at the capacity nearest ``capacity``."""
    nearest = min({r.capacity for r in rows}, key=lambda c: abs(c - capacity))
    return {
        d: batch_size / r.sample_transitions_per_s + 1 / r.add_transitions_per_s
        for d, r in at_capacity(rows, nearest).items()
    }


@judged()
def ddpg_speed_sentence(
    summaries: dict[str, DDPGSummary],
    rows: list[SamplingRow],
    batch_size: int,
    capacity: int = 100_000,
) -> str:
    """C8's speed, as findings: each design's env steps/s over pattern A's, seed by seed,
    against the bound its buffer costs set (section 2's sampling and adding, timed at the
    capacity nearest ``capacity``: pass the transitions the DDPG buffers held). A buffer
    can change a step by at most what it costs, so the ratio lies between 1 and the model's
    prediction, or the model did not hold."""
    cost = buffer_costs(rows, batch_size, capacity)
    step_a = 1 / summaries["transition"].env_steps_per_s
    base = [run.env_steps_per_s for run in summaries["transition"].runs]
    names = {"transition": "pattern A", "trajectory": "pattern B", "tensor": "tensor"}
    lines = [
        "The buffer's cost per environment step (one batch sampled, one transition added, "
        "from section 2): "
        + ", ".join(f"{names[d]} {format_seconds(c)}" for d, c in cost.items())
        + f", of pattern A's {format_seconds(step_a)} step."
    ]
    for design in ("trajectory", "tensor"):
        speeds = [run.env_steps_per_s for run in summaries[design].runs]
        measured = Spread.of_pairs(
            speeds,
            base,
            summaries[design].env_steps_per_s / summaries["transition"].env_steps_per_s,
            per="seed",
        )
        predicted = step_a / (step_a - cost["transition"] + cost[design])
        seeds_apart = max(base) / min(base) - 1
        finding = Finding(
            f"{names[design][0].upper()}{names[design][1:]} against pattern A, env steps/s",
            measured,
            Expectation.between(1.0, predicted, "the bound these costs set"),
            checks=(
                Check(
                    f"pattern A's own seeds ran {seeds_apart:.0%} apart in steps/s, more than "
                    "the buffers' whole cost difference",
                    seeds_apart > abs(predicted - 1),
                ),
            ),
            figures=(summaries,),
        )
        lines.append(f"{finding}.")
    # the article's two times, not their ratio: notebook 10's exercise asks for that
    seeds = len(base)
    against = (
        f"no verdict from {counted(seeds, 'seed')}: a verdict needs {MIN_REPEATS}"
        if seeds < MIN_REPEATS
        else "notebook 10's ledger judges pattern B against it (C8)"
    )
    return " ".join(lines) + f" Against the article's 72 s -> 53 s per round: {against}."


def stability_lines(summaries: dict[str, DDPGSummary], env_id: str = "Pendulum-v1") -> list[str]:
    """Each design's final greedy returns by seed, then C8's learning question through the
    series' one rule (:func:`~hetero_tutorial.studies.learning.compare_learning`): pattern B
    and the tensor buffer each against pattern A. In quick mode nothing is judged."""
    lines = []
    for design, s in summaries.items():
        if len(s.seeds) < 2:
            continue  # one seed: the table's greedy return is the whole story, no spread
        returns = ", ".join(f"{r:.0f}" for r in s.eval_return_by_seed)
        lines.append(
            f"{design:10s} final greedy return by seed {returns} (one evaluation after "
            f"training), spread over {len(s.seeds)} seeds {s.eval_return_spread:.0f}"
        )
    if quick_mode():
        steps = summaries["transition"].runs[0].total_steps
        lines.append(
            f"quick mode: no learning verdict ({steps:,} steps per run are too few to learn "
            f"{env_id}; the full mode runs longer, with more seeds)"
        )
        return lines
    base = summaries["transition"].eval_return_by_seed
    for design in ("trajectory", "tensor"):
        arms = {design: summaries[design].eval_return_by_seed, "transition": base}
        lines.append(f"{design} against transition: {compare_learning(arms, env_id)}")
    return lines


def seconds_per_round_bars(
    measured: dict[str, float],
    article: dict[str, float],
    measured_label: str,
    ylabel: str = "seconds per episode",
) -> Figure:
    """Measured seconds per episode per design beside the article's seconds per round.

    The two panels have separate axes: the article's figures come from its own
    (unstated) hardware and round length, so only ratios within a panel compare.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    left.bar(list(measured), list(measured.values()), color="tab:blue")
    left.set_title(f"measured here: {measured_label}", fontsize=10)
    left.set_ylabel(ylabel)
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
