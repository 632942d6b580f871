"""Notebook 09's tables, plots and findings: GAIL's phases, the discriminator sweep, C12."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown
from matplotlib import ticker
from matplotlib.figure import Figure

from hetero_tutorial.core import results
from hetero_tutorial.core.findings import Expectation, Finding
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.modes import quick_mode
from hetero_tutorial.core.timing import Spread, format_seconds
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.rl.gail.trainer import PHASES
from hetero_tutorial.studies import gail

PHASE_WORDS = {
    "rollout": "rollout",
    "discriminator": "discriminator updates",
    "labelling": "labelling",
    "advantages": "advantages",
    "transfer": "transfer",
    "update": "PPO update of the generator",
    "weight_sync": "weight sync",
}


def phase_table(rounds: Sequence[dict[str, Any]]) -> Markdown:
    """One row per placement: seconds per round of each phase, and their total."""
    phases = [p for p in PHASES if any(p in r["seconds_per_round"] for r in rounds)]
    rows = [
        {"case": r["case"], **r["seconds_per_round"], "total": sum(r["seconds_per_round"].values())}
        for r in rounds
    ]
    columns = {"case": "placement", **{p: PHASE_WORDS[p] for p in phases}, "total": "round"}
    return markdown_table(rows, columns, dict.fromkeys([*phases, "total"], format_seconds))


def _shares(row: dict[str, Any]) -> dict[str, float]:
    seconds = row["seconds_per_round"]
    total = sum(seconds.values())
    return {p: s / total for p, s in seconds.items()}


def phase_sentence(rounds: Sequence[dict[str, Any]], config: Any) -> str:
    """Where a round's time went, placement by placement, and the copies it made."""
    parts = []
    for row in rounds:
        shares = sorted(_shares(row).items(), key=lambda kv: -kv[1])
        top = ", ".join(f"{PHASE_WORDS[p]} {s:.0%}" for p, s in shares[:3])
        copies = sum(c.get("count", 0) for c in row["copies"].values()) if row["copies"] else 0
        case = row["case"][0].upper() + row["case"][1:]
        parts.append(f"{case}: {top} ({copies} copies between devices in a round)")
    if all(not row["copies"] for row in rounds):
        parts.append(
            "the transfer phase only reshapes the rollout where every phase shares a device"
        )
    return (
        f"A round of {rounds[0]['round_steps']:,} steps with {config.disc_updates} discriminator "
        f"updates of {config.disc_rows:,} + {config.disc_rows:,} rows. " + "; ".join(parts) + "."
    )


