"""Notebook 08's sentences, tables and figure: compiled pieces, whole runs and the rejax race.

Every sentence whose truth depends on a measurement is written here from the numbers
passed in; a speed-up is named only where the whole range of the paired repeats lies
on one side of 1 (:meth:`~hetero_tutorial.core.timing.Spread.side`).
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from hetero_tutorial.core.findings import Check, Expectation, Finding
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.timing import Spread, format_seconds
from hetero_tutorial.notebook import peer_races
from hetero_tutorial.studies.compiling import SIZE_NAMES

PIECE_WORDS = {
    "act": "the actor's act (forward, sample, log-probability)",
    "env_step": "the batched CartPole step",
    "update": "one PPO minibatch step (gather, loss, backward, clipping, Adam)",
}


def _spread(row: dict[str, Any]) -> Spread:
    how = "per repeat" if row.get("low") is not None else "one repeat"
    return Spread(row["speedup"], row.get("low"), row.get("high"), how)


@judged()
def verdict(row: dict[str, Any]) -> str:
    """``faster``, ``slower`` or ``no clear difference``: the whole range against 1."""
    side = _spread(row).beyond(1.0)
    return {True: "faster", False: "slower", None: "no clear difference"}[side]


@judged()
def speedup_sentence(row: dict[str, Any]) -> str:
    """One compiled piece at one size against eager, with its range and compile seconds."""
    size = f"{row['size']:,} {SIZE_NAMES.get(row['piece'], 'envs')}"
    spread = f" ({row['low']:.2f}-{row['high']:.2f}x)" if row.get("low") is not None else ""
    words = PIECE_WORDS.get(row["piece"], row["piece"])
    text = (
        f"- {words}, {size}: {row['mode']} {row['speedup']:.2f}x eager{spread}, "
        f"{verdict(row)}; first call {row['compile_seconds']:.1f} s more"
    )
    calls = row.get("break_even_calls")
    if verdict(row) == "faster" and calls is not None:
        text += f", paid back after {calls:,.0f} calls"
    return text + "."


@judged()
def largest_gain_sentence(speedups: list[dict[str, Any]]) -> str:
    """Which piece gained most (its best size), and which lost, from the measured rows."""
    if not speedups:
        return "No compiled mode ran here, so nothing was compared."
    best = max(speedups, key=lambda r: r["speedup"])
    worst = min(speedups, key=lambda r: r["speedup"])
    text = (
        f"The largest gain: {PIECE_WORDS.get(best['piece'], best['piece'])} at "
        f"{best['size']:,}, {best['speedup']:.2f}x ({verdict(best)})."
    )
    if worst is not best:
        text += (
            f" The smallest: {PIECE_WORDS.get(worst['piece'], worst['piece'])} at "
            f"{worst['size']:,}, {worst['speedup']:.2f}x ({verdict(worst)})."
        )
    return text


def gain_guess_line(guess: str | None, answer: str | None) -> str:
    """The learner's predicted piece (``MY_GUESS``) beside the one their checked
    ``my_largest_gain`` found on this machine's rows (``answer``; None: not solved yet)."""
    if answer is None:
        return "Solve the exercise above, then run this cell to compare with your guess."
    found = PIECE_WORDS.get(answer, answer)
    if guess is None:
        return f"The piece that gained most here: {found}. (No guess written.)"
    if guess not in PIECE_WORDS:
        return f"The piece that gained most here: {found}. MY_GUESS names no piece: {guess!r}."
    verdict = "as you predicted" if guess == answer else f"not {guess}, as you predicted"
    return f"The piece that gained most here is {found}: {verdict}."


