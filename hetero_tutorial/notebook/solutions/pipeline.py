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

    The pipeline's rules (rl/pipeline_schedule.py): the learner sends the request for
    rollout k as soon as both hold: it is done with k - max_policy_lag rollouts, and one
    of the worker's ``max(2, max_policy_lag + 1)`` slots is free (a slot frees when the
    learner copies a rollout out, as its update starts). The request names the learner's
    weight version when it is sent; the worker works through its requests in order; the
    learner updates on each rollout once it has arrived and the previous update ended.
    The learner is at version k when it reaches rollout k (one worker drops none), so
    rollout k's lag is k minus the version its request named.
    """
    slots = max(2, max_policy_lag + 1)
    copied_at: list[float] = []  # when the learner copied rollout j out (its update began)
    done_at: list[float] = []  # when the update on rollout j ended
    worker_free = 0.0
    lags = []
    for k in range(iterations):
        done_enough = done_at[k - max_policy_lag - 1] if k > max_policy_lag else 0.0
        slot_free = copied_at[k - slots] if k >= slots else 0.0
        sent = max(done_enough, slot_free)
        version = sum(1 for end in done_at if end <= sent)
        worker_free = max(worker_free, sent) + rollout_seconds  # the rollout arrives then
        copied_at.append(max(worker_free, done_at[-1] if done_at else 0.0))
        done_at.append(copied_at[-1] + update_seconds)
        lags.append(k - version)
    return dict(sorted(Counter(lags).items()))
