"""Notebooks 00-02's sentences and pictures: read from the numbers, right in every branch."""

from collections import Counter
from types import SimpleNamespace

import matplotlib

matplotlib.use("agg")

import pytest

from hetero_tutorial.core.placement import placement
from hetero_tutorial.notebook import baseline_report, profile_report, step_drift
from hetero_tutorial.notebook.figure_audit import problems
from hetero_tutorial.profiling import browser, cprofiler, flamegraph, reading, stacks
from hetero_tutorial.rl.ppo.config import PPOConfig


def _run(evaluations, steps=100_000, horizon=None):
    config = PPOConfig.tuned("CartPole-v1", total_steps=steps, anneal_steps=horizon)
    return SimpleNamespace(evaluations=evaluations, env_steps=steps, config=config)


def test_a_run_that_stayed_solved_is_told_from_its_last_three_evaluations():
    run = _run([(0, 20.0), (8192, 500.0), (16384, 480.0), (24576, 500.0), (32768, 500.0)])
    text = baseline_report.learning_sentence(run)
    assert "best greedy return 500.0 (at 8,192 steps), final 500.0" in text
    assert "stayed solved" in text and "480.0, 500.0, 500.0" in text


def test_a_run_that_solved_and_forgot_says_so():
    run = _run([(0, 20.0), (8192, 500.0), (16384, 300.0), (24576, 500.0), (32768, 140.0)])
    text = baseline_report.learning_sentence(run)
    assert "did not stay there" in text and "final 140.0" in text
    assert "never reached" in baseline_report.learning_sentence(_run([(0, 20.0), (8192, 200.0)]))


def test_a_run_cut_before_its_horizon_says_how_much_step_size_it_had_left():
    cut = _run([(0, 20.0), (4096, 480.0)], 20_480, horizon=100_000)  # 80 of 391 iterations
    text = baseline_report.learning_sentence(cut)
    assert "trained 20,480 of the 100,000 steps" in text and "with 80% of" in text
    whole = baseline_report.learning_sentence(_run([(0, 20.0), (4096, 480.0)], 20_480))
    assert "steps over which" not in whole
    cut.config = PPOConfig.tuned("CartPole-v1", total_steps=20_480, anneal_steps=100_000,
                                 anneal_clip=False)  # fmt: skip
    assert "the learning rate decays: " in baseline_report.learning_sentence(cut)


def _horizons(*outcomes):
    """Runs keyed by horizon, each 20,480 steps, from (horizon, evaluations) pairs."""
    return {h: _run(evaluations, 20_480, horizon=h) for h, evaluations in outcomes}


def test_the_horizon_sentence_names_the_horizon_that_reached_the_goal_and_the_one_that_did_not():
    runs = _horizons((20_480, [(0, 30.0), (4096, 221.0)]), (100_000, [(0, 30.0), (4096, 485.8)]))
    text = baseline_report.horizon_sentence(runs)
    assert "decayed over 20,480 steps (1% left in the last iteration), it never reached 475" in text
    assert "decayed over 100,000 steps (80% left" in text and "reached 475 at 4,096" in text
    assert "only the run decayed over 100,000 steps reached 475" in text
    assert "| never |" in baseline_report.horizon_table(runs).data
    both = _horizons((20_480, [(4096, 480.0)]), (100_000, [(4096, 490.0)]))
    assert "changed when, not whether" in baseline_report.horizon_sentence(both)
    neither = _horizons((20_480, [(4096, 100.0)]), (100_000, [(4096, 200.0)]))
    assert "No horizon reached 475" in baseline_report.horizon_sentence(neither)


def test_a_title_names_the_device_a_preset_really_used():
    fallback = placement("all-accelerator", None)
    label = baseline_report.plan_label(fallback)
    if fallback.accelerator_missing:
        assert label == "all-accelerator (on the CPU here)"
    else:
        assert label == "all-accelerator"
    assert baseline_report.plan_label(placement("all-cpu")) == "all-cpu"


def test_drift_wider_than_the_iqrs_is_said_and_given_as_a_range():
    first = {"median_s": 30e-6, "iqr_s": 0.3e-6}
    second = {"median_s": 45e-6, "iqr_s": 0.5e-6}
    text = step_drift.drift_sentence(first, second, 90.0)
    assert "90 s apart" in text and "the medians lie 1.50x apart" in text
    assert "wider than either timing's own spread" in text
    steady = step_drift.drift_sentence(first, {"median_s": 30.1e-6, "iqr_s": 1e-6}, 600.0)
    assert "10.0 min apart" in steady and "stayed within" in steady


