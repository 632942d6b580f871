"""Notebook 08's sentences, tables and figure: compiled pieces and whole runs (the rejax race
is read by :mod:`~hetero_tutorial.notebook.compile_race`).

Every sentence whose truth depends on a measurement is written here from the numbers
passed in; a speed-up is named only where the whole range of the paired repeats lies
on one side of 1 (:meth:`~hetero_tutorial.core.timing.Spread.side`).
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
from IPython.display import Markdown
from matplotlib.figure import Figure

from hetero_tutorial.core.findings import Check, Expectation, Finding
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import Spread, format_seconds
from hetero_tutorial.notebook import compile_race
from hetero_tutorial.notebook.exercises import UNSOLVED
from hetero_tutorial.studies.compile_rows import (
    Breakdown,
    CompileStudy,
    RunRow,
    SpeedupRow,
    StepTrace,
)
from hetero_tutorial.studies.compiling import SIZE_NAMES

PIECE_WORDS = {
    "act": "the actor's act (forward, sample, log-probability)",
    "env_step": "the batched CartPole step",
    "update": "one PPO minibatch step (gather, loss, backward, clipping, Adam)",
}
SHORT_NAMES = {"act": "act", "env_step": "CartPole step", "update": "minibatch step"}
"""The pieces as a line of section 2 names them, once the prose has said what each holds."""


def cache_line(folder: str, warm: bool) -> str:
    """What torch.compile's cache folder held when the notebook started, and what it spares:
    Inductor's generated kernels, where the code and PyTorch still match; never Dynamo's
    tracing, which every piece's first call still does (section 2 prints its seconds)."""
    if not warm:
        return f"torch.compile's cache: {folder} (empty: every piece compiles from scratch)."
    return (
        f"torch.compile's cache: {folder} (kernels from an earlier run: reused where the code "
        "and PyTorch still match; each piece's first call still traces, section 2 says how long)."
    )


def folded(shown: Markdown, summary: str) -> Markdown:
    """``shown`` (a source listing) folded under a one-line ``summary``."""
    return Markdown(f"<details><summary>{summary}</summary>\n\n{shown.data}\n\n</details>")


Gain = SpeedupRow | RunRow
"""A compiled piece's row over eager, or a compiled run's: both hold ``speedup``, ``low`` and
``high``, ``piece``, ``size``, ``mode`` and ``compile_seconds``."""


def gain_spread(row: Gain) -> Spread:
    how = "per repeat" if row.low is not None else "one repeat"
    return Spread(row.speedup, row.low, row.high, how, row.repeats)


def _over(row: Gain, per: str) -> str:
    """`` over 5 turns of updates`` where the row kept its count of repeats."""
    plural = per.replace("turn of", "turns of") if per.startswith("turn of") else f"{per}s"
    return f" over {row.repeats} {plural}" if row.repeats else f" per {per}"


def _count(value: float, unit: str) -> str:
    """``396 calls``; under one, ``less than one iteration`` (never "0 iterations")."""
    return f"less than one {unit}" if value < 1 else f"{value:,.0f} {unit}s"


@judged()
def verdict(row: Gain) -> str:
    """``faster``, ``slower`` or ``no clear effect``: the whole range against 1; ``no
    verdict`` from fewer than five paired repeats."""
    spread = gain_spread(row)
    if spread.too_few:
        return f"no verdict ({spread.too_few_words()})"
    side = spread.beyond(1.0)
    return {True: "faster", False: "slower", None: "no clear effect"}[side]


@judged()
def speedup_sentence(row: SpeedupRow) -> str:
    """One compiled piece at one size against eager, with its range and compile seconds."""
    size = f"{SIZE_NAMES.get(row.piece, 'envs')} {row.size:,}"
    spread = f" ({row.low:.2f}-{row.high:.2f}x{_over(row, 'repeat')})" if row.low else ""
    words = SHORT_NAMES.get(row.piece, row.piece)
    text = (
        f"- {words}, {size}: {row.mode} {row.speedup:.2f}x eager{spread}, "
        f"{verdict(row)}; first call {row.compile_seconds:.1f} s more"
    )
    calls = row.break_even_calls
    if verdict(row) == "faster" and calls is not None:
        text += f", paid back after {_count(calls, 'call')}"
    return text + "."


