"""DDPG runs of two buffer designs compare seed by seed only when they ran alike."""

import pytest

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.studies.buffer_designs import summarise_fields, time_ratio, unpaired_reason


def _run(buffer, seed, seconds, **settings):
    config = {"buffer": buffer, "seed": seed, "total_steps": 5000, **settings}
    return {"config": config, "placement": "all-cpu", "env_steps_per_s": 100.0,
            "seconds_per_episode": seconds, "copies_per_1000_samples": 0.0,
            "eval_return_mean": -150.0 + seed}  # fmt: skip


def _record(buffer, seconds, seeds=(0, 1, 2), **settings):
    return summarise_fields(
        [_run(buffer, s, t, **settings) for s, t in zip(seeds, seconds, strict=True)]
    )


def test_summarise_fields_gives_the_seeds_medians_and_spread():
    summary = _record("tensor", [1.0, 3.0, 2.0])
    assert summary["seeds"] == [0, 1, 2] and summary["seconds_per_episode"] == 2.0
    assert summary["eval_return_spread"] == 2.0 and len(summary["runs"]) == 3


def test_time_ratio_pairs_runs_of_the_same_seeds_and_settings():
    spread, per = time_ratio(_record("transition", [2.0, 2.2, 2.1]), _record("tensor", [1.0] * 3))
    assert per == "per episode" and (spread.low, spread.high) == (2.0, 2.2)
    assert (
        unpaired_reason(_record("transition", [2.0], (0,)), _record("tensor", [1.0], (0,))) is None
    )


def test_time_ratio_refuses_runs_that_did_not_run_alike():
    other_seeds = _record("tensor", [1.0, 1.0], seeds=(0, 1))
    with pytest.raises(UsageError, match=r"different seeds \(\[0, 1, 2\] and \[0, 1\]\)"):
        time_ratio(_record("transition", [2.0] * 3), other_seeds)
    wider = _record("tensor", [1.0] * 3, hidden=512)
    with pytest.raises(UsageError, match=r"besides the buffer \(hidden\)"):
        time_ratio(_record("transition", [2.0] * 3, hidden=256), wider)


@pytest.mark.parametrize(
    ("mode", "switches"),
    [("eager", (False, False)), ("compile", (True, False)), ("cudagraphs", (True, True))],
)
def test_a_run_recorded_with_a_compile_mode_pairs_with_the_same_switches(mode, switches):
    """DDPGConfig's compile was once a mode; a record written then reads as the two switches
    that replaced it: it pairs with a newer run of the same switches, and no other."""
    compile, cudagraphs = switches
    old = _record("transition", [2.0], (0,), compile=mode)
    same = _record("tensor", [1.0], (0,), compile=compile, cudagraphs=cudagraphs)
    assert unpaired_reason(old, same) is None
    other = _record("tensor", [1.0], (0,), compile=not compile, cudagraphs=False)
    assert "besides the buffer (compile" in unpaired_reason(old, other)
