"""Did the runs learn, and did two designs learn differently? One rule for every learning verdict.

A comparison of learning (policy lag 0 against 1, one replay buffer against another,
one placement against another) names an effect only when

1. every arm has at least :data:`MIN_SEEDS` seeds: one seed has no spread to hold a gap
   against, and a few can fall apart by chance;
2. the runs learned: at least one arm's median greedy return passes the task's learning bar
   (:data:`LEARNED_FLOOR`), so that the comparison is between policies, not between two
   kinds of noise around a random policy;
3. the arms' ranges over seeds do not overlap: every seed of one arm above every seed of
   the other.

Otherwise the verdict says which rule it stopped at: ``"no verdict (...)"`` or ``"no
difference detected (n seeds each)"``, never "no worse", which a handful of noisy runs
cannot show. In quick mode, where the runs are too short to learn, it says so: "quick
mode: no learning verdict".

Returns are reported as a run's *best* and *final* greedy return side by side
(:func:`best_and_final`): a run that solved and then forgot is not a run that solved.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.modes import quick_mode
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import MIN_REPEATS

LEARNED_FLOOR = {
    "CartPole-v1": 200.0,  # a random policy scores about 22; solved is 475
    "Acrobot-v1": -300.0,  # a random policy hits the time limit, -500; solved is -100
    "Pendulum-v1": -800.0,  # a random policy scores about -1,200 to -1,500; good ones -200
}
"""Per task, the greedy return a run must pass to count as having learned something."""

MIN_SEEDS = MIN_REPEATS
"""Seeds per arm below which no learning verdict is given: the series' one minimum
(:data:`~hetero_tutorial.core.timing.MIN_REPEATS`). With no difference at all, two arms of n
seeds each fall apart with no overlap by chance 2 / C(2n, n): one in three for 2 seeds, one
in ten for 3, one in 126 for 5."""


@dataclass(frozen=True)
class LearningVerdict:
    """A learning comparison's outcome: ``kind`` is "better", "no difference" or "no verdict"."""

    kind: str
    sentence: str

    def __str__(self) -> str:
        return self.sentence


def floor_of(env_id: str) -> float:
    """The task's :data:`LEARNED_FLOOR` (a clear error for a task without one)."""
    if env_id not in LEARNED_FLOOR:
        raise UsageError(
            f"no learning floor for {env_id!r}; known: {', '.join(LEARNED_FLOOR)} "
            "(add one to studies.learning.LEARNED_FLOOR, with the random and solved returns)"
        )
    return LEARNED_FLOOR[env_id]


def _span(returns: Sequence[float]) -> str:
    low, high = min(returns), max(returns)
    return f"{low:.1f}" if low == high else f"{low:.1f} to {high:.1f}"


def compare_learning(
    arms: Mapping[str, Sequence[float]], env_id: str, quick: bool | None = None
) -> LearningVerdict:
    """The verdict on two arms' greedy returns (one per seed), by the module's rule.

    ``arms`` maps each arm's name to its seeds' greedy returns (two arms, in the order
    they are compared). ``quick``: whether this is a quick-mode run (default: the mode
    now); a quick run that did not learn is "not judged", not "no verdict".
    """
    if len(arms) != 2:
        raise UsageError(f"compare_learning takes two arms, got {len(arms)}: {list(arms)}")
    (a, a_returns), (b, b_returns) = arms.items()
    floor = floor_of(env_id)
    seeds = min(len(a_returns), len(b_returns))
    if seeds < MIN_SEEDS:
        return LearningVerdict(
            "no verdict",
            f"no verdict ({counted(seeds, 'seed')} per arm: a learning verdict needs "
            f"{MIN_SEEDS} or more)",
        )
    medians = {a: statistics.median(a_returns), b: statistics.median(b_returns)}
    if max(medians.values()) < floor:
        numbers = (
            f"median greedy returns {medians[a]:.1f} ({a}) and {medians[b]:.1f} ({b}), "
            f"below {env_id}'s learning bar of {floor:.0f}"
        )
        if quick_mode() if quick is None else quick:
            return LearningVerdict(
                "no verdict", f"quick mode: no learning verdict (too short to learn: {numbers})"
            )
        return LearningVerdict("no verdict", f"no verdict (neither learned: {numbers})")
    ranges = f"{a} {_span(a_returns)}, {b} {_span(b_returns)}, {seeds} seeds each"
    for winner, w_returns, loser, l_returns in ((a, a_returns, b, b_returns),
                                                (b, b_returns, a, a_returns)):  # fmt: skip
        if min(w_returns) > max(l_returns):
            return LearningVerdict(
                "better",
                f"{winner} learned better than {loser}: every seed above every seed of the "
                f"other ({ranges})",
            )
    overlap = f"no difference detected ({ranges}: the ranges overlap)"
    return LearningVerdict("no difference", overlap)


def best_and_final(evaluations: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """A run's best and final greedy returns, from its ``(env step, return)`` evaluations."""
    if not evaluations:
        raise UsageError("a run without evaluations has no best or final return")
    return max(value for _, value in evaluations), evaluations[-1][1]


def returns_phrase(evaluations: Sequence[tuple[int, float]]) -> str:
    """ "best greedy return B (at step S), final F": how a return is reported everywhere."""
    best, final = best_and_final(evaluations)
    at = next(step for step, value in evaluations if value == best)
    return f"best greedy return {best:.1f} (at {at:,} steps), final {final:.1f}"