@judged()
def speedup_lines(speedups: list[SpeedupRow]) -> list[str]:
    """Section 2's lines, one per piece and size (:func:`speedup_sentence`); on a busy
    machine the guard's line once, not once per line."""
    return [speedup_sentence(row) for row in speedups]


@judged()
def run_lines(runs: list[RunRow]) -> list[str]:
    """Section 3's lines, one per run and mode (:func:`run_sentence`); on a busy machine the
    guard's line once."""
    return [run_sentence(row) for row in runs]


def _agreed(row: Gain) -> float:
    """The gain every repeat agreed on: the low end of the range (the speed-up itself where a
    row has no range), as the exercise ranks the pieces."""
    return row.low if row.low is not None else row.speedup


@judged()
def largest_gain_sentence(speedups: list[Gain]) -> str:
    """Which piece gained most (its best size), ranked as the exercise ranks them: by the
    gain every repeat agreed on (:func:`_agreed`). Where a piece lost, :func:`guard_finding`
    says so in the summary."""
    if not speedups:
        return "No compiled mode ran here, so nothing was compared."
    best = max(speedups, key=_agreed)
    spread = f"{best.low:.2f}-{best.high:.2f}x, " if best.low is not None else ""
    return (
        f"Of the pieces timed alone (not the whole runs), the largest gain, ranked by the low "
        f"end of each range: "
        f"{PIECE_WORDS.get(best.piece, best.piece)} at {best.size:,}, "
        f"{best.speedup:.2f}x ({spread}{verdict(best)})."
    )


def gain_guess_line(guess: str | None, answer: str | None) -> str:
    """The learner's predicted piece (``MY_GUESS``) beside the one their checked
    ``my_largest_gain`` found on this machine's rows (``answer``; None: not solved yet)."""
    if answer is None:
        return UNSOLVED
    found = PIECE_WORDS.get(answer, answer)
    if guess is None:
        return f"The piece that gained most here: {found}. (No guess written.)"
    if guess not in PIECE_WORDS:
        return f"The piece that gained most here: {found}. MY_GUESS names no piece: {guess!r}."
    verdict = "as you predicted" if guess == answer else f"not {guess}, as you predicted"
    return f"The piece that gained most here is {found}: {verdict}."


def speedup_figure(speedups: list[SpeedupRow]) -> Figure:
    """Compiled over eager per piece and size, with the range of the paired repeats."""
    pieces = list(dict.fromkeys(r.piece for r in speedups))
    fig, axes = plt.subplots(1, len(pieces), figsize=(4 * len(pieces), 3.2), squeeze=False)
    for ax, piece in zip(axes[0], pieces, strict=True):
        rows = [r for r in speedups if r.piece == piece]
        for mode in dict.fromkeys(r.mode for r in rows):
            mine = [r for r in rows if r.mode == mode]
            sizes = [r.size for r in mine]
            values = [r.speedup for r in mine]
            low = [r.speedup - (r.low if r.low is not None else r.speedup) for r in mine]
            high = [(r.high if r.high is not None else r.speedup) - r.speedup for r in mine]
            ax.errorbar(sizes, values, yerr=[low, high], marker="o", capsize=3, label=mode)
        ax.axhline(1.0, color="grey", lw=1, ls="--")
        ax.set_xscale("log")
        sizes = sorted({r.size for r in rows})
        ax.set_xticks(sizes, [f"{size:,}" for size in sizes])  # the sizes measured, as numbers
        ax.minorticks_off()
        if len(sizes) == 1:  # one size: a log axis needs room on both sides
            ax.set_xlim(sizes[0] / 2, sizes[0] * 2)
        ax.set_xlabel(SIZE_NAMES.get(piece, "size"))
        ax.set_ylabel("speed-up over eager (x)")
        ax.set_title(piece)
        ax.legend()
    fig.tight_layout()
    return fig