def test_drift_names_an_earlier_run_on_this_kind_of_machine():
    record = SimpleNamespace(
        hardware="AMD EPYC (2 cores, no GPU)",
        provenance={"date": "2026-12-01T10:16:45+00:00"},
        data={"policy_step": {"cpu": {"median_s": 60e-6}}},
    )
    first = {"median_s": 30e-6, "iqr_s": 0.3e-6}
    text = step_drift.drift_sentence(first, first, 5.0, [record])
    earlier = "An earlier run on this kind of machine (AMD EPYC (2 cores, no GPU), 2026-12-01 10:16"
    assert earlier in text
    assert "2.00x this run's first timing" in text


@pytest.mark.parametrize(
    ("label", "chars", "shown"),
    [
        ("rollout: PPOTrainer.iteration (ppo/trainer.py:80)", 60, None),
        ("rollout: PPOTrainer.iteration (ppo/trainer.py:80)", 10, "rollout"),
        ("SyncVectorEnv.step (vector/sync_vector_env.py:12)", 20, "SyncVectorEnv.step"),
        ("SyncVectorEnv.step (vector/sync_vector_env.py:12)", 12, "SyncVector.."),
        ("SyncVectorEnv.step (vector/sync_vector_env.py:12)", 5, ""),
    ],
)
def test_flame_graph_labels_are_whole_words_or_nothing(label, chars, shown):
    assert flamegraph.fitting_label(label, chars) == (label if shown is None else shown)


def test_no_flame_graph_label_is_a_stub():
    stack = ("rollout: PPOTrainer.iteration (ppo/trainer.py:80)", "C (a/b.py:1)")
    svg = flamegraph.flamegraph_svg(Counter({stack: 1, ("update: x (a/b.py:2)",): 300}), "t")
    assert ">r..<" not in svg and ">C..<" not in svg


def test_the_series_instrumentation_is_not_pytorchs_cost_per_call():
    for text in (
        "_maybe_cupti_monitor (torch/autograd/profiler.py:844)",
        "record_function.__enter__ (torch/autograd/profiler.py:770)",
        "PhaseTimer.phase (core/timing.py:200)",
    ):
        assert reading.kind_of(stacks.Frame.parse(text)) == "instrumentation"
    module = "Module._call_impl (modules/module.py:1784)"
    assert reading.kind_of(stacks.Frame.parse(module)) == "per call"


def test_the_per_phase_panel_draws_the_phases_even_without_transfers():
    runs = {
        "all-accelerator": {
            "transfer_share": 0.0,
            "transfer_share_stderr": 0.01,
            "transfer_share_by_phase": {"rollout": 0.0, "update": 0.0},
            "samples_by_phase": {"rollout": 300, "update": 700},
        }
    }
    assert problems(profile_report.transfer_share_bars(runs, article=0.37)) == []


def test_plans_on_the_same_devices_are_said_to_share_one_graph():
    cpu = placement("all-cpu")
    text = profile_report.plans_line({"all-cpu": object()}, {"all-cpu": cpu, "hybrid": cpu})
    assert "resolved to the same devices here (cpu)" in text and "stands for hybrid" in text
    both = {"a": object(), "b": object()}
    assert profile_report.plans_line(both, {"a": cpu, "b": cpu}).startswith("Each plan's")


def _profile(rollout: int, update: int, timer: dict[str, float]):
    samples = {"rollout": rollout, "update": update}
    total = rollout + update
    shares = SimpleNamespace(
        samples=samples, total=total, phase_share=lambda: {k: v / total for k, v in samples.items()}
    )
    return SimpleNamespace(shares=shares, phase_seconds=timer, rate=1000)


