"""The claims ledger: each claim of the article against what was measured, with a verdict.

:data:`CLAIMS` restates each checkable claim of the article (see ``ledger/article.py``),
in its order, as data: what it says, its figure, the measurement that answers it (a
record kind), and an explicit rule that turns that measurement into a verdict:

* ``held`` / ``did not hold``: the rule's test, given only when the whole spread of
  the measurement's repeats (seeds, interleaved turns, IQRs, standard errors) lies
  on one side of the rule's threshold (identical plans differ by 3-15% here);
* ``no clear effect``: the spread straddles the threshold ("within the measured
  noise, +-x"), or the record holds one repeat, so no spread, and no claim;
* ``not measurable here``: the measurement exists but cannot answer the claim on
  that machine (most claims compare a CPU with an accelerator);
* ``not measured yet``: the record the rule needs is absent. A verdict is never
  produced without the measurement it names (:func:`judge` checks before any
  rule runs).

Rules are deliberately simple and stated in words next to each one (``Claim.rule``),
so a learner can disagree with a threshold and change it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.results import Record
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.studies.sweeps import speedups


class Status(str, enum.Enum):
    HELD = "held"
    NOT_HELD = "did not hold"
    NO_CLEAR_EFFECT = "no clear effect"
    NOT_MEASURABLE = "not measurable here"
    MISSING = "not measured yet"


@dataclass(frozen=True)
class Verdict:
    """A claim judged on one machine's measurements."""

    status: Status
    measured: str
    """The measured figure, in words (or why there is none)."""
    ratio: float | None = None
    """The measured counterpart of ``Claim.article_ratio``, when there is one."""


Records = dict[str, list[Record]]
"""One machine's records, by kind (several for kinds saved once per placement or buffer)."""


@dataclass(frozen=True)
class Claim:
    """One checkable claim of the article and the rule that judges it."""

    id: str
    statement: str
    article: str
    """The article's figure, as the article gives it."""
    article_ratio: float | None
    ratio_meaning: str
    """What the ratio measures, so article and measurement compare like with like."""
    needs: tuple[str, ...]
    """Record kinds the rule reads; without them the verdict is ``not measured yet``."""
    notebook: str
    rule: str
    """The rule, in words."""
    judge: Callable[[Records], Verdict]


# ---------------------------------------------------------------------------------------------
# Helpers the rules share
# ---------------------------------------------------------------------------------------------


def _accelerated(record: Record) -> bool:
    """Whether the record's machine had an accelerator."""
    return bool(record.provenance["fingerprint"].get("accelerator"))


def _no_accelerator() -> Verdict:
    return Verdict(Status.NOT_MEASURABLE, "no accelerator: nothing to compare the CPU with")


class _NoMatchingRecord(Exception):
    """A rule's record kind is there, but not the record it needs (e.g. another placement's)."""


def _newest(records: Records, kind: str, **match: Any) -> Record:
    """The newest record of ``kind`` whose fields equal ``match``."""
    found = [r for r in records.get(kind, []) if all(r.data.get(k) == v for k, v in match.items())]
    if not found:
        wanted = ", ".join(f"{k} {v}" for k, v in match.items())
        raise _NoMatchingRecord(f"needs a {kind} record with {wanted}")
    return max(found, key=lambda r: r.provenance["date"])


def _held(condition: bool) -> Status:
    return Status.HELD if condition else Status.NOT_HELD


def _against(spread: Spread, threshold: float, above: bool = True) -> Status:
    """Held (did not hold) only when the whole spread lies on the claim's (other) side of
    ``threshold``; no clear effect when it straddles it or there is no spread."""
    side = spread.side(threshold, above)
    return Status.NO_CLEAR_EFFECT if side is None else _held(side)


def _combined(statuses: Iterable[Status]) -> Status:
    """Did not hold if any part did not; held if every part held; else no clear effect."""
    statuses = set(statuses)
    if Status.NOT_HELD in statuses:
        return Status.NOT_HELD
    return Status.HELD if statuses == {Status.HELD} else Status.NO_CLEAR_EFFECT


def _note(status: Status, spread: Spread, unit: str = "{:.2f}x") -> str:
    """The noise a verdict could not see past (or its absence), where the effect is unclear."""
    return spread.noise(unit) if status is Status.NO_CLEAR_EFFECT else ""


