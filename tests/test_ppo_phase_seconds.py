"""A run's phase seconds and its wall seconds cover the same iterations, so shares compare.

The first iteration runs under the copy counter (a Python call per tensor operation) and
pays each device's one-off start; ``wall_seconds`` leaves it out, and so must
``phase_seconds``, or a phase's share of the wall time (notebook 01's rollout share) and the
overlapped pipeline's ideal (from the sequential run's phases) count it in.
"""

import pytest

from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import train
from hetero_tutorial.studies.overlap import ROLLOUT_PHASES, UPDATE_PHASES, phase_split

TINY = {"total_steps": 768, "num_envs": 2, "num_steps": 128, "minibatch_size": 64}


def test_phase_seconds_cover_the_iterations_wall_seconds_covers():
    config = PPOConfig.tuned("CartPole-v1", update_epochs=2, **TINY)
    run = train(config, placement("hybrid"), seed=0, count_copies=True, eval_episodes=0)
    assert len(run.iteration_seconds) == 3
    # every phase runs inside an iteration: the steady phases fit in the steady wall time
    assert 0 < sum(run.phase_seconds.values()) <= run.wall_seconds
    assert 0 < sum(run.first_phase_seconds.values()) <= run.iteration_seconds[0]
    assert set(run.first_phase_seconds) == set(run.phase_seconds)
    assert run.fields()["first_phase_seconds"] == run.first_phase_seconds
    rollout, update = phase_split(run)  # per steady iteration: two of them
    assert rollout == pytest.approx(sum(run.phase_seconds[p] for p in ROLLOUT_PHASES) / 2)
    assert update == pytest.approx(sum(run.phase_seconds.get(p, 0) for p in UPDATE_PHASES) / 2)


def test_a_single_iteration_is_its_own_steady_part():
    config = PPOConfig.tuned("CartPole-v1", update_epochs=1, **{**TINY, "total_steps": 256})
    run = train(config, placement("all-cpu"), seed=0, count_copies=False, eval_episodes=0)
    assert run.steady_iterations == run.iteration_seconds
    assert run.first_phase_seconds == {}
    assert 0 < sum(run.phase_seconds.values()) <= run.wall_seconds
