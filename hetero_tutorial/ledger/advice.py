"""What to do on this machine: recommendations generated from its own records.

Notebook 10 ends with this: where each phase should run, how many CPU threads, which
replay buffer, which batch sizes, and whether the allocator is worth its measuring
time. Each recommendation comes with the measured figure behind it, and says
``no clear effect`` where the spread of the repeats decides nothing; a question whose
record is missing says which notebook answers it. Nothing here is written in advance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hetero_tutorial.allocator.curriculum import contenders, paired_sums, worth
from hetero_tutorial.core.machine_load import NOT_JUDGED
from hetero_tutorial.core.plural import counted, listed
from hetero_tutorial.core.results import Record, busy_line
from hetero_tutorial.core.timing import Spread, format_seconds
from hetero_tutorial.ledger.claims import STEP_STUDIES, quiet_records
from hetero_tutorial.ledger.rules import Records
from hetero_tutorial.studies.buffer_rows import fastest_sampler
from hetero_tutorial.studies.crossover_grid import BATCH_WITHIN, batches_that_pay
from hetero_tutorial.studies.ddpg_buffers import unpaired_reason
from hetero_tutorial.studies.threads import (
    MIN_PAIRS,
    ROLES,
    one_answer,
    one_answer_sentence,
    rule_parts,
    thread_effects,
)

Advice = dict[str, str]
"""``question``, ``advice``, ``figure`` (the measurement behind it) and ``source`` (a record)."""


NOT_MEASURED = "not measured yet"
"""A question's advice where no record (or none from a quiet machine) answers it."""


def _newest(records: Records, kind: str, studies: Sequence[str] = ()) -> Record | None:
    """The newest record of ``kind`` whose ``studies`` (empty: all) ran on a quiet machine
    (nothing is drawn from a busy study's figures), or None."""
    found = [r for r in records.get(kind, []) if busy_line(r, studies) is None]
    return max(found, key=lambda r: r.provenance["date"]) if found else None


def _part_missing(records: Records, kind: str, notebook: str, part: str) -> str:
    """Why one part of a two-part answer has no figures: every record of ``kind`` ran on a
    busy machine (not judged), or none was made (not measured yet)."""
    if records.get(kind):
        return f"{notebook}'s {part}: {NOT_JUDGED}"
    return f"{notebook}'s {part} not measured yet: run notebook {notebook}"


def _missing(question: str, notebook: str, kind: str) -> Advice:
    return {
        "question": question,
        "advice": f"{NOT_MEASURED}: run notebook {notebook}",
        "figure": "",
        "source": kind,
    }


def _side(spread: Spread, yes: str, no: str, unclear: str, one: str | None = None) -> str:
    """``yes`` if the spread lies wholly above 1, ``no`` wholly below, else ``unclear``; or
    ``one`` where one repeat measured no spread, or too few repeats measured one (no
    verdict, not "no clear effect")."""
    if one is not None and not spread.decides:
        return one
    side = spread.side(1.0)
    return unclear if side is None else yes if side else no


def where_phases_run(records: Records) -> Advice:
    record = _newest(records, "bench.crossover", (*STEP_STUDIES, "the value update"))
    question = "where each phase should run"
    if record is None:
        return _missing(question, "00", "bench.crossover")
    step, update = record.data["policy_step"], record.data["value_update"]
    accel = next((name for name in step if name not in ("cpu", "env_only")), None)
    figure = (
        f"one CartPole step with a 128-unit policy: {format_seconds(step['cpu']['median_s'])} "
        f"on the CPU; a 256-unit value update: {format_seconds(update['cpu']['median_s'])}"
    )
    if accel is None:
        advice = "everything on the CPU: there is no accelerator here to place a phase on"
        return {"question": question, "advice": advice, "figure": figure, "source": record.kind}
    rollout = Spread.of_medians(step[accel], step["cpu"])  # above 1: the accelerator is slower
    learner = Spread.of_medians(update["cpu"], update[accel])  # above 1: the accelerator faster
    advice = (
        _side(rollout, "rollout on the CPU", f"rollout on {accel}", "rollout: no clear effect")
        + "; "
        + _side(learner, f"update on {accel}", "update on the CPU", "update: no clear effect")
    )
    figure += (
        f"; {accel}'s step takes {rollout} the CPU's time, its update runs at {learner} "
        "the CPU's speed"
    )
    return {"question": question, "advice": advice, "figure": figure, "source": record.kind}