def _ratio_verdict(
    spread: Spread, threshold: float, text: str, above: bool = True, after: str = ""
) -> Verdict:
    """A ratio rule's verdict (see :func:`_against`): ``text`` with ``{}`` where the ratio and
    its spread go, then the noise if unclear, then ``after``."""
    status = _against(spread, threshold, above)
    return Verdict(status, text.format(spread) + _note(status, spread) + after, spread.value)


# ---------------------------------------------------------------------------------------------
# The rules, one per claim
# ---------------------------------------------------------------------------------------------


def _c1(records: Records) -> Verdict:
    record = _newest(records, "bench.crossover")
    costs = record.data["policy_step"]
    accel = next((name for name in costs if name not in ("cpu", "env_only")), None)
    if accel is None or not _accelerated(record):
        return _no_accelerator()
    cpu_ms, accel_ms = costs["cpu"]["median_s"] * 1e3, costs[accel]["median_s"] * 1e3
    text = f"CPU {cpu_ms:.3f} ms, {accel} {accel_ms:.3f} ms per step: {{}} the CPU's time"
    return _ratio_verdict(Spread.of_medians(costs[accel], costs["cpu"]), 1.0, text)


def _c2(records: Records) -> Verdict:
    record = _newest(records, "bench.crossover")
    speedups = record.data["value_update_speedup"]
    if not speedups or not _accelerated(record):
        return _no_accelerator()
    accel, speedup = next(iter(speedups.items()))
    costs = record.data.get("value_update", {})
    spread = Spread.of_medians(costs["cpu"], costs[accel]) if accel in costs else Spread(speedup)
    return _ratio_verdict(spread, 1.0, f"{accel} {{}} the CPU's speed")


C3_BATCH = 256
"""The batch size at which C3's rule of thumb is checked (a typical update minibatch)."""


def _c3(records: Records) -> Verdict:
    record = _newest(records, "bench.crossover")
    crossover = {int(b): w for b, w in record.data["crossover_width_by_batch"].items()}
    if not crossover or not _accelerated(record):
        return _no_accelerator()
    batch = min(crossover, key=lambda b: abs(b - C3_BATCH))
    width = crossover[batch]
    others = ", ".join(f"batch {b}: {w or 'never'}" for b, w in sorted(crossover.items()))
    text = f"accelerator wins from width {width or 'never'} at batch {batch} ({others})"
    return Verdict(_held(width is not None and 128 <= width <= 512), text)


def _c4(records: Records) -> Verdict:
    ppo = _newest(records, "bench.ppo", placement="all-accelerator")
    ddpg = _newest(records, "bench.ddpg_placements")
    if not _accelerated(ppo) or not _accelerated(ddpg):
        return _no_accelerator()
    ppo_copies = ppo.data["copies_per_env_step"]
    ddpg_row = next(r for r in ddpg.data["rows"] if r["placement"] == "all-accelerator")
    ddpg_copies = ddpg_row["copies_per_1000_samples"] / 1000
    text = f"PPO {ppo_copies:.3f}, DDPG {ddpg_copies:.3f} copies per environment step"
    return Verdict(_held(ppo_copies > ddpg_copies), text, ppo_copies / max(ddpg_copies, 1e-12))


C5_BAND = (0.37 / 1.5, 0.37 * 1.5)
"""C5 holds when the measured transfer share is within a factor of 1.5 of the article's 37%."""


def _c5(records: Records) -> Verdict:
    record = _newest(records, "bench.profile", placement="all-accelerator")
    if record.data.get("accelerator_missing") or not _accelerated(record):
        return _no_accelerator()
    data = record.data
    share, stderr = data["transfer_share"], data.get("transfer_share_stderr")
    timer = data.get("timer_sync_share")  # None: an older record, with the timer's syncs inside
    timer_text = "timer's syncs inside" if timer is None else f"+{timer:.0%} in the timer's syncs"
    text = f"{share:.0%} of samples in copies and waits for data ({timer_text}; hidden "
    text += f"{data['hidden']})"
    # +- two standard errors: where another recording of the same run could land
    spread = Spread.about(share, None if stderr is None else 4 * stderr)
    low, high = C5_BAND
    status = _combined((_against(spread, low), _against(spread, high, above=False)))
    return Verdict(status, text + _note(status, spread, "{:.0%}"))