def sweep_plot(sweep: Sequence[dict[str, Any]]) -> Figure:
    """Microseconds per row of a discriminator update against rows per update: one line per
    device, width and penalty (log-log)."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    keys = sorted({(r["device"], r["width"], r["penalty"]) for r in sweep})
    for device, width, penalty in keys:
        mine = sorted((r for r in sweep if (r["device"], r["width"], r["penalty"])
                       == (device, width, penalty)), key=lambda r: r["rows"])  # fmt: skip
        x = [r["rows"] for r in mine]
        y = [r["median_s"] / (2 * r["rows"]) * 1e6 for r in mine]
        style = "--" if penalty else "-"
        ax.plot(x, y, style, marker="o", label=f"{device}, width {width}"
                + (", penalty" if penalty else ""))  # fmt: skip
    ax.set_xscale("log")
    rows = sorted({r["rows"] for r in sweep})
    ax.set_xticks(rows, [f"{count:,}" for count in rows])  # the rows measured, as numbers
    ax.minorticks_off()
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:g}"))
    ax.set_xlabel("rows per side per update (as many expert rows as policy rows)")
    ax.set_ylabel("us per row")
    ax.set_title("One discriminator update, per row")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


@judged()
def sweep_sentence(sweep: Sequence[dict[str, Any]]) -> str:
    """How much a row's cost falls with the rows per update on the CPU, and what the
    gradient penalty adds: each a measured ratio with its spread (IQRs)."""
    cpu = [r for r in sweep if r["device"] == "cpu"]
    lines = []
    for width in sorted({r["width"] for r in cpu}):
        plain = sorted((r for r in cpu if r["width"] == width and not r["penalty"]),
                       key=lambda r: r["rows"])  # fmt: skip
        if len(plain) < 2:
            continue
        small, large = plain[0], plain[-1]
        per_row = Spread.of_quotient(
            (small["median_s"] / small["rows"]) / (large["median_s"] / large["rows"]),
            [(small["median_s"], small["iqr_s"]), (large["median_s"], large["iqr_s"])],
        )
        side = per_row.beyond(1.0)
        said = (
            "cheaper per row at the larger batch"
            if side
            else "dearer per row at the larger batch"
            if side is False
            else "no clear change per row" + per_row.noise()
        )
        penalty = [r for r in cpu if r["width"] == width and r["penalty"]
                   and r["rows"] == small["rows"]]  # fmt: skip
        extra = ""
        if penalty:
            extra = (f"; the gradient penalty makes the {small['rows']:,}-row update "
                     f"{penalty[0]['median_s'] / small['median_s']:.1f}x as long")  # fmt: skip
        lines.append(
            f"Width {width}: at {small['rows']:,} rows per side a row costs {per_row} what it "
            f"costs at {large['rows']:,}: {said}{extra}"
        )
    return ". ".join(lines) + "." if lines else "The sweep measured one size only."


def c12_sentence(sweep: Sequence[dict[str, Any]], crossing: dict[tuple, int | None]) -> str:
    """C12 on this machine: where the accelerator's update wins, or the CPU's side of it."""
    if not crossing:
        at = sorted((r for r in sweep if r["device"] == "cpu" and r["width"] == 64
                     and not r["penalty"]), key=lambda r: r["rows"])  # fmt: skip
        figures = ", ".join(f"{r['rows']:,} rows {format_seconds(r['median_s'])}" for r in at)
        return (
            "No accelerator here, so C12 is not measurable on this machine. The CPU's side of "
            f"it, what an accelerator would have to beat at width 64, penalty off, rows per "
            f"side: {figures} per update. "
            "The ledger (notebook 10) reads the GPU reference records where they exist."
        )
    parts = [
        f"width {w}{' with the penalty' if p else ''}: "
        + (f"from {rows:,} rows" if rows is not None else "at no size measured")
        for (w, p), rows in sorted(crossing.items())
    ]
    return "The accelerator's update beat the CPU's past both IQRs " + "; ".join(parts) + "."


def this_machines_grid() -> list[dict[str, Any]] | None:
    """Notebook 00's width x batch grid as this machine last measured it, if it did."""
    path = results.RESULTS_DIR / "bench.crossover.json"
    return results.load(path).data["grid"] if path.is_file() else None


def grid_findings(
    sweep: Sequence[dict[str, Any]], crossing: dict[tuple, int | None], grid: Sequence[dict] | None
) -> list[str]:
    """The discriminator's crossover (penalty off) checked against notebook 00's width x
    batch grid at the same width: one reading of one measurement, the batch where the
    accelerator starts to win. Each side is a range, the sizes between which its crossing
    lies; 00's grid sets the expectation."""
    if not crossing:
        return [
            "Checked against notebook 00's grid: no accelerator here, so neither has a "
            "crossover to compare; the GPU reference run compares them."
        ]
    if not grid:
        return ["Checked against notebook 00's grid: no bench.crossover record (run 00 first)."]
    lines = []
    for (width, penalty), rows in sorted(crossing.items()):
        expected = gail.grid_crossing(grid, width)
        if penalty or expected is None or rows is None:
            if not penalty:
                where = "00's grid" if expected is None else "this sweep"
                lines.append(f"Width {width}: no crossover in {where}, nothing to compare.")
            continue
        sizes = sorted({r["rows"] for r in sweep if r["width"] == width})
        below = max([n for n in sizes if n < rows], default=rows)
        finding = Finding(
            f"Width {width}, the rows per side where the accelerator's update starts to win",
            Spread(rows, below, rows, "between the sizes measured"),
            Expectation.between(*expected, f"notebook 00's forward crossover at width {width}"),
            unit="{:,.0f}",
            figures=(sweep,),
        )
        lines.append(str(finding))
    return lines