def thread_choices(criterion: list[dict], pairs: int | None = None) -> dict[str, list[dict]]:
    """Notebook 05's thread checks, by outcome: ``right`` (the fastest, past the noise of
    the other count), ``tie`` (within the noise of it, whichever it chose), ``wrong``
    (another count was faster past the noise) and ``none`` (no verdict: fewer than
    MIN_PAIRS paired iterations; ``pairs``: the record's ``iterations``, for rows written
    before ``threads_pairs`` was). Rows without a check, or from a busy machine, are left out."""
    found: dict[str, list[dict]] = {"right": [], "tie": [], "wrong": [], "none": []}
    for row in criterion:
        verdict = row.get("threads_verdict")
        if not verdict or verdict == NOT_JUDGED:  # a busy machine's: no outcome
            continue
        counted = row.get("threads_pairs", pairs)
        if verdict.startswith("no verdict") or (counted is not None and counted < MIN_PAIRS):
            found["none"].append(row)
        elif verdict.startswith("wrong"):
            found["wrong"].append(row)
        elif verdict.startswith("right") and "past the noise" in verdict:
            found["right"].append(row)
        else:
            found["tie"].append(row)
    return found


def _wrong_choice(row: dict) -> str:
    if "threads_ratio" not in row:  # an older record: its verdict alone
        return row["threads_verdict"]
    spread = ""
    if row.get("threads_low") is not None:
        spread = f", per iteration {row['threads_low']:.2f}-{row['threads_high']:.2f}x"
    return (
        f"at {row['network']} it chose {counted(row['threads_chosen'], 'thread')} and "
        f"{row['threads_best']} were {row['threads_ratio'] - 1:.0%} faster, past the noise "
        f"({row['threads_ratio']:.2f}x{spread})"
    )


def thread_choice_sentence(criterion: list[dict], pairs: int | None = None) -> str:
    """How often 05's allocator chose the faster thread count, counted past the noise, with
    every wrong choice in full and the checks too short to judge ("" when no thread check
    was recorded)."""
    found = thread_choices(criterion, pairs)
    total = sum(len(rows) for rows in found.values())
    if not total:
        return ""
    names = {k: ", ".join(r.get("network", "?") for r in rows) for k, rows in found.items()}
    parts = [f"the faster count past the noise on {len(found['right'])} of {total}"]
    parts += [
        f"within the noise of the other count on {len(found['tie'])} ({names['tie']})"
    ] * bool(found["tie"])
    wrong = "; ".join(_wrong_choice(row) for row in found["wrong"])
    parts += [f"wrong past the noise on {len(found['wrong'])}: {wrong}"] * bool(found["wrong"])
    parts += [
        f"no verdict on {len(found['none'])} ({names['none']}: fewer than {MIN_PAIRS} paired "
        "iterations)"
    ] * bool(found["none"])
    return "its thread choice was " + ", ".join(parts)


def threads(records: Records) -> Advice:
    """One answer per width range for a whole iteration, from 03's width sweep and 05's
    thread checks read together, naming any width where they disagree; each notebook's own
    reading in the figure."""
    question = "how many CPU threads"
    hybrid, allocator = _newest(records, "bench.hybrid"), _newest(records, "bench.allocator")
    if hybrid is None and allocator is None:
        return {**_missing(question, "03", "bench.hybrid"),
                "advice": "not measured yet: run notebooks 03 and 05"}  # fmt: skip
    effects, figure, sources, missing = [], [], [], []
    if hybrid is not None:
        sources.append(hybrid.kind)
        rows = [r for r in hybrid.data["width_sweep"] if "phase_seconds" in r]
        if len({r["threads"] for r in rows}) > 1:
            effects = thread_effects(rows)
            figure += [f"03, {ROLES[role]}: " + "; ".join(rule_parts(effects, role))
                       for role in ("rollout", "update")]  # fmt: skip
        else:
            missing.append("03's width sweep ran at one thread count, so it says nothing here")
    else:
        missing.append(_part_missing(records, "bench.hybrid", "03", "width sweep"))
    checks: list[dict] = []
    if allocator is not None:
        sources.append(allocator.kind)
        pairs = allocator.data.get("iterations")
        checks = [dict(row, threads_pairs=row.get("threads_pairs", pairs))
                  for row in allocator.data["criterion"]]  # fmt: skip
        choices = thread_choice_sentence(checks)
        figure += [f"05, per whole iteration: {choices}"] if choices else []
    else:
        missing.append(_part_missing(records, "bench.allocator", "05", "thread checks"))
    ranges = one_answer(effects, checks)
    advice = "by width, a whole iteration: " + one_answer_sentence(ranges)
    if missing:
        advice += " (" + "; ".join(missing) + ")"
    return {"question": question, "advice": advice, "figure": "; ".join(figure),
            "source": ", ".join(sources)}  # fmt: skip


