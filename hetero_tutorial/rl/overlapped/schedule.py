"""Steps 2 and 4 of an overlapped run's loop: which rollout may start, and which is kept.

:class:`LagSchedule` is the learner's book of rollouts: how many have been handed out,
how many it is done with, which slots are free, and the weight version it is at. The
lag bound ``max_lag`` lives here, and only here: the schedule decides both which
rollouts may start (:meth:`LagSchedule.ready`) and which that arrive are dropped as too
stale (:meth:`LagSchedule.keeps`); the learner's loop and both engines ask it.
"""

from __future__ import annotations

from collections import deque

from hetero_tutorial.rl.overlapped.worker import RolloutRequest


class LagSchedule:
    """Which rollout may start now, on which worker and slot, so that none arrives too stale.

    Rollout ``k`` (numbered in the order they start) may start once the learner is done
    with ``k - max_policy_lag`` rollouts (updated on or dropped): if rollouts come back in
    the order they started, its lag is then at most the bound. With a bound of 0 each
    rollout waits for the update before it (one worker: the sequential placement); with 1,
    a worker collects the next rollout while the learner updates on the last. Rollouts
    that overtake one another (several workers, uneven speeds) can still arrive too
    stale: :meth:`keeps` says so, and the learner drops them (:meth:`drop`).

    Each request names the weights to collect with: the learner's newest when it is
    sent. Both engines honour it, so what acts is decided here, not by which process
    woke first, and one worker's runs repeat exactly from a seed.
    """

    def __init__(self, total: int, workers: int, slots: int, max_lag: int, now: float) -> None:
        self.total, self.max_lag = total, max_lag
        self.started = 0
        """rollouts handed out so far"""
        self.done = 0
        """rollouts the learner has finished with (updated on or dropped)"""
        self.version = 0
        """the learner's weight version: updates so far"""
        self.free_slots = [deque(range(slots)) for _ in range(workers)]
        self.free_since = {(w, s): now for w in range(workers) for s in range(slots)}
        self.in_flight = [0] * workers
        self.done_at = [now]
        """done_at[d]: when the learner had finished d rollouts (done_at[0]: the start)"""

    @property
    def finished(self) -> bool:
        return self.done >= self.total

    def ready(self) -> list[RolloutRequest]:
        """Every rollout that may start now, each on the least busy worker with a free slot."""
        requests = []
        while self.started < self.total and self.done >= self.started - self.max_lag:
            free = [w for w, slots in enumerate(self.free_slots) if slots]
            if not free:
                break
            worker = min(free, key=lambda w: self.in_flight[w])
            slot = self.free_slots[worker].popleft()
            allowed_at = self.done_at[max(self.started - self.max_lag, 0)]
            free_since = self.free_since[(worker, slot)]
            requests.append(
                RolloutRequest(self.started, worker, slot, free_since, allowed_at, self.version)
            )
            self.in_flight[worker] += 1
            self.started += 1
        return requests

    def lag(self, version: int) -> int:
        """The policy lag of a rollout collected with weights ``version``: updates since."""
        return self.version - version

    def keeps(self, version: int) -> bool:
        """Whether the learner may learn from a rollout collected with weights ``version``:
        its lag is within the bound. The others are dropped (:meth:`drop`)."""
        return self.lag(version) <= self.max_lag

    def release(self, worker: int, slot: int, now: float) -> None:
        """The learner has copied the rollout out of ``slot``: the worker may refill it."""
        self.free_slots[worker].append(slot)
        self.free_since[(worker, slot)] = now
        self.in_flight[worker] -= 1

    def finish(self, updated: bool, now: float) -> None:
        """The learner is done with one more rollout (``updated`` on it, or dropped it)."""
        self.done += 1
        self.version += int(updated)
        self.done_at.append(now)

    def drop(self, worker: int, slot: int, now: float) -> None:
        """Drop a rollout too stale to learn from: its slot is free, and it counts as done."""
        self.release(worker, slot, now)
        self.finish(False, now)