def learning_plot(rounds: Sequence[dict[str, Any]]) -> Figure:
    """The generator's true episode returns against steps, and the discriminator's accuracy
    per round, for the first placement (every placement learns alike from one seed)."""
    row = rounds[0]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    if row["episodes"]:
        steps, returns = zip(*row["episodes"], strict=True)
        left.plot(steps, returns, ".", alpha=0.6)
    left.set_xlabel("environment steps")
    left.set_ylabel("episode return (HalfCheetah's reward)")
    left.set_title("The generator, scored by the environment")
    right.plot(range(1, len(row["accuracy"]) + 1), row["accuracy"], marker="o")
    right.axhline(0.5, color="grey", lw=0.8, ls=":")
    right.set_ylim(0, 1)
    right.set_xlabel("round")
    right.set_ylabel("accuracy")
    right.set_title("The discriminator, expert against policy")
    fig.tight_layout()
    return fig


def learning_sentence(rounds: Sequence[dict[str, Any]], expert_return: float) -> str:
    """The learning signal, or why quick mode does not judge one."""
    row = rounds[0]
    steps = row["round_steps"] * (len(row["accuracy"]) or 1)
    if quick_mode():
        return (
            f"quick mode: no learning verdict ({steps:,} environment steps are too few to "
            "imitate HalfCheetah; the full mode runs longer, and GAIL needs millions to come "
            "near the expert)"
        )
    returns = [r for _, r in row["episodes"]]
    if len(returns) < 4:
        return f"no learning verdict: {len(returns)} episodes ended in {steps:,} steps"
    half = len(returns) // 2
    first, last = float(np.mean(returns[:half])), float(np.mean(returns[half:]))
    change = "rose" if last > first else "fell" if last < first else "stayed level"
    return (
        f"Over {steps:,} steps the generator's mean episode return {change}, from {first:.0f} "
        f"(first half of its episodes) to {last:.0f} (second half), against the expert's "
        f"{expert_return:.0f}; one seed, so no verdict on learning, only its direction."
    )


def phase_guess_line(guess: str | None, rounds: Sequence[dict[str, Any]]) -> str:
    """The learner's predicted dominant phase beside the measured one."""
    shares = _shares(rounds[0])
    found = max(shares, key=shares.__getitem__)
    largest = (
        f"The largest phase here is the {PHASE_WORDS[found]} ({shares[found]:.0%} of a round; "
        "no spread measured, so an order, not a verdict)"
    )
    if guess is None:
        return f"{largest}. Write a phase into MY_PHASE_GUESS to compare."
    if guess not in shares:
        return f"{guess!r} is not a phase; the phases are: {', '.join(shares)}."
    held = "as you predicted" if guess == found else f"you predicted {guess!r}"
    return f"{largest}: {held}."


def record_fields(
    sweep: list[dict[str, Any]], crossing: dict[tuple, int | None], rounds: list[dict[str, Any]]
) -> dict[str, Any]:
    """The ``bench.gail`` record's fields, as ``python -m hetero_tutorial bench gail`` writes
    them."""
    accelerators = sorted({r["device"] for r in sweep} - {"cpu"})
    return {
        "accelerator": accelerators[0] if accelerators else None,
        "sweep": sweep,
        "crossover_rows": [{"width": w, "penalty": p, "rows": r} for (w, p), r in crossing.items()],
        "rounds": rounds,
    }


def expert_line(expert: Any) -> str:
    """Who the expert is: its episodes, their mean return, and how it was trained."""
    mean = float(np.mean(expert.returns))
    return (
        f"The expert: {len(expert.returns)} episodes of HalfCheetah, return {mean:.0f} on "
        f"average, trained by {expert.provenance['learner']} for "
        f"{expert.provenance['steps']:,} steps (MuJoCo {expert.provenance['versions']['mujoco']})."
    )
