"""DDPG runs of two buffer designs compare seed by seed only when they ran alike."""

import pytest

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.studies.ddpg_buffers import summarise_fields, time_ratio, unpaired_reason


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


def test_the_typed_rows_read_committed_records_back_and_write_the_same_fields():
    """A study hands its rows to a report as dataclasses; the records in data/reference/ read
    back into them, and write out the fields they were read from, key for key and in order."""
    from hetero_tutorial.core import results
    from hetero_tutorial.studies.buffer_rows import BufferStudy
    from hetero_tutorial.studies.ddpg_buffers import DDPGSummary

    buffers = results.load_references("bench.buffers")
    ddpg = results.load_references("bench.ddpg")
    assert buffers and ddpg
    for record in buffers:
        study = BufferStudy.from_fields(record.data)
        assert study.rows and all(row.sample_transitions_per_s > 0 for row in study.rows)
        assert list(study.fields().items()) == list(record.data.items())
    for record in ddpg:
        summary = DDPGSummary.from_fields(record.data)
        assert all(run.total_steps > run.learning_starts for run in summary.runs)
        assert list(summary.fields().items()) == list(record.data.items())