BUFFER_NAMES = {"tensor": "tensor", "transition": "pattern A", "trajectory": "pattern B"}
"""How the advice names each replay buffer design (notebook 04's names)."""
TENSOR_BUFFER = "the tensor buffer (preallocated, one gather per batch)"


def step_ratio(base: dict, other: dict) -> Spread:
    """``other``'s env steps/s over ``base``'s (two ``bench.ddpg`` records' fields whose seeds
    ran side by side), spread by their seeds: the column notebook 04 reads, whatever the
    number of whole episodes a quick run timed."""
    value = other["env_steps_per_s"] / base["env_steps_per_s"]
    runs = [[run["env_steps_per_s"] for run in r["runs"]] for r in (other, base)]
    return Spread.of_pairs(*runs, value=value, per="seed")


def buffer(records: Records) -> Advice:
    question = "which replay buffer"
    study = _newest(records, "bench.buffers")
    if study is None:
        return _missing(question, "04", "bench.buffers")
    found = fastest_sampler(study.data["rows"])
    names = {design: BUFFER_NAMES.get(design, design) for design in found["rates"]}
    figure = f"sampling at {found['capacity']:,} transitions: " + ", ".join(
        f"{names[d]} {rate:,.0f}/s" for d, rate in found["rates"].items()
    )
    winner = found["winner"]
    if found["runner_up"] is not None:
        figure += f"; the fastest's time per batch is {found['spread']} the runner-up's"
    if winner is None:
        advice = (
            f"no clear winner: {names[found['best']]} and {names.get(found['runner_up'], '-')} "
            "sample within each other's noise here"
        )
        return {"question": question, "advice": advice, "figure": figure, "source": study.kind}
    advice = TENSOR_BUFFER if winner == "tensor" else names[winner]
    runs = {r.data["buffer"]: r for r in records.get("bench.ddpg", []) if busy_line(r) is None}
    if winner != "transition" and {winner, "transition"} <= set(runs):
        unpaired = unpaired_reason(runs["transition"].data, runs[winner].data)
        if unpaired is not None:
            figure += f"; DDPG runs not compared: {unpaired}"
        else:
            spread, per = step_ratio(runs["transition"].data, runs[winner].data), "per step"
            in_ddpg = _side(
                spread,
                "and it makes DDPG faster",
                "though DDPG ran slower with it",
                "though in DDPG its speed shows no clear effect",
                f"though its speed in DDPG has no verdict ({spread.value:.2f}x pattern A's, "
                f"{spread.how}: "
                + (spread.too_few_words() if spread.too_few else "no spread measured")
                + ")",
            )
            advice += f", {in_ddpg}"
            figure += f"; DDPG with it: {spread} pattern A's speed, {per}"
    return {"question": question, "advice": advice, "figure": figure, "source": study.kind}