def speedup_figure(speedups: list[dict[str, Any]]) -> Figure:
    """Compiled over eager per piece and size, with the range of the paired repeats."""
    pieces = list(dict.fromkeys(r["piece"] for r in speedups))
    fig, axes = plt.subplots(1, len(pieces), figsize=(4 * len(pieces), 3.2), squeeze=False)
    for ax, piece in zip(axes[0], pieces, strict=True):
        rows = [r for r in speedups if r["piece"] == piece]
        for mode in dict.fromkeys(r["mode"] for r in rows):
            mine = [r for r in rows if r["mode"] == mode]
            sizes = [r["size"] for r in mine]
            values = [r["speedup"] for r in mine]
            low = [
                r["speedup"] - (r["low"] if r["low"] is not None else r["speedup"]) for r in mine
            ]
            high = [
                (r["high"] if r["high"] is not None else r["speedup"]) - r["speedup"] for r in mine
            ]
            ax.errorbar(sizes, values, yerr=[low, high], marker="o", capsize=3, label=mode)
        ax.axhline(1.0, color="grey", lw=1, ls="--")
        ax.set_xscale("log")
        sizes = sorted({r["size"] for r in rows})
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
def run_sentence(row: dict[str, Any]) -> str:
    """A compiled run (PPO's or DDPG's) against eager: steady speed, the first iteration (or
    update, for DDPG), break-even."""
    unit = row.get("unit", "iteration")  # records before DDPG's rows hold PPO's only
    size = f"{row['size']:,} envs" if unit == "iteration" else f"batch {row['size']:,}"
    per = unit if unit == "iteration" else "turn of updates"  # the repeats that were paired
    head = f"- {row['piece']} {row['mode']}, {size}: {row['env_steps_per_s']:,.0f} env steps/s"
    if row["mode"] == "eager":
        return f"{head} steady, first {unit} {format_seconds(row['first_iteration_s'])}."
    text = (
        f"{head} steady, {row['speedup']:.2f}x eager"
        + (f" ({row['low']:.2f}-{row['high']:.2f}x per {per})" if row["low"] else "")
        + f", {verdict(row)}; the first {unit} {row['compile_seconds']:.1f} s longer"
    )
    iterations = row.get("break_even_iterations")
    if iterations is not None and verdict(row) == "faster":
        text += f", paid back after {iterations:,.0f} {unit}s"
    elif verdict(row) != "faster":
        text += ", never paid back at this speed"
    if row.get("graph_skips"):  # records before graph_skips was recorded have none
        text += f"; CUDA graph trees declined {row['graph_skips']} of its graphs (run uncaptured)"
    return text + "."


def _cache_state(record: Any, point: str) -> str:
    """ ", from a warm cache" where every compiled round of ``point`` found Inductor's cache
    warm (its kernels built by an earlier run; rejax compiles from nothing each time)."""
    rounds = record.data.get("runs", {}).get(point, {}).get("ours-compiled", [])
    warm = [found.get("compile_cache_warm") for found in rounds]
    return ", from a warm cache" if warm and all(warm) else ""


def _vs_rejax(record: Any, point: str, ours: str, medians: float) -> str:
    """``ours`` over rejax in env steps/s at ``point``, as the race's tables give it: the
    median of the rounds' paired ratios, with their range (``medians``, the ratio of the
    medians, where the record paired no rounds)."""
    raced = peer_races.pair(record, point, ours, "rejax", "steps_per_s")
    if raced is None or raced.get("median_of_round_ratios") is None:
        return f"{medians:.2f}x rejax"
    low, high = raced.get("low"), raced.get("high")
    spread = f", rounds {low:.2f}-{high:.2f}x" if low is not None else ""
    return f"{raced['median_of_round_ratios']:.2f}x rejax{spread}"


