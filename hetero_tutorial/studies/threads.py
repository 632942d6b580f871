"""CPU threads as a resource: one thread against all cores, for the actor and for the learner.

PyTorch splits a large matrix product over its intra-op threads, and waking them costs a
fixed time, so a small one (the actor's forward pass on a handful of observations) may
gain less than it pays. Where that line falls depends on the width, the batch and the
machine, so it is measured: the width sweep (:func:`~hetero_tutorial.studies.sweeps.width_sweep`)
runs every configuration at one thread and at all cores, interleaved iteration by
iteration, and keeps each phase's seconds per iteration. :func:`thread_effects` pairs
those iterations (one thread over all cores, per phase and width) and
:func:`thread_rule` turns them into the rule this machine gives, naming an effect only
where the whole spread of the paired ratios lies on one side of 1, and only from
:data:`MIN_PAIRS` paired iterations on (fewer give *no verdict*).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import NOT_JUDGED, derived, judged, withheld
from hetero_tutorial.core.plural import counted, listed
from hetero_tutorial.core.timing import MIN_REPEATS, Spread

ROLES = {
    "rollout": "the actor (rollout)",
    "update": "the learner (update)",
    "iteration": "a whole iteration",
}
"""The parts whose thread count is judged, and how a sentence names them."""

FASTER, SLOWER, UNCLEAR = "all cores faster", "one thread faster", "no clear effect"
NO_VERDICT = "no verdict"
"""Too few paired iterations to name an effect (see :data:`MIN_PAIRS`)."""

MIN_PAIRS = MIN_REPEATS
"""Paired iterations a thread verdict needs: the series' one minimum
(:data:`~hetero_tutorial.core.timing.MIN_REPEATS`)."""


def chance_all_one_side(pairs: int) -> float:
    """How often noise alone (no effect) puts all ``pairs`` paired ratios on one side of 1."""
    return min(1.0, 2 * 0.5**pairs)


def too_few(pairs: int) -> str:
    """Why ``pairs`` paired iterations give no verdict, with the odds that say so."""
    if pairs < 2:
        return f"{pairs} paired iteration: no spread, and a verdict needs {MIN_PAIRS}"
    return (
        f"{pairs} paired iterations, and a verdict needs {MIN_PAIRS}: noise alone puts all "
        f"{pairs} on one side {chance_all_one_side(pairs):.0%} of the time"
    )


def _seconds(row: dict[str, Any], role: str) -> list[float]:
    if role == "iteration":
        return list(row["iteration_seconds"])
    return list(row["phase_seconds"].get(role, []))


def thread_effects(rows: Sequence[dict[str, Any]], placement: str = "all-cpu") -> list[dict]:
    """Per width and role: one thread's seconds over the most threads', paired by iteration
    (``ratio``: the median of the paired ratios; ``low``/``high``: their spread).

    ``rows``: a width sweep over at least two thread counts; ``placement``: whose rows
    (the CPU's own question by default; a row measured once for several placements, as
    every preset is without an accelerator, counts for each). ``ratio`` above 1: all
    cores are faster.
    ``verdict``: :data:`FASTER`, :data:`SLOWER` or :data:`UNCLEAR` (the spread straddles 1);
    :data:`NO_VERDICT` with fewer than :data:`MIN_PAIRS` paired iterations (``pairs``);
    :data:`NOT_JUDGED` where the sweep ran on a busy machine
    (:func:`~hetero_tutorial.core.machine_load.withheld`).
    """
    if not rows:
        raise UsageError("no sweep rows to read thread effects from")
    mine = [r for r in rows if placement in r.get("stands_for", [r["placement"]])]
    busy = withheld(rows) is not None
    counts = sorted({r["threads"] for r in mine})
    if len(counts) < 2:
        raise UsageError(f"the sweep ran {placement} at {counts} thread(s) only: sweep 1 and more")
    effects = []
    for width in sorted({r["width"] for r in mine}):
        at = {r["threads"]: r for r in mine if r["width"] == width}
        one, many = at[counts[0]], at[counts[-1]]
        for role in ROLES:
            a, b = _seconds(one, role), _seconds(many, role)
            if not a or not b:
                continue
            # the headline is the median of the paired ratios, so it lies inside its spread
            ratios = [x / y for x, y in zip(a, b, strict=False)]
            spread = Spread.of_ratios(ratios, per="iteration")
            side = spread.beyond(1.0)  # an effect only where the whole spread lies past 1
            effects.append(
                {
                    "width": width,
                    "role": role,
                    "few_threads": counts[0],
                    "threads": counts[-1],
                    "one_thread_s": float(np.median(a)),
                    "all_cores_s": float(np.median(b)),
                    "ratio": spread.value,
                    "low": spread.low,
                    "high": spread.high,
                    "how": spread.how,
                    "pairs": len(ratios),
                    "verdict": NOT_JUDGED if busy else _verdict(side, len(ratios)),
                }
            )
    return derived(rows, effects)


def _verdict(side: bool | None, pairs: int) -> str:
    """A row's verdict from the side its spread lies on (None: straddles 1), given enough
    paired iterations to name one."""
    if pairs < MIN_PAIRS:
        return NO_VERDICT
    return UNCLEAR if side is None else FASTER if side else SLOWER


def _spread_text(effect: dict[str, Any]) -> str:
    if effect["low"] is None:
        return f"{effect['ratio']:.2f}x (one iteration: no spread)"
    return f"{effect['ratio']:.2f}x ({effect['low']:.2f}-{effect['high']:.2f}x)"


def _other(cores: int) -> str:
    """ "the other core" or "the other cores": what one thread leaves to others."""
    return "the other core" if cores == 2 else "the other cores"


def _all(cores: int) -> str:
    """ "Both cores" or "All 8 cores": every core the sweep's all-cores runs used."""
    return "Both cores" if cores == 2 else f"All {cores} cores"


