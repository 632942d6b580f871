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
from hetero_tutorial.core import results
from hetero_tutorial.core.findings import Check, Expectation, Finding, Outcome
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import Spread, format_seconds
from hetero_tutorial.notebook.curriculum_findings import curriculum_line
from hetero_tutorial.notebook.exercises import UNSOLVED, prediction_line
from hetero_tutorial.notebook.prose import gpu_paragraph
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.rl.ppo.trainer import PHASES

signed = "{:+.1%}".format


def timers_table(timers: list[dict[str, Any]]) -> Markdown:
    columns = {"device": "device", "first_call_s": "first call",
               "naive_s": "article's timer (per call)",
               "honest_s": "warmed up, synchronised (per call)"}  # fmt: skip
    return markdown_table(timers, columns, dict.fromkeys(list(columns)[1:], format_seconds))


def fixed_rule_table(widths: tuple[int, ...] = (64, 128, 192, 256, 512, 1024)) -> Markdown:
    rows = [{"width": w, "plain": select_device(w, False), "heavy": select_device(w, True)}
            for w in widths]  # fmt: skip
    columns = {"width": "hidden width", "plain": "select_device(w, False)",
               "heavy": "select_device(w, True)"}  # fmt: skip
    return markdown_table(rows, columns, timed=False)


def cost_table(decision: Decision) -> Markdown:
    columns = {"phase": "phase", "where": "where", "seconds_per_call": "per call",
               "calls_per_iteration": "calls/iteration",
               "seconds_per_iteration": "per iteration"}  # fmt: skip
    formats = dict.fromkeys(("seconds_per_call", "seconds_per_iteration"), format_seconds)
    return markdown_table(decision.cost_rows(), columns, formats)


def candidates_table(decision: Decision, priced: Any) -> Markdown:
    """Every candidate's price by phase, once the pricing exercise is solved (``priced``,
    what ``check`` returned; None: the reveal waits); a phase no candidate pays (the copies,
    where rollout and update always share a device: the reasons' ``copies`` line says so)
    is left out."""
    if priced is None:
        return Markdown("")  # the guess line below says why
    rows = decision.candidate_rows()
    unpaid = [p for p in PHASES if not any(row.get(f"{p}_s") for row in rows)]
    columns = {"plan": "plan", "threads": "threads"}
    columns |= {f"{p}_s": p.replace("_", " ") for p in PHASES if p not in unpaid}
    columns["total_s"] = "total per iteration"
    formats = {f"{p}_s": format_seconds for p in (*PHASES, "total")}
    return markdown_table(rows, columns, formats)


def decisions_table(decisions: list[Decision]) -> Markdown:
    """The allocator's decision per network. One answered from the cache measured nothing in
    this call (0 s): the call that first asked paid for it, and the curriculum counts that."""
    rows = [{**d.fields(), "measured": "0 (cached)" if d.from_cache else d.measure_seconds}
            for d in decisions]  # fmt: skip
    columns = {"network": "network", "plan": "allocator's plan", "threads": "threads",
               "estimated_seconds_per_iteration": "estimated per iteration",
               "measured": "measuring in this call",
               "held": "kept its last plan (hysteresis)"}  # fmt: skip
    formats = {"estimated_seconds_per_iteration": format_seconds,
               "measured": lambda v: v if isinstance(v, str) else format_seconds(v)}  # fmt: skip
    return markdown_table(rows, columns, formats)


def rows_table(rows: list[dict[str, Any]], folded: bool = True) -> Markdown:
    """One row per configuration run: the plans it stood for, devices, threads, seconds
    (``folded``: in a ``<details>`` block; the plot and the criterion read the same runs)."""
    every = {plan for r in rows for plan in r["plans"]}  # a run that stood for them all says so
    shown = [{**r, "plans": "every plan" if len(every) > 1 and set(r["plans"]) == every
              else ", ".join(r["plans"]) or "(the thread check)"} for r in rows]  # fmt: skip
    columns = {"network": "network", "plans": "plans it ran for", "label": "configuration",
               "seconds_per_iteration": "median per iteration", "iqr_s": "IQR"}  # fmt: skip
    formats = dict.fromkeys(("seconds_per_iteration", "iqr_s"), format_seconds)
    table = markdown_table(shown, columns, formats)
    if not folded:
        return table
    summary = "<details><summary>Each configuration's median and IQR per iteration</summary>"
    return Markdown(f"{summary}\n\n{table.data}\n\n</details>")


ESTIMATE = "the allocator's estimate"
"""What a training iteration is set against: it should cost at least the estimate."""