def rejax_lines(record: Any, ppo: list[dict[str, Any]]) -> list[str]:
    """The recorded race at 8 and 1,024 envs: medians of env steps/s, and our ratios to
    rejax as the race's tables give them (:func:`_vs_rejax`): ours eager, ours compiled
    where the record raced it (else what this run's compiled/eager ratio would make of
    ours, labelled as the estimate it is), and each side's compile seconds."""
    stats = record.data["summary"]["stats"]
    live = {(r["size"], r["piece"]): r for r in ppo if r["mode"] == "compile"}
    lines = [f"Recorded on {record.hardware} ({record.provenance['date'][:10]}, one thread):"]
    for point, contestants in stats.items():
        ours, rejax = contestants.get("ours"), contestants.get("rejax")
        if not ours or not rejax:
            continue
        ours_sps, rejax_sps = ours["steps_per_s"]["median"], rejax["steps_per_s"]["median"]
        line = (
            f"- {point}: rejax {rejax_sps:,.0f} env steps/s (its compile "
            f"{rejax['compile_s']['median']:.1f} s); ours eager {ours_sps:,.0f} "
            f"({_vs_rejax(record, point, 'ours', ours_sps / rejax_sps)})"
        )
        raced = contestants.get("ours-compiled")
        found = live.get((int(point.split()[0]), "ppo-all-device"))
        if raced:
            compiled_sps = raced["steps_per_s"]["median"]
            versus = _vs_rejax(record, point, "ours-compiled", compiled_sps / rejax_sps)
            line += (
                f", ours compiled {compiled_sps:,.0f} ({versus}; "
                f"its compile {raced['compile_s']['median']:.1f} s{_cache_state(record, point)})"
            )
        elif found is not None:
            estimate = ours_sps * found["speedup"]
            line += (
                f"; with this run's compiled/eager ratio ({found['speedup']:.2f}x), ours would "
                f"reach about {estimate:,.0f} ({estimate / rejax_sps:.2f}x rejax): an estimate "
                "from two measurements, not a race"
            )
        lines.append(line + ".")
    return lines


@judged()
def breakdown_sentence(found: dict[str, Any]) -> str:
    """Where one compiled minibatch step's time went (``compiling.step_breakdown``): its
    matrix products, their rate, and the rest."""
    step, products = found["step_s"], found["matmul_s"]
    rate, peak = found["matmul_flops"] / products, found["peak_flops_per_s"]
    text = (
        f"One compiled minibatch step of {found['size']} takes {format_seconds(step)}. Its "
        f"{found['matmul_calls']} matrix products take {format_seconds(products)} of it "
        f"({products / step:.0%}): {found['matmul_flops'] / 1e6:.1f} MFLOP at "
        f"{rate / 1e9:.0f} GFLOP/s, where one {found['peak_size']:,}-square product runs at "
        f"{peak / 1e9:.0f} GFLOP/s here (at that rate they would take "
        f"{format_seconds(found['matmul_flops'] / peak)})."
    )
    if products >= step:  # the profiler's own cost can outweigh a busy machine's drift
        return text + " The profiled products took the whole untimed step: measure again."
    return text + (
        f" The other {format_seconds(step - products)} are what compiling left: the "
        "generated kernels, the code that calls them, the guards."
    )


@judged()
def rejax_step_line(record: Any, found: dict[str, Any]) -> str:
    """rejax's seconds per gradient step at the race's largest point (its iteration's seconds
    over its gradient steps: an upper bound, its rollout's share included) against our
    products alone (a recorded figure against a live one: the two runs' drift is in the
    ratio), and how far the rest of our step would have to shrink to match it."""
    setting = record.data["setting"]
    if setting["minibatch_size"] != found["size"]:
        return (
            f"The race's minibatch ({setting['minibatch_size']}) is not the breakdown's "
            f"({found['size']}): no step to set against it."
        )
    num_envs = max(int(point) for point in record.data["points"])
    rejax = record.data["summary"]["stats"].get(f"{num_envs} envs", {}).get("rejax")
    if rejax is None:
        return f"The race recorded no rejax run at {num_envs:,} envs: no step to set against it."
    batch = num_envs * setting["num_steps"]
    gradient_steps = setting["update_epochs"] * (batch // setting["minibatch_size"])
    per_step = batch / rejax["steps_per_s"]["median"] / gradient_steps
    products, rest = found["matmul_s"], max(0.0, found["step_s"] - found["matmul_s"])
    text = (
        f"rejax at {num_envs:,} envs (recorded on {record.hardware}): at most "
        f"{format_seconds(per_step)} per gradient step, its share of the rollout included, "
        f"{per_step / products:.2f}x our products alone. "
    )
    if per_step <= products:
        return text + "Its products ran faster than ours do here: no overhead removed closes that."
    budget = per_step - products
    if rest <= budget:
        return text + (
            f"The rest of our step ({format_seconds(rest)}) fits in the "
            f"{format_seconds(budget)} that leaves: the gap is outside the update step."
        )
    return text + (
        f"To match it, the rest of our step would have to fit in {format_seconds(budget)}; "
        f"here it takes {format_seconds(rest)}, {rest / budget:.1f}x that."
    )


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
    speedups: list[dict[str, Any]], runs: list[dict[str, Any]], fallback: str | None
) -> list[str]:
    """The notebook's summary, from its numbers (``runs``: PPO's and DDPG's rows)."""
    if fallback:
        return [f"- Compiling could not run here ({fallback}); every piece ran eagerly."]
    lines = [f"- {largest_gain_sentence(speedups)}"]
    lines += [f"- {guard_finding(r, speedups)}." for r in speedups if verdict(r) == "slower"]
    for row in runs:
        if row["mode"] != "eager":
            lines.append(run_sentence(row))
    return lines