@judged()
def run_sentence(row: RunRow) -> str:
    """A compiled run (PPO's or DDPG's) against eager: steady speed, the first iteration (or
    update, for DDPG), break-even."""
    unit = row.unit
    size = f"{row.size:,} envs" if unit == "iteration" else f"batch {row.size:,}"
    per = unit if unit == "iteration" else "turn of updates"  # the repeats that were paired
    head = f"- {row.piece} {row.mode}, {size}: {row.env_steps_per_s:,.0f} env steps/s"
    if row.mode == "eager":
        return f"{head} steady, first {unit} {format_seconds(row.first_iteration_s)}."
    text = (
        f"{head} steady, {row.speedup:.2f}x eager"
        + (f" ({row.low:.2f}-{row.high:.2f}x{_over(row, per)})" if row.low else "")
        + f", {verdict(row)}; the first {unit} {row.compile_seconds:.1f} s longer"
    )
    iterations = row.break_even_iterations
    if iterations is not None and verdict(row) == "faster":
        text += f", paid back after {_count(iterations, unit)}"
    elif verdict(row) == "slower":
        text += ", never paid back at this speed"
    if row.graph_skips:
        text += f"; CUDA graph trees declined {row.graph_skips} of its graphs (run uncaptured)"
    return text + "."


@judged()
def breakdown_sentence(found: Breakdown) -> str:
    """Where one compiled minibatch step's time went (``compile_breakdown.step_breakdown``):
    its matrix products, their rate, and the rest."""
    step, products = found.step_s, found.matmul_s
    rate, peak = found.matmul_flops / products, found.peak_flops_per_s
    text = (
        f"One compiled minibatch step of {found.size} takes {format_seconds(step)}. Its "
        f"{found.matmul_calls} matrix products take {format_seconds(products)} of it "
        f"({products / step:.0%}): {found.matmul_flops / 1e6:.1f} MFLOP at "
        f"{rate / 1e9:.0f} GFLOP/s, where one {found.peak_size:,}-square product runs at "
        f"{peak / 1e9:.0f} GFLOP/s here (at that rate they would take "
        f"{format_seconds(found.matmul_flops / peak)})."
    )
    if products >= step:  # the profiler's own cost can outweigh a busy machine's drift
        return text + " The profiled products took the whole untimed step: measure again."
    return text + (
        f" The other {format_seconds(step - products)} are what compiling left: the "
        "generated kernels, the code that calls them, the guards."
    )


@judged()
def breakdown_lines(found: Breakdown, race: list[Any]) -> list[str]:
    """Section 4's breakdown (:func:`breakdown_sentence`) and, for the newest race recorded
    (``race``), rejax's step against it (``compile_race.rejax_step_line``); on a busy machine the
    guard's line once."""
    return [
        breakdown_sentence(found),
        *(compile_race.rejax_step_line(record, found) for record in race[-1:]),
    ]


def run_lengths_sentence(ppo: Any, ddpg: Any) -> str:
    """How many iterations a PPO run and how many updates a DDPG run hold (``ppo``,
    ``ddpg``: their configs), to read the break-even figures against."""
    updates = ddpg.total_steps - ddpg.learning_starts
    return (
        f"For scale: a {ppo.total_steps:,}-step {ppo.env_id} PPO run at {ppo.num_envs:,} "
        f"environments has {ppo.num_iterations:,} iterations, and a DDPG run of the default "
        f"{ddpg.total_steps:,} steps makes {updates:,} updates."
    )


