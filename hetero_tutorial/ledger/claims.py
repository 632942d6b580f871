"""The claims ledger: each claim of the article against what was measured, with a verdict.

:data:`CLAIMS` restates each checkable claim of the article (see ``ledger/article.py``),
in its order, as data: what it says, its figure, the measurement that answers it (a
record kind), and an explicit rule that turns that measurement into a verdict:

* ``held`` / ``did not hold``: the rule's test, given only when the whole spread of
  the measurement's repeats (seeds, interleaved turns, IQRs, standard errors) lies
  on one side of the rule's threshold (identical plans differ by 3-15% here);
* ``no clear effect``: the spread straddles the threshold ("within the measured
  noise, +-x");
* ``no verdict``: the record holds fewer than five repeats (one measures no spread), so no
  claim;
* ``not measurable here``: the measurement exists but cannot answer the claim on
  that machine (most claims compare a CPU with an accelerator);
* ``not measured yet``: the record the rule needs is absent. A verdict is never
  produced without the measurement it names (:func:`judge` checks before any
  rule runs).

The rules themselves live in :mod:`~hetero_tutorial.ledger.rules`. They are deliberately
simple and stated in words next to each claim (``Claim.rule``),
so a learner can disagree with a threshold and change it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.results import Record, busy_line
from hetero_tutorial.ledger import rules
from hetero_tutorial.ledger.article import C8_SECONDS_PER_ROUND
from hetero_tutorial.ledger.rules import (
    C3_BATCH,
    Records,
    Status,
    Verdict,
    _NoMatchingRecord,
)


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
    studies: tuple[str, ...] = ()
    """The studies (by the guard's name) whose figures the rule reads from a record holding
    several; a busy study outside them leaves the claim judged. Empty: every study counts."""


C8_RATIO = (
    C8_SECONDS_PER_ROUND["pattern A (transition)"] / C8_SECONDS_PER_ROUND["pattern B (trajectory)"]
)
"""The article's C8 figure as a ratio: transition-buffer seconds over trajectory-buffer seconds."""

STEP_STUDIES = ("the policy step",)
"""C1's study in notebook 00's record (timed twice, both under this name)."""

CLAIMS: tuple[Claim, ...] = (
    Claim("C1", "One CartPole step with a 128-unit policy is slower on GPU (transfers) than CPU.",
          "CPU 0.0003 s, GPU 0.0005 s per step", 0.0005 / 0.0003, "accelerator time / CPU time",
          ("bench.crossover",), "00", "held if the accelerator's step takes longer than the CPU's",
          rules.c1, STEP_STUDIES),
    Claim("C1-CPU", "C1's CPU half, on its own: that CartPole step costs 0.0003 s on a CPU.",
          "CPU 0.0003 s per step", 1.0, "CPU time here / the article's CPU time",
          ("bench.crossover",), "00",
          "held if this CPU's step takes 0.5x to 2x the article's 0.3 ms (half a claim: "
          "judged on any machine)", rules.c1_cpu, STEP_STUDIES),
    Claim("C2", "A value update with 256 hidden units runs faster on GPU.",
          "1.8x faster on GPU", 1.8, "accelerator speed / CPU speed",
          ("bench.crossover",), "00", "held if the accelerator is faster (speed-up above 1)",
          rules.c2, ("the value update",)),
    Claim("C3", "Rule of thumb: < 128 units CPU, > 256 units GPU, in between it depends.",
          "crossover between 128 and 256 units", None, "",
          ("bench.crossover",), "00",
          f"held if the measured crossover width at batch {C3_BATCH} lies in 128..512", rules.c3,
          ("the forward-pass grid",)),
    Claim("C4", "On-policy PPO switches devices more often than off-policy DDPG.",
          "qualitative", None, "PPO copies per step / DDPG copies per step",
          ("bench.ppo", "bench.ddpg_placements"), "01, 04",
          "held if all-accelerator PPO copies more per environment step than all-accelerator DDPG "
          "(copies counted, on the accelerator or on the meta device: no noise)", rules.c4),
    Claim("C5", "In an all-GPU PPO with 128 units, transfers take 37% of training time.",
          "37% of time", None, "",
          ("bench.profile",), "02", "held if the measured share is within 1.5x of 37% (25%..55%)",
          rules.c5),
    Claim("C6", "The hybrid split is 1.4x faster than all-GPU PPO (Pendulum).",
          "58 s -> 41 s per round (1.41x); CPU 100% -> 65%, GPU 23% -> 48%", 58 / 41,
          "baseline time / hybrid time", ("bench.hybrid",), "03",
          "held if the hybrid plan is at least 1.1x the baseline's speed", rules.c6),
    Claim("C7", "20+ device switches per 1000 samples made DDPG 15% slower than pure CPU.",
          "15% slower (0.85x)", 0.85, "accelerated speed / all-CPU speed",
          ("bench.ddpg_placements",), "04",
          "held if DDPG with per-sample copies runs slower than DDPG all on the CPU", rules.c7),
    Claim("C8", "A trajectory-level buffer beats a transition-level one (72 s -> 53 s per round).",
          "72 s -> 53 s (1.36x), more stable curve", C8_RATIO,
          "trajectory env steps/s / transition env steps/s", ("bench.ddpg",), "04",
          "held if the trajectory buffer is 1.1x faster or more (every seed: the spread is "
          "theirs); stability shown, not judged",
          rules.c8),
    Claim("C9", "Growing PPO's hidden layer 128 -> 512 made the fixed hybrid split 15% slower.",
          "15% slower", 0.85, "hybrid advantage at 512 / at 128",
          ("bench.hybrid",), "03",
          "held if the hybrid plan's advantage over the baseline shrinks by 10% or more", rules.c9),
    Claim("C10", "A dynamic allocator that benchmarks both devices picks the better device.",
          "qualitative", None, "", ("bench.allocator",), "05",
          "held if the allocator is within 5% of the best fixed plan on every MLP", rules.c10),
    Claim("C11", "On an Atari CNN the dynamic strategy is 22% faster than a fixed one.",
          "22% faster", 1.22, "fixed-rule time / allocator time", ("bench.allocator",), "05",
          "held if the allocator saves 10% or more against the fixed rule on the CNN", rules.c11),
    Claim("C12", "GAIL on HalfCheetah trains faster on GPU even with 64 hidden units.",
          "qualitative", None, "CPU time / accelerator time per discriminator update",
          ("bench.gail",), "09",
          "judged on one discriminator update, the phase whose size implementations choose: "
          "held if a 64-unit discriminator's update on 1,024 expert and 1,024 policy rows "
          "runs faster on the accelerator; the settings where it does are listed", rules.c12),
    Claim("C13", "In a curriculum the allocator moves growing networks to the GPU.",
          "qualitative", None, "", ("bench.allocator",), "05",
          "held if the update leaves the CPU for the accelerator as the network grows", rules.c13),
)  # fmt: skip
"""Every checkable claim of the article (:mod:`~hetero_tutorial.ledger.article`), in order."""

# Every rule with a measured figure says held or not only past that figure's noise.
PAST_THE_NOISE = (
    "; only past the measured spread (repeats, IQRs, standard errors), else no clear effect"
)
EXACT = (rules.c4, rules.c13)
"""Rules with no spread to read: counted copies, a choice."""
CLAIMS = tuple(replace(c, rule=c.rule + PAST_THE_NOISE) if c.judge not in EXACT else c
               for c in CLAIMS)  # fmt: skip


def judge(claim: Claim, records: Records, here: bool = True) -> Verdict:
    """The claim's verdict from ``records``; ``not measured yet`` when a needed kind is absent.

    ``here``: the records are this machine's, so the remedy is to run a notebook;
    a reference machine's missing record is only reported.
    """
    remedy = f"run notebook {claim.notebook} (or its bench command)" if here else "no record"
    missing = [kind for kind in claim.needs if not records.get(kind)]
    if missing:
        return Verdict(Status.MISSING, f"needs {', '.join(missing)}: {remedy}")
    records, busy = quiet_records(records, claim.studies)
    flagged = [busy[kind] for kind in claim.needs if kind in busy and not records.get(kind)]
    if flagged:
        return Verdict(Status.NO_VERDICT, flagged[0])
    try:
        return claim.judge(records)
    except _NoMatchingRecord as missing_record:
        return Verdict(Status.MISSING, f"{missing_record}: {remedy}")


def quiet_records(records: Records, studies: Sequence[str] = ()) -> tuple[Records, dict[str, str]]:
    """``records`` without those measured on a busy machine (:func:`results.busy_line`), and
    for each kind that lost some, why: nothing is judged from a busy study's record.
    ``studies``: the studies the reader uses (:attr:`Claim.studies`); empty: all."""
    quiet: Records = {}
    busy: dict[str, str] = {}
    for kind, found in records.items():
        for record in found:
            line = busy_line(record, studies)
            if line is None:
                quiet.setdefault(kind, []).append(record)
            else:
                busy.setdefault(kind, line)
    return quiet, busy


def group_by_kind(records: Iterable[Record]) -> Records:
    """Records by kind; every record must carry its provenance (the Record type enforces it)."""
    grouped: Records = {}
    for record in records:
        if not isinstance(record, Record):
            raise UsageError(f"the ledger takes results records, got {type(record).__name__}")
        grouped.setdefault(record.kind, []).append(record)
    return grouped


def claim(claim_id: str) -> Claim:
    """The claim with this ID (``"C1"`` .. ``"C13"``, and ``"C1-CPU"``, C1's CPU half)."""
    for candidate in CLAIMS:
        if candidate.id == claim_id:
            return candidate
    raise UsageError(f"no claim {claim_id!r}; the claims are {', '.join(c.id for c in CLAIMS)}")