def estimate_finding(decision: Any, row: dict[str, Any], rows: Sequence[dict[str, Any]]):
    """One network's training seconds per iteration over the allocator's estimate for its
    choice (expected at least 1: the estimate prices only the phases whose cost depends on
    where they run), spread over the timed iterations. The cause a run can check where
    training cost less: the estimate itself runs high at that network, which the allocator's
    other thread count there shows where it ran below its own estimate too."""
    estimate, network = decision.chosen.total, decision.fields()["network"]
    seconds = [s / estimate for s in row.get("iteration_seconds", [])]
    ratio = row["seconds_per_iteration"] / estimate
    measured = (Spread(ratio, min(seconds), max(seconds), "per iteration", len(seconds))
                if len(seconds) > 1
                else Spread(ratio, how="one iteration"))  # fmt: skip
    others = [(r["threads"], r["seconds_per_iteration"] / c.total) for r in rows
              if r["network"] == network and not r.get("plans") and r.get("threads") is not None
              for c in decision.candidates
              if c.threads == r["threads"] and c is not decision.chosen and c.total]  # fmt: skip
    checks = tuple(Check(f"the estimate runs high at {network}, as the thread check's "
                         f"{counted(n, 'thread')} ran below its own estimate too "
                         f"({other:.2f}x)", other < 1)
                   for n, other in others)  # fmt: skip
    subject = f"{network} training over its estimate ({format_seconds(estimate)})"
    expected = Expectation.at_least(1.0, "the estimate")
    return Finding(subject, measured, expected, checks=checks, figures=(rows,))


@judged()
def estimate_lines(decisions: Sequence[Decision], rows: Sequence[dict[str, Any]]) -> list[str]:
    """Each network's training time per iteration over the allocator's estimate for its
    choice, as findings: the networks where it held on one line, every other in full."""
    found = []
    for decision in decisions:
        network = decision.fields()["network"]
        chosen = [r for r in rows if r["network"] == network and "allocator" in r.get("plans", [])]
        found += [(network, estimate_finding(decision, run, rows)) for run in chosen[:1]]
    if not found:
        return ["No network's chosen configuration ran here, so no estimate to check."]
    held = [(n, f) for n, f in found if f.outcome is Outcome.HELD]
    lines = []
    if held:
        listed = ", ".join(
            f"{n} {f.measured.value:.2f}x ({f.measured.low:.2f}-{f.measured.high:.2f}x)"
            for n, f in held
        )
        lines.append(f"Training over {ESTIMATE} (at least 1x): {listed}: held.")
    return lines + [str(f) for _, f in found if f.outcome is not Outcome.HELD]


def price_guess_line(guess_ms: float | None, decision: Decision, priced: Any) -> str:
    """The learner's predicted milliseconds per iteration of the cheapest placement beside
    the allocator's price for it (the sum the pricing exercise writes), once the exercise is
    solved (``priced``)."""
    if priced is None:
        return UNSOLVED
    cheapest = min(decision.candidates, key=lambda candidate: candidate.total)
    what = f"The cheapest placement, {cheapest.label}, priced per iteration"
    guess = None if guess_ms is None else guess_ms / 1e3
    return prediction_line(what, guess, cheapest.total, format_seconds)


def reasons(decision: Decision, priced: Any) -> str:
    """The decision's reasons, phase by phase, once the pricing exercise is solved: they name
    the cheapest placement and its price."""
    return UNSOLVED if priced is None else decision.explain()


def _spread(v: dict[str, Any]) -> str:
    if v["slowdown_low"] is None:
        return "—"
    if v["slowdown"] == v["slowdown_low"] == v["slowdown_high"] == 0:
        return "exact: one configuration"
    return f"{v['slowdown_low']:+.1%}..{v['slowdown_high']:+.1%}"


WITHIN = {True: "yes", False: "no", None: "unclear (within the noise)"}
"""How the table reads ``within_tolerance``: decided by the paired spread, not the median."""


def _one_configuration(verdicts: Sequence[dict[str, Any]]) -> bool:
    """True where the five plans ran as one configuration at every network (no accelerator):
    the criterion then has no second placement to compare, only the thread check."""
    return bool(verdicts) and all(v["configurations"] == 1 for v in verdicts)


def _by_threads(v: dict[str, Any]) -> str:
    seconds = v.get("threads_seconds") or {}
    return ", ".join(f"{n}: {format_seconds(s)}" for n, s in seconds.items()) or "—"


