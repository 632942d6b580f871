"""CPU threads as a resource: one thread against all cores, for the actor and for the learner.

PyTorch splits a large matrix product over its intra-op threads; a small one (the
actor's forward pass on a handful of observations) gains nothing and pays for waking
the threads. Where that line falls depends on the width, the batch and the machine, so
it is measured: the width sweep (:func:`~hetero_tutorial.studies.sweeps.width_sweep`)
runs every configuration at one thread and at all cores, interleaved iteration by
iteration, and keeps each phase's seconds per iteration. :func:`thread_effects` pairs
those iterations (one thread over all cores, per phase and width) and
:func:`thread_rule` turns them into the rule this machine gives, naming an effect only
where the whole spread of the paired ratios lies on one side of 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import NOT_JUDGED, derived, judged, withheld
from hetero_tutorial.core.timing import Spread

ROLES = {
    "rollout": "the actor (rollout)",
    "update": "the learner (update)",
    "iteration": "a whole iteration",
}
"""The parts whose thread count is judged, and how a sentence names them."""

FASTER, SLOWER, UNCLEAR = "all cores faster", "one thread faster", "no clear effect"


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
    ``verdict``: :data:`FASTER`, :data:`SLOWER` or :data:`UNCLEAR` (the spread straddles 1,
    or one timed iteration gave no spread); :data:`NOT_JUDGED` where the sweep ran on a
    busy machine (:func:`~hetero_tutorial.core.machine_load.withheld`).
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
                    "verdict": NOT_JUDGED if busy else _verdict(side),
                }
            )
    return derived(rows, effects)


def _verdict(side: bool | None) -> str:
    """A row's verdict from the side its spread lies on (None: straddles 1, or unmeasured)."""
    return UNCLEAR if side is None else FASTER if side else SLOWER


def _spread_text(effect: dict[str, Any]) -> str:
    if effect["low"] is None:
        return f"{effect['ratio']:.2f}x (one iteration: no spread)"
    return f"{effect['ratio']:.2f}x ({effect['low']:.2f}-{effect['high']:.2f}x)"


def _widths(widths: Sequence[int]) -> str:
    return ", ".join(str(w) for w in widths)


def rule_parts(effects: Sequence[dict[str, Any]], role: str) -> tuple[str, str]:
    """``(the rule for role, the figures behind it)``: see :func:`role_rule`."""
    mine = [e for e in effects if e["role"] == role]
    if not mine:
        return f"{ROLES[role].capitalize()}: not measured", ""
    n, few = mine[0]["threads"], mine[0]["few_threads"]
    one = f"{few} thread{'s' * (few > 1)}"
    faster, slower, unclear = (
        [e["width"] for e in mine if e["verdict"] == side] for side in (FASTER, SLOWER, UNCLEAR)
    )
    widths = [e["width"] for e in mine]
    # "from width W" only for a contiguous tail: W and every wider width ran faster on all cores
    start = next((w for w in widths if all(x in faster for x in widths if x >= w)), None)
    figures = "; ".join(f"{e['width']}: {_spread_text(e)}" for e in mine)
    name = ROLES[role].capitalize()
    if not faster and not slower:
        text = (
            f"{name}: {one}. All {n} cores showed no clear effect at any width measured "
            f"(within the noise of the paired iterations), so {one} does as well and "
            "leaves the other cores free"
        )
    else:
        if start is not None:
            below = [w for w in widths if w < start]
            head = f"{name}: all {n} cores from width {start}"
            head += f", {one} below ({_widths(below)})" if below else " (every width measured)"
        elif faster:
            head = f"{name}: all {n} cores at width {_widths(faster)}, {one} at the others"
        else:
            head = f"{name}: {one}"
        seen = [f"faster at width {_widths(faster)}"] * bool(faster)
        seen += [f"slower at width {_widths(slower)}"] * bool(slower)
        seen += [f"no clear effect at width {_widths(unclear)}"] * bool(unclear)
        text = f"{head}. All {n} cores were " + "; ".join(seen)
    how = mine[0]["how"] if mine[0]["low"] is not None else "one iteration each"
    return (
        text,
        f"time at {one} over all cores' by width (above 1: all cores faster; {how}): {figures}",
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
