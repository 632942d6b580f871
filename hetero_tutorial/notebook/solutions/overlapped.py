"""Solutions for notebook 06 (rollout and update at the same time).

Both answers are the package's own models of the overlapped engine, in
:mod:`hetero_tutorial.studies.overlap`: the bench's ideal speed-up and the lag
schedule simulated rollout by rollout.
"""

from hetero_tutorial.studies.overlap import ideal_speedup, predicted_lags

__all__ = ["ideal_speedup", "predicted_lags"]

HINTS = {
    "ideal_speedup": (
        "Sequentially an iteration costs the rollout plus the update; overlapped, the slower "
        "side sets the pace. More workers share the rollout side, but no more of them run at "
        "once than the cores the learner leaves free, and under a lag bound L no more than L "
        "rollouts can be collected during one update (a bound of 0: no overlap at all).",
        "Compute the effective number of workers from `workers`, `cores` and the lag bound "
        "first, then the overlapped time per rollout, and return sequential time over "
        "overlapped time (1.0 where nothing can overlap).",
    ),
    "predicted_lags": (
        "Simulate the two sides rollout by rollout on one clock: a rollout can start only "
        "when the schedule allows it (the lag bound and a free slot), and it is collected "
        "with the learner's newest weights at that moment.",
        "For each rollout keep when its request is sent (and the weight version then), when "
        "the worker finishes it, and when the learner starts and ends its update. Its lag is "
        "the learner's version at the update's start minus the version it was collected with; "
        "count the lags in a dict.",
    ),
}
"""Each exercise's hint ladder: first the idea, then the shape of the code (never the formula)."""