def _c6(records: Records) -> Verdict:
    record = _newest(records, "bench.hybrid")
    if not _accelerated(record):
        return _no_accelerator()
    runs = record.data["runs"]
    baseline, hybrid = runs["all-accelerator"], runs["hybrid"]
    speedup = baseline["median_iteration_seconds"] / hybrid["median_iteration_seconds"]
    # The plans' iterations ran interleaved, so they pair up (the first: warm-up, copy count).
    times = [run.get("iteration_seconds", [])[1:] for run in (baseline, hybrid)]
    use = ", ".join(
        f"{name} {run['utilisation']['process_cpu_percent']:.0f}/"
        + (f"{gpu:.0f}" if (gpu := run["utilisation"]["gpu_percent"]) is not None else "n/a")
        for name, run in (("baseline", baseline), ("hybrid", hybrid))
    )
    spread = Spread.of_pairs(*times, value=speedup, per="iteration")
    return _ratio_verdict(
        spread, 1.1, "hybrid {} the baseline's speed", after=f"; CPU %/GPU %: {use}"
    )


def _c7(records: Records) -> Verdict:
    record = _newest(records, "bench.ddpg_placements")
    if not _accelerated(record):
        return _no_accelerator()
    rows = {row["placement"]: row for row in record.data["rows"]}
    cpu = rows["all-cpu"]
    switching = max(
        (rows[name] for name in ("hybrid", "all-accelerator")),
        key=lambda row: row["copies_per_1000_samples"],
    )
    # The placements ran in interleaved turns, so each turn's speeds pair up.
    turns = [row.get("chunk_steps_per_s", []) for row in (switching, cpu)]
    ratio = switching["env_steps_per_s"] / cpu["env_steps_per_s"]
    spread = Spread.of_pairs(*turns, value=ratio, per="turn")
    text = (
        f"{switching['placement']}: {switching['copies_per_1000_samples']:.0f} copies per 1000 "
        "samples, {} the all-CPU speed"
    )
    return _ratio_verdict(spread, 1.0, text, above=False)


def _c8(records: Records) -> Verdict:
    transition = _newest(records, "bench.ddpg", buffer="transition")
    trajectory = _newest(records, "bench.ddpg", buffer="trajectory")
    speedup = transition.data["seconds_per_episode"] / trajectory.data["seconds_per_episode"]
    spreads = (transition.data["eval_return_spread"], trajectory.data["eval_return_spread"])
    buffers = (transition, trajectory)
    seeds = min(len(record.data["seeds"]) for record in buffers)
    stability = "one seed, so no spread over seeds to compare"
    if seeds > 1:
        stability = f"spread of greedy returns over {seeds} seeds {spreads[0]:.0f} (transition) vs "
        stability += f"{spreads[1]:.0f} (trajectory)"
    # The designs ran side by side (interleaved) for each seed, so their ratios pair up.
    by_seed = [[run["seconds_per_episode"] for run in r.data.get("runs", [])] for r in buffers]
    spread = Spread.of_pairs(*by_seed, value=speedup, per="seed")
    text = "trajectory buffer {} the transition buffer's speed"
    return _ratio_verdict(spread, 1.1, text, after=f"; {stability}")


def _c9(records: Records) -> Verdict:
    record = _newest(records, "bench.hybrid")
    if not _accelerated(record):
        return _no_accelerator()
    # The hybrid's speed relative to the baseline, each at its fastest CPU thread count.
    rows = record.data["width_sweep"]
    advantage = {w: s["hybrid"] for w, s in speedups(rows).items()}
    small = min(advantage, key=lambda w: abs(w - 128))
    large = min(advantage, key=lambda w: abs(w - 512))
    if small == large:
        return Verdict(Status.MISSING, "the width sweep needs widths near 128 and near 512")
    change = advantage[large] / advantage[small] - 1
    text = (
        f"hybrid vs baseline: {advantage[small]:.2f}x at width {small}, "
        f"{advantage[large]:.2f}x at {large}, {change:+.0%}: the ratio {{}}"
    )
    fastest = [  # the four timings behind the ratio, each plan at its fastest thread count
        min(
            (r for r in rows if (r["width"], r["placement"]) == (width, name)),
            key=lambda r: r["seconds_per_iteration"],
        )
        for width in (small, large)
        for name in ("all-accelerator", "hybrid")
    ]
    parts = [(row["seconds_per_iteration"], row.get("iqr_s")) for row in fastest]
    return _ratio_verdict(Spread.of_quotient(1 + change, parts), 0.9, text, above=False)