def batch_sizes(records: Records) -> Advice:
    record = _newest(records, "bench.crossover", ("the forward-pass grid",))
    question = "which batch sizes (per forward call)"
    if record is None:
        return _missing(question, "00", "bench.crossover")
    found = batches_that_pay(record.data["grid"])
    batches = {b["batch_size"] for b in found}
    if len(batches) == 1:
        advice = f"on the CPU, batch at least {batches.pop()} at every width measured"
    else:
        widths: dict[int, list[str]] = {}
        for b in found:
            widths.setdefault(b["batch_size"], []).append(str(b["width"]))
        advice = "on the CPU, batch at least " + ", ".join(
            f"{batch} at {listed(ws, 'width')}" for batch, ws in widths.items()
        )
    figure = (
        f"the smallest batch within {BATCH_WITHIN:.0%} of the cheapest cost per sample "
        "measured (past it, batching buys little): "
        + ", ".join(
            f"width {b['width']}: {format_seconds(b['seconds_per_sample'])} per sample"
            for b in found
        )
    )
    return {"question": question, "advice": advice, "figure": figure, "source": record.kind}


def allocator_worth(records: Records) -> Advice:
    record = _newest(records, "bench.allocator")
    question = "is the allocator worth its measuring time"
    if record is None:
        return _missing(question, "05", "bench.allocator")
    curriculum = record.data["curriculum"]
    summary = curriculum | paired_sums(record.data["rows"], curriculum["stages"])
    found = worth(summary)
    best, spread, total = found["best"], found["spread"], found["allocator_s"]
    gap = abs(found["contenders"][best] - total)
    figure = (
        f"over the curriculum the allocator took {format_seconds(total)}, "
        f"{format_seconds(found['measuring_s'])} of it measuring; without it: "
        + ", ".join(f"{name} {format_seconds(s)}" for name, s in found["contenders"].items())
        + f"; the best fixed choice took {spread} the allocator's time"
    )
    choices = thread_choice_sentence(record.data["criterion"], record.data.get("iterations"))
    figure += f"; {choices}" if choices else ""
    if found["saved"]:
        advice = (
            f"yes: with its measuring it beat the best fixed choice ({best}) by "
            f"{format_seconds(gap)}, past the noise"
        )
    elif found["saved"] is False and _same_choices(summary, best):
        advice = (
            f"no: its choices ran the best fixed choice's own configuration ({best}), so its "
            f"measuring ({format_seconds(found['measuring_s'])}) never repays"
        )
    elif found["saved"] is False:
        advice = (
            f"not over runs this short: the best fixed choice ({best}) beat it by "
            f"{format_seconds(gap)}, its measuring included; over thousands "
            "of iterations per stage the measuring is a fixed cost, and what decides is "
            "whether its choices were right"
        )
    else:
        advice = (
            f"no clear effect: the allocator and the best fixed choice ({best}) took "
            "times within the noise of their paired iterations"
        )
    return {"question": question, "advice": advice, "figure": figure, "source": record.kind}


def _same_choices(summary: dict[str, Any], best: str) -> bool:
    """Whether the allocator's timed iterations are the best contender's own: it chose that
    configuration at every stage, so no run length repays its measuring."""
    mine = summary.get("iteration_sums", {}).get("allocator", [])
    return bool(mine) and list(contenders(summary)[best][1]) == list(mine)


QUESTIONS: tuple[Callable[[Records], Advice], ...] = (
    where_phases_run,
    threads,
    buffer,
    batch_sizes,
    allocator_worth,
)
"""The recommendations, in the order notebook 10 shows them."""


def advice(records: Records) -> list[Advice]:
    """Every recommendation for the machine whose ``records`` these are; a question whose
    record came from a busy machine gets no advice, only the reason (nothing is drawn from it)."""
    _, busy = quiet_records(records)
    items = [question(records) for question in QUESTIONS]  # each reads quiet studies only
    for item in items:
        if item["source"] in busy and item["advice"].startswith(NOT_MEASURED):
            item |= {"advice": busy[item["source"]], "figure": ""}
    return items


def markdown(items: list[Advice], hardware: str = "this machine") -> str:
    """The recommendations as Markdown: a heading line, then one bullet per question."""
    lines = [f"**What to do on {hardware}**, from its own records:", ""]
    for item in items:
        figure = f" *Measured*: {item['figure']}." if item["figure"] else ""
        question = item["question"][0].upper() + item["question"][1:]
        lines.append(f"- **{question}**: {item['advice']}.{figure}")
    return "\n".join(lines)