@judged("all")
def summary_lines(
    speedups: list[SpeedupRow],
    runs: list[RunRow],
    fallback: str | None,
    warm: bool | None = None,
    written: int | None = None,
) -> list[str]:
    """The notebook's summary, from its numbers (``runs``: PPO's and DDPG's rows; ``warm``:
    whether the cache held kernels when the notebook started; ``written``: the files the
    cache gained meanwhile, kernels compiled afresh). What the sections printed line by line
    is not printed again: the ranking, the losses against the account of where compiling
    loses, and the compiling's seconds in all."""
    if fallback:
        return [f"- Compiling could not run here ({fallback}); every piece ran eagerly."]
    lines = [f"- {largest_gain_sentence(speedups)}"]
    lines += [f"- {guard_finding(r, speedups)}." for r in speedups if verdict(r) == "slower"]
    compiled = [r for r in [*speedups, *runs] if r.mode != "eager"]
    if compiled:
        seconds = sum(r.compile_seconds for r in compiled)
        cache = {True: ", with kernels in the cache from an earlier run", False: ", from an "
                 "empty cache", None: ""}[warm]  # fmt: skip
        if warm and written is not None:
            cache += (
                f", yet {written:,} new cache files written here: shapes it lacked were "
                "compiled afresh"
                if written
                else ": every kernel came from it"
            )
        lines.append(
            f"- Compiling's first calls: {seconds:.1f} s in all over {len(compiled)} pieces "
            f"and runs{cache}."
        )
    return lines


def guard_finding(loss: SpeedupRow, speedups: list[SpeedupRow]) -> Finding | str:
    """A compiled piece that lost, against this notebook's account of where compiling
    loses: where the guards and glue, a fixed cost per call, weigh as much as the fusion
    saves, so at the smallest call. At the smallest size measured the account allows it; at
    a larger one it expects at least the smaller size's ratio (a fixed cost shrinks against
    a growing call), and the finding says whether that held."""
    mine = sorted((r for r in speedups if r.piece == loss.piece), key=lambda r: r.size)
    name = f"Compiling lost on {PIECE_WORDS.get(loss.piece, loss.piece)} at {loss.size:,}"
    smaller = [r for r in mine if r.size < loss.size]
    if not smaller:
        return (
            f"{name}, {gain_spread(loss)}: its smallest size measured, where a fixed cost per "
            "call (the guards and glue) weighs most"
        )
    below = smaller[-1]
    return Finding(
        f"{name} (a larger call than {below.size:,})",
        gain_spread(loss),
        Expectation.at_least(
            min(below.speedup, below.low or below.speedup),
            f"what a fixed cost per call allows after {below.size:,}'s {below.speedup:.2f}x",
        ),
        checks=(
            Check(
                "the loss grows with the call, which a fixed cost per call cannot do: the "
                "time is in the compiled code itself, not in its guards",
                loss.speedup < below.speedup,
            ),
        ),
        figures=(speedups,),
    )


def explain_sentence(explanation: StepTrace) -> str:
    """What Dynamo found in the step: graphs, breaks, and why the first break happened."""
    graphs, breaks = explanation.graphs, explanation.graph_breaks
    text = f"One step traced into {counted(graphs, 'graph')} with {counted(breaks, 'graph break')}"
    if breaks and graphs <= breaks:
        text += (
            f": of the {breaks + 1} parts the {'break' if breaks == 1 else 'breaks'} cut it into, "
            f"{graphs} held tensor "
            "operations to record"
        )
    if explanation.reasons:
        reason = explanation.reasons[0]
        text += f"; the first break: {reason.splitlines()[0].rstrip('.')}"
        if "Generator" in reason:
            text += " (the argument Dynamo could not record is a torch.Generator)"
    return text + "."


def reference_line(record: Any) -> str:
    """A recorded ``bench.compile`` run's largest gain, with its hardware."""
    study = CompileStudy.from_fields(record.data)
    return f"{record.hardware}: {largest_gain_sentence(study.speedups)}"