def _slowdown(row: dict[str, Any]) -> Spread:
    """The allocator's slowdown on one network +- half the spread of identical plans there;
    exact (no spread) where it chose the best fixed configuration or a cheaper one."""
    if row["slowdown"] <= 0:
        return Spread.about(row["slowdown"], 0.0)
    return Spread.about(row["slowdown"], row.get("same_devices_spread"))


def _c10(records: Records) -> Verdict:
    record = _newest(records, "bench.allocator")
    if not _accelerated(record):
        return _no_accelerator()
    rows = [row for row in record.data["criterion"] if row["network"].startswith("mlp")]
    # Held where the allocator chose the best fixed configuration (or a cheaper one); else its
    # slowdown +- half the spread of identical plans must lie wholly within 5% (or beyond).
    by_row = {r["network"]: _against(_slowdown(r), 0.05, False) for r in rows}
    worst = max(rows, key=lambda row: row["slowdown"])
    within = sum(row["slowdown"] <= 0.05 for row in rows)
    noise = worst.get("same_devices_spread")
    text = f"allocator within 5% of the best fixed plan on {within} of {len(rows)} MLPs (worst: "
    text += f"{worst['slowdown']:+.0%} on {worst['network']}"
    text += ")" if noise is None else f", where identical plans differ by {noise:.0%})"
    unclear = [name for name, status in by_row.items() if status is Status.NO_CLEAR_EFFECT]
    text += f"; within the measured noise on {', '.join(unclear)}" if unclear else ""
    return Verdict(_combined(by_row.values()), text)


def _c11(records: Records) -> Verdict:
    record = _newest(records, "bench.allocator")
    if not _accelerated(record):
        return _no_accelerator()
    cnn = [row for row in record.data["criterion"] if row["network"].startswith("cnn")]
    if not cnn:
        return Verdict(Status.MISSING, "the allocator record has no CNN row")
    saved = cnn[0]["saved_vs_fixed_rule"]
    text = f"allocator {saved:+.0%} time saved against the fixed rule on {cnn[0]['network']}"
    ratio = 1 / (1 - saved) if saved < 1 else None
    if saved == 0:  # the fixed rule's own configuration: nothing saved, and no noise in that
        return Verdict(Status.NOT_HELD, text + " (the fixed rule's configuration)", ratio)
    spread = Spread.about(saved, cnn[0].get("same_devices_spread"))  # +- half of identical plans'
    status = _against(spread, 0.10)
    return Verdict(status, text + _note(status, spread, "{:.0%}"), ratio)


def _c12(records: Records) -> Verdict:
    return Verdict(Status.NOT_MEASURABLE, "outside this series (no GAIL, no MuJoCo HalfCheetah)")


def _c13(records: Records) -> Verdict:
    record = _newest(records, "bench.allocator")
    if not _accelerated(record):
        return _no_accelerator()
    timeline = record.data["curriculum"]["timeline"]
    on_accelerator = [stage["update"] != "cpu" for stage in timeline]
    moved = not on_accelerator[0] and on_accelerator[-1]
    text = " -> ".join(f"{stage['stage']}: {stage['decision']}" for stage in timeline)
    return Verdict(_held(moved), text)


