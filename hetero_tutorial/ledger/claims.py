"""The claims ledger: each claim of the article against what was measured, with a verdict.

The article (:data:`ARTICLE`) is an untitled Chinese blog post on splitting deep-RL
training between CPU and GPU; :data:`CLAIMS` restates each of its checkable claims, in
its order, as data: what the article says, its figure, the measurement that answers
it (a results record kind), and an explicit rule that turns that measurement into a
verdict:

* ``held`` / ``did not hold``: the rule's test on the measured numbers;
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
from dataclasses import dataclass
from typing import Any

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.results import Record
from hetero_tutorial.studies.sweeps import speedups

ARTICLE = {
    "title": "深度强化学习中的异构计算挑战 (untitled post; its first section's heading)",
    "title_english": "Heterogeneous computing challenges in deep reinforcement learning",
    "language": "Chinese",
    "sections": (
        "1. 深度强化学习中的异构计算挑战 (heterogeneous computing in deep RL)",
        "2. PPO算法的设备协同实战 (CPU and GPU working together in PPO, in practice)",
        "3. 经验池设计的设备优化策略 (device strategies for replay-buffer design)",
        "4. 动态设备分配的高级技巧 (advanced techniques for dynamic device allocation)",
    ),
}
"""The source article: it has no title of its own, so it is named by its first heading."""


class Status(str, enum.Enum):
    HELD = "held"
    NOT_HELD = "did not hold"
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


def _accelerator_name(costs: dict[str, Any]) -> str | None:
    names = [name for name in costs if name not in ("cpu", "env_only")]
    return names[0] if names else None


def _held(condition: bool) -> Status:
    return Status.HELD if condition else Status.NOT_HELD


# ---------------------------------------------------------------------------------------------
# The rules, one per claim
# ---------------------------------------------------------------------------------------------


def _c1(records: Records) -> Verdict:
    record = _newest(records, "bench.crossover")
    costs = record.data["policy_step"]
    accel = _accelerator_name(costs)
    if accel is None or not _accelerated(record):
        return _no_accelerator()
    cpu_s, accel_s = costs["cpu"]["median_s"], costs[accel]["median_s"]
    ratio = accel_s / cpu_s
    text = f"CPU {cpu_s * 1e3:.3f} ms, {accel} {accel_s * 1e3:.3f} ms per step"
    return Verdict(_held(ratio > 1), text, ratio)


def _c2(records: Records) -> Verdict:
    record = _newest(records, "bench.crossover")
    speedups = record.data["value_update_speedup"]
    if not speedups or not _accelerated(record):
        return _no_accelerator()
    accel, speedup = next(iter(speedups.items()))
    return Verdict(_held(speedup > 1), f"{accel} {speedup:.2f}x the CPU's speed", speedup)


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
    share = record.data["transfer_share"]
    low, high = C5_BAND
    text = f"{share:.0%} of samples in transfers (hidden {record.data['hidden']})"
    return Verdict(_held(low <= share <= high), text)


def _c6(records: Records) -> Verdict:
    record = _newest(records, "bench.hybrid")
    if not _accelerated(record):
        return _no_accelerator()
    runs = record.data["runs"]
    baseline, hybrid = runs["all-accelerator"], runs["hybrid"]
    speedup = baseline["median_iteration_seconds"] / hybrid["median_iteration_seconds"]
    use = {
        name: (run["utilisation"]["process_cpu_percent"], run["utilisation"]["gpu_percent"])
        for name, run in (("baseline", baseline), ("hybrid", hybrid))
    }
    text = f"hybrid {speedup:.2f}x the baseline's speed; CPU %/GPU %: " + ", ".join(
        f"{name} {cpu:.0f}/{'n/a' if gpu is None else f'{gpu:.0f}'}"
        for name, (cpu, gpu) in use.items()
    )
    return Verdict(_held(speedup >= 1.1), text, speedup)


def _c7(records: Records) -> Verdict:
    record = _newest(records, "bench.ddpg_placements")
    if not _accelerated(record):
        return _no_accelerator()
    rows = {row["placement"]: row for row in record.data["rows"]}
    cpu = rows["all-cpu"]["env_steps_per_s"]
    switching = max(
        (rows[name] for name in ("hybrid", "all-accelerator")),
        key=lambda row: row["copies_per_1000_samples"],
    )
    ratio = switching["env_steps_per_s"] / cpu
    text = (
        f"{switching['placement']}: {switching['copies_per_1000_samples']:.0f} copies per 1000 "
        f"samples, {ratio:.2f}x the all-CPU speed"
    )
    return Verdict(_held(ratio < 1), text, ratio)


def _c8(records: Records) -> Verdict:
    transition = _newest(records, "bench.ddpg", buffer="transition")
    trajectory = _newest(records, "bench.ddpg", buffer="trajectory")
    speedup = transition.data["seconds_per_episode"] / trajectory.data["seconds_per_episode"]
    spreads = (transition.data["eval_return_spread"], trajectory.data["eval_return_spread"])
    seeds = min(len(record.data["seeds"]) for record in (transition, trajectory))
    stability = (
        f"spread of greedy returns over {seeds} seeds {spreads[0]:.0f} (transition) vs "
        f"{spreads[1]:.0f} (trajectory)"
        if seeds > 1
        else "one seed, so no spread over seeds to compare"
    )
    # The seeds ran side by side (interleaved), so their ratios pair up and show the noise.
    by_seed = [
        slow["seconds_per_episode"] / fast["seconds_per_episode"]
        for slow, fast in zip(
            transition.data.get("runs", []), trajectory.data.get("runs", []), strict=False
        )
    ]
    per_seed = f" (per seed {min(by_seed):.2f}-{max(by_seed):.2f}x)" if len(by_seed) > 1 else ""
    text = f"trajectory buffer {speedup:.2f}x the transition buffer's speed{per_seed}; {stability}"
    return Verdict(_held(speedup >= 1.1 and all(r > 1 for r in by_seed)), text, speedup)


def _c9(records: Records) -> Verdict:
    record = _newest(records, "bench.hybrid")
    if not _accelerated(record):
        return _no_accelerator()
    # The hybrid's speed relative to the baseline, each at its fastest CPU thread count.
    advantage = {w: s["hybrid"] for w, s in speedups(record.data["width_sweep"]).items()}
    small = min(advantage, key=lambda w: abs(w - 128))
    large = min(advantage, key=lambda w: abs(w - 512))
    if small == large:
        return Verdict(Status.MISSING, "the width sweep needs widths near 128 and near 512")
    change = advantage[large] / advantage[small] - 1
    text = (
        f"hybrid vs baseline: {advantage[small]:.2f}x at width {small}, "
        f"{advantage[large]:.2f}x at {large} ({change:+.0%})"
    )
    return Verdict(_held(change <= -0.10), text, 1 + change)


def _allocator_record(records: Records) -> Record:
    return _newest(records, "bench.allocator")


def _c10(records: Records) -> Verdict:
    record = _allocator_record(records)
    if not _accelerated(record):
        return _no_accelerator()
    rows = [row for row in record.data["criterion"] if row["network"].startswith("mlp")]
    worst = max(rows, key=lambda row: row["slowdown"])
    text = (
        f"allocator within 5% of the best fixed plan on {sum(r['within_tolerance'] for r in rows)}"
        f" of {len(rows)} MLPs (worst: {worst['slowdown']:+.0%} on {worst['network']})"
    )
    return Verdict(_held(all(row["within_tolerance"] for row in rows)), text)


def _c11(records: Records) -> Verdict:
    record = _allocator_record(records)
    if not _accelerated(record):
        return _no_accelerator()
    cnn = [row for row in record.data["criterion"] if row["network"].startswith("cnn")]
    if not cnn:
        return Verdict(Status.MISSING, "the allocator record has no CNN row")
    saved = cnn[0]["saved_vs_fixed_rule"]
    text = f"allocator {saved:+.0%} time saved against the fixed rule on {cnn[0]['network']}"
    return Verdict(_held(saved >= 0.10), text, 1 / (1 - saved) if saved < 1 else None)


def _c12(records: Records) -> Verdict:
    return Verdict(Status.NOT_MEASURABLE, "outside this series (no GAIL, no MuJoCo HalfCheetah)")


def _c13(records: Records) -> Verdict:
    record = _allocator_record(records)
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
          "held if the trajectory buffer is 1.1x faster or more, and faster for every seed; "
          "stability shown, not judged",
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
"""Every checkable claim of the article (:data:`ARTICLE`), in the article's order."""


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