def test_a_sampler_that_drops_rollout_stacks_is_caught_against_its_own_runs_timer():
    dropped = _profile(200, 800, {"rollout": 3.0, "update": 7.0})  # 20% sampled, 30% timed
    paused = _profile(390, 610, {"rollout": 6.0, "update": 9.0})  # 39% sampled, 40% timed
    text = profile_report.sampling_sentence(dropped, paused)
    assert "drops rollout stacks here" in text and "took 1.50x as long: one run each" in text
    assert "C5's share still reads the recording without pauses" in text
    fine = _profile(295, 705, {"rollout": 3.0, "update": 7.0})
    # 29.5% against 30%, 39% against 40%: each inside its interval, their gaps in the noise
    agree = profile_report.sampling_sentence(fine, paused)
    assert "the timer lies inside it (agreement held)" in agree and "no clear effect" in agree
    # a paused run that was faster is timed, not explained: nothing said of the machine
    quick = _profile(390, 610, {"rollout": 2.6, "update": 3.9})
    said = profile_report.sampling_sentence(fine, quick)
    assert "took 0.65x as long, not longer" in said and "machine" not in said


def test_the_environments_share_is_revealed_only_once_the_exercise_is_solved():
    profile = SimpleNamespace(shares=SimpleNamespace(phase_share=lambda: {"rollout": 0.33}))
    assert profile_report.reveal_lines(None, 0.2, profile) == [
        "Solve the exercise above, then run this cell to compare with your guess."
    ]
    solved = profile_report.reveal_lines(0.25, 0.24, profile)
    assert "25% of training (your function); the whole rollout: 33%" in solved[0]
    assert "within 20% of your guess of 24.0%" in solved[1]


def test_the_four_tools_sit_in_one_table_with_what_each_counts():
    spy = _profile(300, 700, {"rollout": 3.2, "update": 6.8})
    cprof = SimpleNamespace(
        phase_shares=lambda: {"rollout": 0.4, "update": 0.58},
        phase_seconds={"rollout": 4.0, "update": 6.0},
    )
    ranges = [{"name": "rollout", "cpu_s": 0.28}, {"name": "update", "cpu_s": 0.72}]
    rows = profile_report.four_tools_rows(spy, cprof, ranges)
    assert [row["tool"] for row in rows] == [
        "py-spy", "phase timer", "cProfile", "phase timer", "torch.profiler"
    ]  # fmt: skip
    assert rows[1]["rollout"] == pytest.approx(0.32) and rows[4]["rollout"] == pytest.approx(0.28)
    text = profile_report.four_tools_sentence(rows)
    assert "from 28% (torch.profiler" in text and "to 40% (cProfile" in text
    assert (
        "Under cProfile the same timer gives the rollout 40% against the unprofiled timer's" in text
    )
    assert "32%, 8.0 points apart: with no second run of the timer" in text  # no spread: no verdict
    assert "| py-spy | stack samples" in profile_report.four_tools_table(rows).data


def test_snakeviz_is_seen_and_nothing_outlives_the_picture(tmp_path):
    if browser.chromium() is None:
        pytest.skip(browser.MISSING)
    config = PPOConfig.tuned(
        "CartPole-v1", total_steps=128, num_envs=2, num_steps=64, hidden=16, minibatch_size=64
    )
    cprof = cprofiler.cprofile_ppo(config, placement("all-cpu"), out_dir=tmp_path)
    before = set(browser.child_processes())
    picture = cprofiler.snakeviz_picture(cprof.path, timeout=60)
    assert picture.read_bytes().startswith(b"\x89PNG")
    assert set(browser.child_processes()) <= before  # the server and the browser are gone


def test_without_a_browser_the_sunburst_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(browser, "chromium", lambda: None)
    view = profile_report.snakeviz_view(SimpleNamespace(path=tmp_path / "run.prof"))
    assert browser.MISSING in view.data and "snakeviz" in view.data


def test_native_frames_are_chosen_only_where_an_accelerator_runs_and_py_spy_reads_them(
    monkeypatch,
):
    from hetero_tutorial.core import devices
    from hetero_tutorial.profiling import pyspy

    asked = []

    def status(timeout=30.0, native=False):
        asked.append(native)
        return pyspy.PySpyStatus(True, "ok")

    monkeypatch.setattr(pyspy, "py_spy_status", status)
    monkeypatch.setattr(devices, "accelerator", lambda: None)
    assert not pyspy.native_sampling_works() and asked == []  # nothing to see on a CPU
    monkeypatch.setattr(devices, "accelerator", lambda: "cuda:0")
    assert pyspy.native_sampling_works() and asked == [True]
    monkeypatch.setattr(
        pyspy, "py_spy_status", lambda timeout=30.0, native=False: pyspy.PySpyStatus(False, "no")
    )
    assert not pyspy.native_sampling_works()