def rule_parts(effects: Sequence[dict[str, Any]], role: str, seen: bool = True) -> tuple[str, str]:
    """``(the rule for role, the figures behind it)``: see :func:`role_rule`. ``seen``: the
    rule goes on to say which widths ran faster, slower or level (beside a table that shows
    each width's verdict, False leaves that out)."""
    mine = [e for e in effects if e["role"] == role]
    if not mine:
        return f"{ROLES[role].capitalize()}: not measured", ""
    n, few = mine[0]["threads"], mine[0]["few_threads"]
    one = f"{few} thread{'s' * (few > 1)}"
    faster, slower, unclear, unjudged = (
        [e["width"] for e in mine if e["verdict"] == side]
        for side in (FASTER, SLOWER, UNCLEAR, NO_VERDICT)
    )
    widths = [e["width"] for e in mine]
    # "from width W" only for a contiguous tail: W and every wider width ran faster on all cores
    start = next((w for w in widths if all(x in faster for x in widths if x >= w)), None)
    figures = "; ".join(f"{e['width']}: {_spread_text(e)}" for e in mine)
    name = ROLES[role].capitalize()
    pairs = min(e.get("pairs", MIN_PAIRS) for e in mine)
    if not (faster or slower or unclear or unjudged):
        text = f"{name}: {NOT_JUDGED} at every width"
    elif unjudged and not (faster or slower or unclear):
        text = f"{name}: no verdict at any width ({too_few(pairs)})"
    elif not faster and not slower:
        text = (
            f"{name}: either count ({one} leaves {_other(n)} free). {_all(n)} showed no "
            f"clear effect at {listed(unclear, 'width')} (the paired iterations fell on both "
            "sides), so neither count is shown faster"
        )
        text += f"; no verdict at {listed(unjudged, 'width')}" if unjudged else ""
    else:
        if start is not None:
            below = [w for w in widths if w < start and w not in unjudged]
            head = f"{name}: {_all(n).lower()} from width {start}"
            if below and all(w in unclear for w in below):  # neither count shown faster there
                free = f"({one} leaves {_other(n)} free)"
                head += f", either count below, at {listed(below, 'width')} {free}"
            elif below:
                level = [w for w in below if w in unclear]
                head += f", {one} at {listed([w for w in below if w not in level], 'width')}"
                head += f", either count at {listed(level, 'width')}" if level else ""
            head += " (every width measured)" if start == widths[0] else ""
        else:  # each width by its own verdict: a width within the noise decides no count
            parts = [f"{_all(n).lower()} at {listed(faster, 'width')}"] * bool(faster)
            parts += [f"{one} at {listed(slower, 'width')}"] * bool(slower)
            parts += [f"either count at {listed(unclear, 'width')}"] * bool(unclear)
            head = f"{name}: {', '.join(parts)}"
        widths_seen = [f"faster at {listed(faster, 'width')}"] * bool(faster)
        widths_seen += [f"slower at {listed(slower, 'width')}"] * bool(slower)
        widths_seen += [f"no clear effect at {listed(unclear, 'width')}"] * bool(unclear)
        text = f"{head}. {_all(n)} were " + "; ".join(widths_seen) if seen else head
        text += f"; no verdict at {listed(unjudged, 'width')}" if unjudged and seen else ""
    how = mine[0]["how"] if mine[0]["low"] is not None else "one iteration each"
    return (
        text,
        f"time at {one} over all cores' by width (above 1: all cores faster; {how}, "
        f"{pairs} pair{'s' * (pairs != 1)}): {figures}",
    )


