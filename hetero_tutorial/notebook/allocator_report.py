"""Notebook 05's tables, sentences and figures: the allocator's measurements, choices, checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
from IPython.display import Markdown
from matplotlib import ticker
from matplotlib.figure import Figure

from hetero_tutorial.allocator.decision import Decision
from hetero_tutorial.allocator.fixed_rule import select_device
from hetero_tutorial.allocator.trials import worth
from hetero_tutorial.core import results
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.timing import format_seconds
from hetero_tutorial.notebook.exercises import prediction_line
from hetero_tutorial.notebook.prose import gpu_paragraph
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.rl.ppo.trainer import PHASES

signed = "{:+.1%}".format


def timers_table(timers: list[dict[str, Any]]) -> Markdown:
    return markdown_table(
        timers,
        {
            "device": "device",
            "first_call_s": "first call",
            "naive_s": "article's timer (per call)",
            "honest_s": "warmed up, synchronised (per call)",
        },
        dict.fromkeys(("first_call_s", "naive_s", "honest_s"), format_seconds),
    )


def fixed_rule_table(widths: tuple[int, ...] = (64, 128, 192, 256, 512, 1024)) -> Markdown:
    return markdown_table(
        [
            {"width": w, "plain": select_device(w, False), "heavy": select_device(w, True)}
            for w in widths
        ],
        {
            "width": "hidden width",
            "plain": "select_device(w, False)",
            "heavy": "select_device(w, True)",
        },
        timed=False,
    )


def cost_table(decision: Decision) -> Markdown:
    return markdown_table(
        decision.cost_rows(),
        {
            "phase": "phase",
            "where": "where",
            "seconds_per_call": "per call",
            "calls_per_iteration": "calls/iteration",
            "seconds_per_iteration": "per iteration",
            "samples": "samples",
        },
        {"seconds_per_call": format_seconds, "seconds_per_iteration": format_seconds},
    )


def candidates_table(decision: Decision) -> Markdown:
    columns = {"plan": "plan", "threads": "threads"}
    columns |= {f"{p}_s": p.replace("_", " ") for p in PHASES}
    columns["total_s"] = "total per iteration"
    formats = {f"{p}_s": format_seconds for p in (*PHASES, "total")}
    return markdown_table(decision.candidate_rows(), columns, formats)


def decisions_table(decisions: list[Decision]) -> Markdown:
    """The allocator's decision per network. One answered from the cache measured nothing in
    this call (0 s): the call that first asked paid for it, and the curriculum counts that."""
    rows = [
        {**d.fields(), "answer": "from the cache" if d.from_cache else "measured"}
        for d in decisions
    ]
    return markdown_table(
        rows,
        {
            "network": "network",
            "plan": "allocator's plan",
            "threads": "threads",
            "estimated_seconds_per_iteration": "estimated per iteration",
            "answer": "answered",
            "measure_seconds": "measuring in this call",
            "rounds": "rounds",
            "held": "held",
        },
        {"estimated_seconds_per_iteration": format_seconds, "measure_seconds": format_seconds},
    )


def rows_table(rows: list[dict[str, Any]]) -> Markdown:
    """One row per configuration run: the plans it stood for, devices, threads, seconds."""
    shown = [{**r, "plans": ", ".join(r["plans"]) or "(the thread check)"} for r in rows]
    return markdown_table(
        shown,
        {
            "network": "network",
            "plans": "plans it ran for",
            "label": "configuration",
            "seconds_per_iteration": "median per iteration",
            "iqr_s": "IQR",
        },
        {"seconds_per_iteration": format_seconds, "iqr_s": format_seconds},
    )


@judged()
def estimates_sentence(decisions: Sequence[Decision], rows: Sequence[dict[str, Any]]) -> str:
    """Each network's measured seconds per iteration beside the allocator's estimate for the
    configuration it chose, and what the difference says.

    The estimate prices only the phases whose cost depends on where they run (the
    environments' own steps cost the same in every plan and are left out), so a training
    iteration should cost more than it; one that costs less means the allocator's short
    measuring ran slower than the training did (a machine busier while it measured, or
    phases not warm within its budget)."""
    parts, under = [], []
    for decision in decisions:
        network = decision.fields()["network"]
        run = next(
            (r for r in rows if r["network"] == network and "allocator" in r.get("plans", [])),
            None,
        )
        if run is None:
            continue
        estimate, measured = decision.chosen.total, run["seconds_per_iteration"]
        parts.append(
            f"{network} {format_seconds(measured)} against {format_seconds(estimate)} "
            f"({measured / estimate:.2f}x)"
        )
        if measured < estimate:
            under.append(network)
    if not parts:
        return "No network's chosen configuration ran here, so no estimate to check."
    text = (
        "Measured per iteration against the allocator's estimate for its choice: "
        + "; ".join(parts)
        + ". The estimate leaves out the environments' own steps, so training should cost more."
    )
    if under:
        text += (
            f" At {', '.join(under)} it cost less: the allocator's measuring ran slower than the "
            "training did, so those estimates were too high (the choice rests on the "
            "differences between candidates, which a uniformly slow measurement keeps)."
        )
    else:
        text += " It did at every network."
    return text


def price_guess_line(guess_ms: float | None, decision: Decision) -> str:
    """The learner's predicted milliseconds per iteration of the cheapest placement beside
    the allocator's price for it (the sum the pricing exercise writes)."""
    cheapest = min(decision.candidates, key=lambda candidate: candidate.total)
    what = f"The cheapest placement, {cheapest.label}, priced per iteration"
    guess = None if guess_ms is None else guess_ms / 1e3
    return prediction_line(what, guess, cheapest.total, format_seconds)


def _spread(v: dict[str, Any]) -> str:
    if v["slowdown_low"] is None:
        return "—"
    if v["slowdown"] == v["slowdown_low"] == v["slowdown_high"] == 0:
        return "exact: one configuration"
    return f"{v['slowdown_low']:+.1%}..{v['slowdown_high']:+.1%}"


WITHIN = {True: "yes", False: "no", None: "unclear (within the noise)"}
"""How the table reads ``within_tolerance``: decided by the paired spread, not the median."""


def criterion_table(verdicts: list[dict[str, Any]]) -> Markdown:
    shown = [
        {**v, "spread": _spread(v), "within_tolerance": WITHIN[v["within_tolerance"]]}
        for v in verdicts
    ]
    return markdown_table(
        shown,
        {
            "network": "network",
            "best_fixed": "best fixed plan",
            "configurations": "distinct placements",
            "slowdown": "allocator vs best fixed",
            "spread": "paired spread",
            "within_tolerance": "within 5%",
            "threads_verdict": "its thread choice",
            "decision_seconds": "measuring",
            "saved_vs_fixed_rule": "time saved vs fixed rule",
        },
        {"slowdown": signed, "decision_seconds": format_seconds, "saved_vs_fixed_rule": signed},
    )


@judged()
def criterion_sentences(verdicts: list[dict[str, Any]]) -> list[str]:
    """Per network, what the comparison says, noise and collapse taken into account."""
    lines = []
    for v in verdicts:
        if v["configurations"] == 1:
            text = (
                f"{v['network']}: the five plans were one configuration here, so the "
                "criterion holds trivially: there was no placement to choose"
            )
        elif v["slowdown"] == 0:
            text = f"{v['network']}: the allocator chose the best fixed plan's configuration"
        else:
            low, high = v["slowdown_low"], v["slowdown_high"]
            inside = low is not None and min(low, high) <= 0 <= max(low, high)
            text = (
                f"{v['network']}: the allocator's configuration ran {v['slowdown']:+.1%} "
                f"against the best fixed plan ({v['best_fixed']})"
            )
            text += ", within the noise of the paired iterations" if inside else ""
        if v.get("threads_verdict"):
            text += f"; its thread count ({v['threads_chosen']}) was {v['threads_verdict']}"
        lines.append(text + ".")
    return lines


@judged()
def cnn_sentence(verdicts: list[dict[str, Any]], frames: str) -> str:
    cnn = next((v for v in verdicts if v["network"].startswith("cnn")), None)
    if cnn is None:
        return "No CNN network in this comparison."
    if cnn["configurations"] == 1:
        return (
            f"{cnn['network']} ({frames} frames): the fixed rule and the allocator were one "
            "configuration here, so there is nothing to save; the article's C11: 22% faster."
        )
    return (
        f"Measured here ({frames} frames): the allocator saved {cnn['saved_vs_fixed_rule']:+.1%} "
        f"of the fixed rule's time per iteration on {cnn['network']}. The article (C11): 22%."
    )


def curriculum_table(summary: dict[str, Any]) -> Markdown:
    found = worth(summary)
    allocator = found["allocator_s"]
    rows = [{"plan": "allocator (with its measuring)", "total": allocator}]
    rows += [
        {"plan": p, "total": s, "saved": s - allocator} for p, s in found["contenders"].items()
    ]
    return markdown_table(
        rows,
        {"plan": "contender", "total": "seconds, all stages", "saved": "allocator saved (-: lost)"},
        {"total": format_seconds, "saved": "{:+.2f} s".format},
    )


@judged()
def curriculum_sentence(summary: dict[str, Any]) -> str:
    found = worth(summary)
    best, spread = found["best"], found["spread"]
    gap = abs(found["contenders"][best] - found["allocator_s"])
    verdict = {
        True: f"the allocator saved {format_seconds(gap)} against it",
        False: f"the allocator lost {format_seconds(gap)} against it",
    }.get(found["saved"], "no clear difference" + spread.noise())
    return (
        f"Over the curriculum the allocator took {format_seconds(found['allocator_s'])}, of "
        f"which {format_seconds(found['measuring_s'])} measuring; the best fixed contender "
        f"({best}) took {format_seconds(found['contenders'][best])}, {spread} the allocator's "
        f"time: {verdict}."
    )


def references() -> Markdown | None:
    """The criterion of machines with an accelerator; where none are recorded, the
    notebook's one line about the GPU case (or nothing, once it was shown)."""
    found = results.load_references("bench.allocator", with_accelerator=True)
    if not found:
        gpu_paragraph(results.NO_ACCELERATOR_REFERENCES)
        return None
    return markdown_table(
        [{"machine": r.hardware, **v} for r in found for v in r.data["criterion"]],
        {
            "machine": "machine",
            "network": "network",
            "best_fixed": "best fixed plan",
            "slowdown": "allocator vs best fixed",
            "saved_vs_fixed_rule": "saved vs fixed rule",
        },
        {"slowdown": signed, "saved_vs_fixed_rule": signed},
        timed=False,
    )


def price_cases(decision: Decision) -> list[tuple[Any, ...]]:
    """The inputs the pricing exercise is checked on: every candidate the allocator priced."""
    rows = decision.cost_rows()
    return [
        (rows, str(c.rollout_device), str(c.update_device), c.threads) for c in decision.candidates
    ]


@judged("all")
def findings(verdicts: list[dict[str, Any]], summary: dict[str, Any]) -> list[str]:
    """What notebook 05 measured on this machine, each line from the numbers."""
    return [*criterion_sentences(verdicts), curriculum_sentence(summary)]


def _plans_label(row: dict[str, Any], chosen_threads: int | None = None) -> str:
    """What a configuration's bar is: the plans it ran for, or the allocator's thread check
    (its devices at a thread count it did not choose)."""
    plans = row.get("plans", [row["plan"]])
    if plans:
        names = "all five plans" if len(plans) == 5 else ", ".join(plans)
        return f"{names} ({row.get('label', row['plan'])})"
    chose = "" if chosen_threads is None else f"; the allocator chose {chosen_threads}"
    return f"thread check: {row.get('label', row['plan'])} (not chosen{chose})"


def allocator_comparison(rows: Sequence[dict[str, Any]], tolerance: float = 0.05) -> Figure:
    """Seconds per iteration of each configuration over the best fixed plan's, per network.

    ``rows``: :func:`hetero_tutorial.allocator.trials.compare`'s, one per configuration run
    (the plans it stood for, its devices and threads). Each bar runs from 0 to its ratio,
    so the best fixed plan's ends at 1; the allocator's configuration is orange and
    hatched; the dotted line marks the allowed ``tolerance`` above the best fixed plan.
    """
    fixed = {"fixed-rule", "hybrid", "all-cpu", "all-accelerator"}
    labels, values, hatched = [], [], []
    for network in dict.fromkeys(r["network"] for r in rows):
        mine = [r for r in rows if r["network"] == network]
        best = min(
            r["seconds_per_iteration"] for r in mine if fixed & set(r.get("plans", [r["plan"]]))
        )
        chosen = next((r["threads"] for r in mine if "allocator" in r.get("plans", [])), None)
        for row in mine:
            labels.append(f"{network}: {_plans_label(row, chosen)}")
            values.append(row["seconds_per_iteration"] / best)
            hatched.append("allocator" in row.get("plans", [row["plan"]]))
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.32 * len(labels)))
    colours = ["tab:orange" if h else "tab:blue" for h in hatched]
    # named rows (a category axis), top to bottom in the order they ran
    bars = ax.barh(labels, values, color=colours, height=0.6, edgecolor="k", linewidth=0.4)
    for bar, chosen in zip(bars, hatched, strict=True):
        bar.set_hatch("//" if chosen else None)
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=8)
    ax.axvline(1.0, color="k", linewidth=0.8)
    ax.axvline(1 + tolerance, color="k", linestyle=":", label=f"best fixed plan + {tolerance:.0%}")
    ax.set_xlim(0, max(1.25, max(values) * 1.08))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}x"))
    ax.set_xlabel("seconds per iteration / the best fixed plan's (hatched: the allocator's)")
    ax.legend(loc="upper left", bbox_to_anchor=(1, 1), fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def curriculum_timeline(summary: dict[str, Any]) -> Figure:
    """One bar per contender through the curriculum's stages; the allocator's measuring hatched.

    ``summary``: :func:`hetero_tutorial.allocator.trials.curriculum`'s result. Fixed plans
    that ran as one configuration at every stage share a bar; ``threads`` adds the
    devices the allocator chose at each stage, run at one fixed thread count throughout
    (whatever count the allocator chose there).
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
        label = f"the chosen devices at {count} thread{'s' * (count != '1')}, every stage"
        bars[label] = [(0.0, step["by_threads"][count]) for step in timeline]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = plt.subplots(figsize=(9, 0.8 + 0.5 * len(bars)))
    for row, stages in bars.items():  # named rows (a category axis)
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
    ax.tick_params(axis="y", labelsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds (timed iterations of every stage, in order)")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1, 1))
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
