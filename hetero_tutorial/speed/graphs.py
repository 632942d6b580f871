"""How many steps one call of a compiled piece runs: the rollout's and the update's groups.

Each call of a compiled graph costs the same outside its kernels, whatever they compute:
Dynamo's guards, the code that calls the kernels, the Python between calls (tens of
microseconds on a CPU). A piece that runs several steps in a row pays it once for all of
them, for a larger graph that takes longer to compile, once. The learners ask here how many
steps go to one call; every call of a run takes the same number, so that one graph serves
them all. Eager steps take the same groups, where the grouping changes nothing.
"""

from __future__ import annotations

import math

GRAPH_STEPS = 4
"""Rollout steps to a call of the batched collector's compiled steps. Four steps a call pay
the call's cost a quarter as often (``bench compile`` and the peers race measure the steady
speed and the compile seconds)."""

GRAPH_MINIBATCHES = 4
"""PPO minibatch steps to a call of the learner's compiled steps. Four beat two at 1,024
environments on the series' CPU, and eight were no faster than four, within the measured
spread; a larger graph compiles longer from a cold cache."""


def rollout_steps_per_call(num_steps: int) -> int:
    """Rollout steps to a call: :data:`GRAPH_STEPS`, or fewer where ``num_steps`` is no
    multiple of it (their greatest common divisor, so that every call runs one graph)."""
    return math.gcd(num_steps, GRAPH_STEPS)


def minibatches_per_call(minibatch_steps: int) -> int:
    """Minibatch steps to a call, of an update's ``minibatch_steps`` (epochs times
    minibatches): :data:`GRAPH_MINIBATCHES`, or their greatest common divisor where it is
    no multiple of it (two of RL Zoo's ten settings at 8 environments)."""
    return math.gcd(minibatch_steps, GRAPH_MINIBATCHES)
