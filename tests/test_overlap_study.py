"""The overlap study (studies/overlap*.py), the bench behind it, notebook 06's solutions and
plots: the ideal speed-up, sentences from numbers, the record's fields."""

import matplotlib.pyplot as plt
import pytest

from hetero_tutorial.app import cli
from hetero_tutorial.core import results
from hetero_tutorial.notebook import overlap_figures, overlap_report
from hetero_tutorial.notebook.solutions import overlapped as solutions
from hetero_tutorial.studies import overlap

ROW_FIELDS = (
    "backend",
    "workers",
    "max_policy_lag",
    "seed",
    "env_steps_per_s",
    "speedup_vs_sequential",
    "ideal_speedup",
    "learner_idle_share",
    "worker_idle_share",
    "policy_lag_histogram",
    "dropped_rollouts",
    "eval_return_mean",
)
"""What every overlapped row of a bench.overlap record carries."""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((7.2, 3.3, 1, 2, 1), 10.5 / 7.2),  # one worker beside the learner: rollout-bound
        ((7.2, 3.3, 2, 2, 1), 10.5 / 7.2),  # a second worker has no core of its own
        ((7.2, 3.3, 4, 8, 4), 10.5 / 3.3),  # enough workers: update-bound
        ((7.2, 3.3, 4, 8, 2), 10.5 / 3.6),  # the lag bound caps the workers that overlap
        ((7.2, 3.3, 1, 2, 0), 1.0),  # lag 0: nothing overlaps
        ((7.2, 3.3, 1, 1, 1), 1.0),  # one core: nothing runs beside the learner
    ],
)
def test_ideal_speedup_and_the_exercise_solution_agree(args, expected):
    assert overlap.ideal_speedup(*args) == pytest.approx(expected)
    assert solutions.ideal_speedup(*args) == pytest.approx(expected)


def test_predicted_lags_follow_the_schedules_rules():
    assert solutions.predicted_lags(10, 0, 2.0, 1.0) == {0: 10}
    assert solutions.predicted_lags(10, 1, 2.0, 1.0) == {0: 1, 1: 9}
    # a bound of 2 gives a third slot: a request queued behind two names older weights
    assert solutions.predicted_lags(10, 2, 2.0, 1.0) == {0: 1, 1: 1, 2: 8}
    assert solutions.predicted_lags(10, 2, 1.0, 2.0) == {0: 1, 1: 1, 2: 8}


def test_bench_overlap_records_rows_summary_timelines_and_findings(tmp_path):
    path = tmp_path / "overlap.json"
    argv = ["bench", "overlap", "--env", "CartPole-v1", "--steps", "2048", "--seeds", "0"]
    argv += ["--workers", "1", "--max-policy-lag", "0", "1", "--eval-episodes", "1"]
    assert cli.main([*argv, "--json", str(path)]) == 0
    record = results.load(path)
    assert record.kind == "bench.overlap"
    rows = record.data["rows"]
    assert [r["plan"] for r in rows] == ["sequential", "overlapped", "overlapped"]
    for row in rows[1:]:
        assert set(ROW_FIELDS) <= set(row)
    assert rows[1]["ideal_speedup"] == 1.0  # lag 0 overlaps nothing
    assert "targets" not in record.data  # acceptance targets are tests, not findings
    assert any("sequential plan" in v for v in record.data["findings"])
    assert "mp, 1 worker, lag 1" in record.data["timelines"]
    # The notebook's figures draw from the record's fields.
    summary = record.data["summary"]
    overlap_figures.speedup_by_workers(summary)
    overlap_figures.gantt({"overlapped": record.data["timelines"]["mp, 1 worker, lag 1"]})
    overlap_figures.learning_by_lag({"lag 1": [rows[2]["learning_curve"]]})
    overlap_figures.clipping_by_lag(overlap.clipping_by_lag(rows))
    assert "mp, 1 worker, lag 1" in overlap_report.summary_table(summary).data
    assert "lag" in overlap_report.clipping_table(overlap.clipping_by_lag(rows)).data
    # others' load is reported where the runs were long enough to tell, else the finding says so
    said = ("other programs kept", "others' load not reported")
    assert any(v.startswith(said) for v in record.data["findings"])
    plt.close("all")


def test_the_sequential_timeline_has_a_rollout_lane_and_an_update_lane_that_alternate():
    from hetero_tutorial.rl.ppo.config import PPOConfig

    config = PPOConfig(env_id="CartPole-v1", num_envs=2, num_steps=16, minibatch_size=16)
    intervals = overlap.sequential_timeline(config, seconds=0.0)
    kinds = [interval["kind"] for interval in intervals]
    assert kinds == ["rollout", "update", "rollout", "update"]  # advantages join the rollout
    starts = [interval["start"] for interval in intervals]
    assert starts == sorted(starts) and all(i["end"] >= i["start"] for i in intervals)


def test_the_sequential_timeline_covers_the_seconds_the_overlapped_one_is_drawn_for():
    from hetero_tutorial.rl.ppo.config import PPOConfig

    config = PPOConfig(env_id="CartPole-v1", num_envs=2, num_steps=16, minibatch_size=16)
    intervals = overlap.sequential_timeline(config, seconds=0.2)
    second_rollout = [i["start"] for i in intervals if i["kind"] == "rollout"][1]
    assert intervals[-1]["end"] - second_rollout >= 0.2


def test_a_cluster_address_goes_to_the_ray_runs_and_no_local_ray_starts(monkeypatch):
    from hetero_tutorial.rl.ppo.config import PPOConfig

    calls = []
    monkeypatch.setattr(overlap, "_ray_if", lambda wanted: calls.append(("local", wanted)) or
                        __import__("contextlib").nullcontext(None))  # fmt: skip

    def fake_overlapped(*args, **kwargs):
        calls.append((kwargs["backend"], kwargs["address"]))
        raise RuntimeError("stop here")

    monkeypatch.setattr(overlap, "train_overlapped", fake_overlapped)
    config = PPOConfig(env_id="CartPole-v1", num_envs=2, num_steps=16, minibatch_size=16,
                       total_steps=32)  # fmt: skip
    with pytest.raises(RuntimeError, match="stop here"):
        overlap.overlap_study(config, backends=("ray",), lags=(1,), seeds=(0,),
                              eval_episodes=0, address="auto")  # fmt: skip
    assert calls == [("local", False), ("ray", "auto")]