@judged()
def role_rule(effects: Sequence[dict[str, Any]], role: str) -> str:
    """One sentence: how many threads ``role`` should get on this machine, by width, and the
    paired ratios behind it; an effect is named only where their spread lies past 1."""
    text, figures = rule_parts(effects, role)
    return f"{text}. {figures[0].upper()}{figures[1:]}." if figures else f"{text}."


@judged()
def thread_rule(effects: Sequence[dict[str, Any]]) -> list[str]:
    """The rule this machine gives for the actor and the learner (and a whole iteration)."""
    return [role_rule(effects, role) for role in ROLES]


EITHER = "either"
"""A width where the faster count lay within the noise: neither count is shown faster."""
EITHER_COUNT = "either count, no clear effect"
"""The answer of a width where no count was faster past the noise."""


UNDECIDED = (NO_VERDICT, NOT_JUDGED)
"""The answers that name no thread count: too few pairs, or a busy machine."""


def _from_sweep(effect: dict[str, Any]) -> str:
    """03's whole-iteration answer at one width: a thread count, :data:`EITHER`,
    :data:`NO_VERDICT` or :data:`NOT_JUDGED`."""
    verdict = effect["verdict"]
    if verdict == FASTER:
        return counted(effect["threads"], "thread")
    if verdict == SLOWER:
        return counted(effect["few_threads"], "thread")
    return EITHER if verdict == UNCLEAR else NOT_JUDGED if verdict == NOT_JUDGED else NO_VERDICT


def _from_check(row: dict[str, Any]) -> str:
    """05's answer at one network, from its thread check's verdict (the words
    :func:`~hetero_tutorial.allocator.criterion.thread_check` writes): the count faster past the
    noise, :data:`EITHER`, :data:`NOT_JUDGED` (busy), or :data:`NO_VERDICT` (fewer pairs
    than :data:`MIN_PAIRS`, or no check)."""
    verdict = row.get("threads_verdict") or ""
    if verdict == NOT_JUDGED:
        return NOT_JUDGED
    if verdict.startswith(NO_VERDICT) or (row.get("threads_pairs") or MIN_PAIRS) < MIN_PAIRS:
        return NO_VERDICT
    if verdict.startswith("right") and "past the noise" in verdict:
        return counted(row["threads_chosen"], "thread")
    if verdict.startswith("wrong"):
        return counted(row["threads_best"], "thread")
    return EITHER if verdict.startswith(("right", "as good as", UNCLEAR)) else NO_VERDICT