CLAIMS: tuple[Claim, ...] = (
    Claim("C1", "One CartPole step with a 128-unit policy is slower on GPU (transfers) than CPU.",
          "CPU 0.0003 s, GPU 0.0005 s per step", 0.0005 / 0.0003, "accelerator time / CPU time",
          ("bench.crossover",), "00", "held if the accelerator's step takes longer than the CPU's",
          _c1),
    Claim("C2", "A value update with 256 hidden units runs faster on GPU.",
          "1.8x faster on GPU", 1.8, "accelerator speed / CPU speed",
          ("bench.crossover",), "00", "held if the accelerator is faster (speed-up above 1)", _c2),
    Claim("C3", "Rule of thumb: < 128 units CPU, > 256 units GPU, in between it depends.",
          "crossover between 128 and 256 units", None, "",
          ("bench.crossover",), "00",
          f"held if the measured crossover width at batch {C3_BATCH} lies in 128..512", _c3),
    Claim("C4", "On-policy PPO switches devices more often than off-policy DDPG.",
          "qualitative", None, "PPO copies per step / DDPG copies per step",
          ("bench.ppo", "bench.ddpg_placements"), "01, 04",
          "held if all-accelerator PPO copies more per environment step than all-accelerator DDPG",
          _c4),
    Claim("C5", "In an all-GPU PPO with 128 units, transfers take 37% of training time.",
          "37% of time", None, "",
          ("bench.profile",), "02", "held if the measured share is within 1.5x of 37% (25%..55%)",
          _c5),
    Claim("C6", "The hybrid split is 1.4x faster than all-GPU PPO (Pendulum).",
          "58 s -> 41 s per round (1.41x); CPU 100% -> 65%, GPU 23% -> 48%", 58 / 41,
          "baseline time / hybrid time", ("bench.hybrid",), "03",
          "held if the hybrid plan is at least 1.1x the baseline's speed", _c6),
    Claim("C7", "20+ device switches per 1000 samples made DDPG 15% slower than pure CPU.",
          "15% slower (0.85x)", 0.85, "accelerated speed / all-CPU speed",
          ("bench.ddpg_placements",), "04",
          "held if DDPG with per-sample copies runs slower than DDPG all on the CPU", _c7),
    Claim("C8", "A trajectory-level buffer beats a transition-level one (72 s -> 53 s per round).",
          "72 s -> 53 s (1.36x), more stable curve", 72 / 53,
          "transition time / trajectory time", ("bench.ddpg",), "04",
          "held if the trajectory buffer is 1.1x faster or more (every seed: the spread is "
          "theirs); stability shown, not judged",
          _c8),
    Claim("C9", "Growing PPO's hidden layer 128 -> 512 made the fixed hybrid split 15% slower.",
          "15% slower", 0.85, "hybrid advantage at 512 / at 128",
          ("bench.hybrid",), "03",
          "held if the hybrid plan's advantage over the baseline shrinks by 10% or more", _c9),
    Claim("C10", "A dynamic allocator that benchmarks both devices picks the better device.",
          "qualitative", None, "", ("bench.allocator",), "05",
          "held if the allocator is within 5% of the best fixed plan on every MLP", _c10),
    Claim("C11", "On an Atari CNN the dynamic strategy is 22% faster than a fixed one.",
          "22% faster", 1.22, "fixed-rule time / allocator time", ("bench.allocator",), "05",
          "held if the allocator saves 10% or more against the fixed rule on the CNN", _c11),
    Claim("C12", "GAIL on HalfCheetah trains faster on GPU even with 64 hidden units.",
          "qualitative", None, "", (), "—", "not measured by this series", _c12),
    Claim("C13", "In a curriculum the allocator moves growing networks to the GPU.",
          "qualitative", None, "", ("bench.allocator",), "05",
          "held if the update leaves the CPU for the accelerator as the network grows", _c13),
)  # fmt: skip
"""Every checkable claim of the article (:mod:`~hetero_tutorial.ledger.article`), in order."""

# Every rule with a measured figure says held or not only past that figure's noise.
PAST_THE_NOISE = "; only past the measured spread (repeats, IQRs, standard errors), else unclear"
CLAIMS = tuple(replace(c, rule=c.rule + PAST_THE_NOISE) if c.judge not in (_c3, _c4, _c12, _c13)
               else c for c in CLAIMS)  # fmt: skip


def judge(claim: Claim, records: Records, here: bool = True) -> Verdict:
    """The claim's verdict from ``records``; ``not measured yet`` when a needed kind is absent.

    ``here``: the records are this machine's, so the remedy is to run a notebook;
    a reference machine's missing record is only reported.
    """
    remedy = f"run notebook {claim.notebook} (or its bench command)" if here else "no record"
    missing = [kind for kind in claim.needs if not records.get(kind)]
    if missing:
        return Verdict(Status.MISSING, f"needs {', '.join(missing)}: {remedy}")
    try:
        return claim.judge(records)
    except _NoMatchingRecord as missing_record:
        return Verdict(Status.MISSING, f"{missing_record}: {remedy}")


def group_by_kind(records: Iterable[Record]) -> Records:
    """Records by kind; every record must carry its provenance (the Record type enforces it)."""
    grouped: Records = {}
    for record in records:
        if not isinstance(record, Record):
            raise UsageError(f"the ledger takes results records, got {type(record).__name__}")
        grouped.setdefault(record.kind, []).append(record)
    return grouped


def claim(claim_id: str) -> Claim:
    """The claim with this ID (``"C1"`` .. ``"C13"``)."""
    for candidate in CLAIMS:
        if candidate.id == claim_id:
            return candidate
    raise UsageError(f"no claim {claim_id!r}; the claims are C1..C{len(CLAIMS)}")
