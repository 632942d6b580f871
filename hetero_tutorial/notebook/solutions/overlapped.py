"""Solutions for notebook 06 (rollout and update at the same time).

Both answers are the package's own models of the overlapped engine, in
:mod:`hetero_tutorial.studies.overlap`: the bench's ideal speed-up and the lag
schedule simulated rollout by rollout.
"""

from hetero_tutorial.studies.overlap import ideal_speedup, predicted_lags

__all__ = ["ideal_speedup", "predicted_lags"]