def one_answer(
    effects: Sequence[dict[str, Any]], checks: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """03's width sweep (a whole iteration, per width) and 05's thread checks (per MLP
    network, ``mlp-<width>``) read as one answer per width range.

    Returns ranges of neighbouring widths with one answer each: ``widths``, ``answer`` (a
    thread count; :data:`EITHER_COUNT` where every verdict was within the noise; None where no
    verdict was reached), ``sources`` (per notebook, ``{its answer: [widths]}`` within the
    range; :data:`EITHER` for within the noise) and ``disagree`` (True where the two
    notebooks named different counts at one width, or one notebook's count sits between
    the other's opposite count on both sides; "either count" opposes no count)."""
    by_width: dict[int, dict[str, str | None]] = {}
    for effect in effects:
        if effect["role"] == "iteration":
            by_width.setdefault(effect["width"], {})["03"] = _from_sweep(effect)
    for row in checks:
        network = str(row.get("network", ""))
        if network.startswith("mlp-") and network[4:].isdigit():
            by_width.setdefault(int(network[4:]), {})["05"] = _from_check(row)
    points = []
    for width in sorted(by_width):
        said = by_width[width]
        definite = {s for s in said.values() if s not in (EITHER, *UNDECIDED)}
        if len(definite) > 1:
            answer, disagree = None, True
        elif definite:
            answer, disagree = definite.pop(), False
        else:
            answer = EITHER_COUNT if EITHER in said.values() else None
            disagree = False
        points.append({"widths": [width], "answer": answer, "sources": said,
                       "disagree": disagree})  # fmt: skip
    for before, point, after in zip(points, points[1:], points[2:], strict=False):
        mine = set(point["sources"]) - set(before["sources"]) - set(after["sources"])
        flanked = before["answer"] == after["answer"] not in (None, EITHER_COUNT, point["answer"])
        if mine and flanked and point["answer"] is not None and not before["disagree"]:
            point["disagree"] = True
    ranges: list[dict[str, Any]] = []
    for point in points:
        last = ranges[-1] if ranges else None
        joins = last is not None and not (last["disagree"] or point["disagree"])
        if joins and last["answer"] == point["answer"]:
            last["widths"] += point["widths"]
        else:
            last = {**point, "widths": list(point["widths"]), "sources": {}}
            ranges.append(last)
        for notebook, said in point["sources"].items():
            found = last["sources"].setdefault(notebook, {})
            found.setdefault(said, []).extend(point["widths"])
    return ranges


def _span(widths: Sequence[int]) -> str:
    return str(widths[0]) if len(widths) == 1 else f"{widths[0]}-{widths[-1]}"


def one_answer_sentence(ranges: Sequence[dict[str, Any]]) -> str:
    """:func:`one_answer` in words: a recommendation per width range, each with the
    notebooks behind it, then every disagreement by name."""
    if not ranges:
        return "no width measured by either notebook"
    parts, disputes = [], []
    for found in ranges:
        behind = "; ".join(
            f"{notebook}: "
            + ", ".join(
                f"{'within the noise' if said == EITHER else said} at {listed(widths)}"
                for said, widths in answers.items()
            )
            for notebook, answers in sorted(found["sources"].items())
        )
        if found["disagree"]:
            parts.append(f"width {_span(found['widths'])}: the notebooks disagree ({behind})")
            disputes.append(_span(found["widths"]))
        else:
            busy = all(w == [NOT_JUDGED] for w in map(list, found["sources"].values()))
            answer = found["answer"] or (NOT_JUDGED if busy else NO_VERDICT)
            parts.append(f"width {_span(found['widths'])}: {answer} ({behind})")
    text = "; ".join(parts)
    if disputes:
        text += (
            f". A disagreement remains at width {', '.join(disputes)}: no answer there until "
            "a rerun of both agrees"
        )
    return text