def criterion_table(verdicts: list[dict[str, Any]]) -> Markdown:
    """The criterion per network; where the five plans were one configuration everywhere,
    only what was compared: the allocator's thread count against the others."""
    formats = {"slowdown": signed, "decision_seconds": format_seconds,
               "saved_vs_fixed_rule": signed}  # fmt: skip
    if _one_configuration(verdicts):
        columns = {"network": "network", "threads_chosen": "threads chosen",
                   "by_threads": "median per iteration, by threads",
                   "threads_verdict": "its thread choice",
                   "decision_seconds": "measuring"}  # fmt: skip
        shown = [{**v, "by_threads": _by_threads(v)} for v in verdicts]
        return markdown_table(shown, columns, formats)
    columns = {"network": "network", "best_fixed": "best fixed plan",
               "configurations": "distinct placements", "slowdown": "allocator vs best fixed",
               "spread": "paired spread", "within_tolerance": "within 5%",
               "threads_verdict": "its thread choice", "decision_seconds": "measuring",
               "saved_vs_fixed_rule": "time saved vs fixed rule"}  # fmt: skip
    shown = [{**v, "spread": _spread(v), "within_tolerance": WITHIN[v["within_tolerance"]]}
             for v in verdicts]  # fmt: skip
    return markdown_table(shown, columns, formats)


NOTHING_TO_COMPARE = (
    "One configuration ran for all five plans at every network: the 5% criterion (C10) and "
    "C11's saving (the article: 22%) had nothing to compare."
)


def criterion_sentences(verdicts: list[dict[str, Any]], frames: str | None = None) -> list[str]:
    """Per network, what the comparison says, noise and collapse taken into account (one
    line where every network ran as one configuration: that is no timing, so the busy guard
    has nothing to withhold); ``frames``: the CNN's line too."""
    if _one_configuration(verdicts):
        return [NOTHING_TO_COMPARE]
    return _compared(verdicts, frames)


@judged()
def _compared(verdicts: list[dict[str, Any]], frames: str | None) -> list[str]:
    lines = []
    for v in verdicts:
        if v["configurations"] == 1:
            text = f"{v['network']}: the five plans were one configuration here, nothing to compare"
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
    return lines + ([cnn_sentence(verdicts, frames)] if frames is not None else [])


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


def references() -> Markdown | None:
    """The criterion of machines with an accelerator; where none are recorded, the
    notebook's one line about the GPU case (or nothing, once it was shown)."""
    found = results.load_references("bench.allocator", with_accelerator=True)
    if not found:
        gpu_paragraph(results.NO_ACCELERATOR_REFERENCES)
        return None
    rows = [{"machine": r.hardware, **v} for r in found for v in r.data["criterion"]]
    columns = {"machine": "machine", "network": "network", "best_fixed": "best fixed plan",
               "slowdown": "allocator vs best fixed",
               "saved_vs_fixed_rule": "saved vs fixed rule"}  # fmt: skip
    formats = {"slowdown": signed, "saved_vs_fixed_rule": signed}
    return markdown_table(rows, columns, formats, timed=False)


def price_cases(decision: Decision) -> list[tuple[Any, ...]]:
    """The inputs the pricing exercise is checked on: every candidate the allocator priced."""
    rows = decision.cost_rows()
    return [(rows, str(c.rollout_device), str(c.update_device), c.threads)
            for c in decision.candidates]  # fmt: skip


def _choice_word(verdict: str) -> str:
    """A thread check's outcome in a word or three: what its verdict starts with says it."""
    if verdict.startswith("right") and "past the noise" in verdict:
        return "the right count past the noise"
    if verdict.startswith("wrong"):
        return "the wrong count past the noise"
    if verdict.startswith(("right", "as good as", "no clear effect")):
        return "no clear effect against another count"
    return verdict.split(":")[0]  # "no verdict", "not judged (busy machine)"


def thread_choice_line(verdicts: Sequence[dict[str, Any]]) -> str:
    """The allocator's thread choices by outcome, each with its networks (threads chosen)."""
    outcomes: dict[str, list[str]] = {}
    for v in verdicts:
        if v.get("threads_verdict"):
            names = outcomes.setdefault(_choice_word(v["threads_verdict"]), [])
            names.append(f"{v['network']} ({v['threads_chosen']})")
    if not outcomes:
        return "Its thread choice was not checked: one thread count ran."
    parts = [f"{word} at {', '.join(names)}" for word, names in outcomes.items()]
    return "Its thread choice: " + "; ".join(parts) + "."


@judged("all")
def findings(verdicts: list[dict[str, Any]], summary: dict[str, Any]) -> list[str]:
    """What notebook 05 measured on this machine, each line from the numbers (one line for
    the criterion where it had nothing to compare)."""
    collapsed = ["Placements: one configuration at every network, nothing to compare."]
    criterion = collapsed if _one_configuration(verdicts) else criterion_sentences(verdicts)
    return [*criterion, thread_choice_line(verdicts), curriculum_line(summary)]


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
