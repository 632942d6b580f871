"""Notebook 08's race against rejax, read: the recorded env steps/s at each point, our
ratios to rejax as the race's tables give them, and rejax's step against our products (only
on the same kind of machine)."""

from __future__ import annotations

from typing import Any

from hetero_tutorial.core import results
from hetero_tutorial.core.machine import fingerprint
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.timing import format_seconds
from hetero_tutorial.notebook import peer_races
from hetero_tutorial.speed.graphs import minibatches_per_call
from hetero_tutorial.studies.compile_rows import Breakdown, RunRow


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


def rejax_lines(record: Any, ppo: list[RunRow], here: dict[str, Any] | None = None) -> list[str]:
    """The recorded race at 8 and 1,024 envs: medians of env steps/s, and our ratios to
    rejax as the race's tables give them (:func:`_vs_rejax`): ours eager, ours compiled
    where the record raced it (else what this run's compiled/eager ratio would make of
    ours, labelled as the estimate it is, and as one from two machines where the record
    is not from this kind of machine, ``here``), and each side's compile seconds."""
    stats = record.data["summary"]["stats"]
    same = results.same_machine(
        here if here is not None else fingerprint(), record.provenance["fingerprint"]
    )
    live = {(r.size, r.piece): r for r in ppo if r.mode == "compile"}
    date = record.provenance["date"][:10]
    lines = [f"Recorded on {peer_races.recorded_on(record)}, {date}, one thread:"]
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
            estimate = ours_sps * found.speedup
            line += (
                f"; with this run's compiled/eager ratio ({found.speedup:.2f}x), ours would "
                f"reach about {estimate:,.0f} ({estimate / rejax_sps:.2f}x rejax): an estimate "
                f"from two measurements{'' if same else ' on two machines'}, not a race"
            )
        lines.append(line + ".")
    return lines


@judged()
def rejax_step_line(record: Any, found: Breakdown, here: dict[str, Any] | None = None) -> str:
    """rejax's seconds per gradient step at the race's largest point (its iteration's seconds
    over its gradient steps: an upper bound, its rollout's share included) against our
    products alone (a recorded figure against a live one: the two runs' drift is in the
    ratio), and how far the rest of our step would have to shrink to match it.

    Only where the record comes from this kind of machine (``here``: this machine's
    fingerprint, by default read now; :func:`results.same_machine`): another CPU's step
    says nothing of what ours could reach, so then the line says so and compares nothing."""
    machine = record.provenance["fingerprint"]
    if not results.same_machine(here if here is not None else fingerprint(), machine):
        return (
            f"rejax's race was recorded on {record.hardware}, another machine: its step is "
            "not set against this machine's products (benchmarks/device_ppo_peers.py races "
            "the two here)."
        )
    setting = record.data["setting"]
    if setting["minibatch_size"] != found.size:
        return (
            f"The race's minibatch ({setting['minibatch_size']}) is not the breakdown's "
            f"({found.size}): no step to set against it."
        )
    num_envs = max(int(point) for point in record.data["points"])
    rejax = record.data["summary"]["stats"].get(f"{num_envs} envs", {}).get("rejax")
    if rejax is None:
        return f"The race recorded no rejax run at {num_envs:,} envs: no step to set against it."
    batch = num_envs * setting["num_steps"]
    gradient_steps = setting["update_epochs"] * (batch // setting["minibatch_size"])
    per_step = batch / rejax["steps_per_s"]["median"] / gradient_steps
    products, rest = found.matmul_s, max(0.0, found.step_s - found.matmul_s)
    text = (
        f"rejax at {num_envs:,} envs (recorded on this kind of machine): at most "
        f"{format_seconds(per_step)} per gradient step, its share of the rollout included, "
        f"{per_step / products:.2f}x our products alone. "
    )
    if per_step <= products:
        return text + "Its products ran faster than ours do here: no overhead removed closes that."
    budget = per_step - products
    if rest <= budget:
        return (
            text
            + (
                f"The rest of our step ({format_seconds(rest)}) fits in the "
                f"{format_seconds(budget)} that leaves: the gap is outside the update step."
            )
            + _alone_against_loop(record, found, num_envs, gradient_steps, batch)
        )
    return (
        text
        + (
            f"To match it, the rest of our step would have to fit in {format_seconds(budget)}; "
            f"here it takes {format_seconds(rest)}, {rest / budget:.1f}x that."
        )
        + _alone_against_loop(record, found, num_envs, gradient_steps, batch)
    )


def _alone_against_loop(
    record: Any, found: Breakdown, num_envs: int, gradient_steps: int, batch: int
) -> str:
    """Where the step timed alone (one minibatch to a compiled call) outlasts the race's whole
    step of ours in its loop (rollout included, its minibatch steps grouped
    :func:`~hetero_tutorial.speed.graphs.minibatches_per_call` to a call), the two ways of
    timing differ: the gap above overstates what a run's step pays ("" where it does not)."""
    ours = record.data["summary"]["stats"].get(f"{num_envs} envs", {}).get("ours-compiled")
    if ours is None:
        return ""
    recorded = batch / ours["steps_per_s"]["median"] / gradient_steps
    if found.step_s <= recorded:
        return ""
    pair = peer_races.pair(record, f"{num_envs} envs", "ours-compiled", "rejax", "steps_per_s")
    ratio = f"; the race itself has ours compiled at {peer_races.round_ratio(pair):.2f}x rejax"
    return (
        f" But this step timed alone ({format_seconds(found.step_s)}, one minibatch to a "
        f"compiled call) outlasts the race's whole step of ours in its loop, rollout included "
        f"({format_seconds(recorded)}, {minibatches_per_call(gradient_steps)} minibatch steps "
        f"to a call): the gap overstates what a run's step pays{ratio if pair else ''}."
    )