def guard_finding(loss: dict[str, Any], speedups: list[dict[str, Any]]) -> Finding | str:
    """A compiled piece that lost, against this notebook's account of where compiling
    loses: where the guards and glue, a fixed cost per call, weigh as much as the fusion
    saves, so at the smallest call. At the smallest size measured the account allows it; at
    a larger one it expects at least the smaller size's ratio (a fixed cost shrinks against
    a growing call), and the finding says whether that held."""
    mine = sorted((r for r in speedups if r["piece"] == loss["piece"]), key=lambda r: r["size"])
    name = f"Compiling lost on {PIECE_WORDS.get(loss['piece'], loss['piece'])} at {loss['size']:,}"
    smaller = [r for r in mine if r["size"] < loss["size"]]
    if not smaller:
        return (
            f"{name}, {_spread(loss)}: its smallest size measured, where a fixed cost per "
            "call (the guards and glue) weighs most"
        )
    below = smaller[-1]
    return Finding(
        f"{name} (a larger call than {below['size']:,})",
        _spread(loss),
        Expectation.at_least(
            min(below["speedup"], below.get("low") or below["speedup"]),
            f"what a fixed cost per call allows after {below['size']:,}'s {below['speedup']:.2f}x",
        ),
        checks=(
            Check(
                "the loss grows with the call, which a fixed cost per call cannot do: the "
                "time is in the compiled code itself, not in its guards",
                loss["speedup"] < below["speedup"],
            ),
        ),
        figures=(speedups,),
    )


def explain_sentence(explanation: dict[str, Any]) -> str:
    """What Dynamo found in the step: graphs, breaks, and why the first break happened."""
    text = (
        f"One step traced into {explanation['graphs']} graph(s) with "
        f"{explanation['graph_breaks']} graph break(s)"
    )
    if explanation["reasons"]:
        reason = explanation["reasons"][0]
        text += f"; the first break: {reason.splitlines()[0].rstrip('.')}"
        if "Generator" in reason:
            text += " (the argument Dynamo could not record is a torch.Generator)"
    return text + "."


def grid_table(rows: list[dict[str, Any]]) -> str:
    """Per device, width and batch: each compiled mode's time over eager's, as text."""
    eager = {
        (r["device"], r["width"], r["batch_size"]): r["seconds"]
        for r in rows
        if r["mode"] == "eager"
    }
    lines = ["device   mode         width  batch  eager/mode"]
    for r in rows:
        if r["mode"] == "eager":
            continue
        ratio = eager[(r["device"], r["width"], r["batch_size"])] / r["seconds"]
        lines.append(
            f"{r['device']:<8} {r['mode']:<12} {r['width']:>5} {r['batch_size']:>6}  {ratio:.2f}x"
        )
    return "\n".join(lines) if len(lines) > 1 else "No compiled mode ran here: no grid to compare."


@judged()
def crossover_lines(found: dict[str, dict[int, int | None]]) -> list[str]:
    """Per mode, the accelerator's crossover width at each batch size (or none measured)."""
    if not found:
        return [
            "Only the CPU was measured here: no crossover to move (the ratios above are the CPU's)."
        ]
    lines = []
    for mode, by_batch in found.items():
        widths = ", ".join(
            f"batch {b:,}: {w if w is not None else 'none measured'}" for b, w in by_batch.items()
        )
        lines.append(f"- {mode}: the smallest width at which the accelerator wins, {widths}")
    return lines


def reference_line(record: Any) -> str:
    """A recorded ``bench.compile`` run's largest gain, with its hardware."""
    return f"{record.hardware}: {largest_gain_sentence(record.data.get('speedups', []))}"
