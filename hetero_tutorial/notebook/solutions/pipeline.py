"""Solutions for notebook 06 (rollout and update at the same time)."""

from __future__ import annotations

from collections import Counter


def ideal_speedup(
    rollout_seconds: float, update_seconds: float, workers: int, cores: int, max_policy_lag: int
) -> float:
    """The best speed-up overlapping can give over the sequential plan.

    Sequentially an iteration takes R + U. Overlapped, the learner keeps one core, so
    at most ``cores - 1`` workers collect beside it, and a lag bound L lets at most L
    rollouts be collected during an update: W_eff = min(W, cores - 1, L) workers
    collect while the learner updates, and an iteration takes max(R / W_eff, U).
    """
    parallel = min(workers, cores - 1, max_policy_lag)
    if parallel < 1:
        return 1.0  # nothing runs beside the learner: the sequential plan
    return (rollout_seconds + update_seconds) / max(rollout_seconds / parallel, update_seconds)


def predicted_lags(
    iterations: int, max_policy_lag: int, rollout_seconds: float, update_seconds: float
) -> dict[int, int]:
    """The policy lag of every rollout of one worker, simulated: how many rollouts have each.

    Rollout k may start once the worker is free and ``k - max_policy_lag`` rollouts are
    done; it loads the weights of the updates finished by then; the learner updates on
    the rollouts in order, each as soon as it has arrived and the previous update ended.
    The learner is at version k when it reaches rollout k (none is dropped with one
    worker), so rollout k's lag is k minus the version it was collected with.
    """
    done_at: list[float] = []  # when the update on rollout j ended
    worker_free = learner_free = 0.0
    lags = []
    for k in range(iterations):
        waits_for = k - max_policy_lag  # this many rollouts must be done first
        start = max(worker_free, done_at[waits_for - 1] if waits_for > 0 else 0.0)
        version = sum(1 for end in done_at if end <= start)
        worker_free = start + rollout_seconds
        learner_free = max(worker_free, learner_free) + update_seconds
        done_at.append(learner_free)
        lags.append(k - version)
    return dict(sorted(Counter(lags).items()))
