"""Notebook 06's package side: the GPU table (live and from reference records), the
sentences it prints from a study, and findings that stay silent with one seed."""

import pytest

from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.notebook import overlap_report
from hetero_tutorial.notebook.exercises import UNSOLVED
from hetero_tutorial.studies import overlap, overlap_findings


def _row(plan="overlapped", seed=0, lag=1, curve=((10, -1.0),), **extra):
    row = {
        "plan": plan,
        "backend": None if plan == overlap.SEQUENTIAL else "mp",
        "workers": 0 if plan == overlap.SEQUENTIAL else 1,
        "max_policy_lag": None if plan == overlap.SEQUENTIAL else lag,
        "seed": seed,
        "gpu_percent": 40.0,
        "speedup_vs_sequential": 1.0 if plan == overlap.SEQUENTIAL else 1.3,
        "learning_curve": list(curve),
    }
    return row | extra


def _entry(
    plan="overlapped",
    lag=1,
    speed=(1.4, 1.3, 1.5),
    returns=(-100.0, 10.0),
    seeds=5,
    ideal=1.45,
    by_seed=(-110.0, -105.0, -100.0, -95.0, -90.0),
    backend="mp",
):
    return {
        "plan": plan,
        "backend": backend if plan != overlap.SEQUENTIAL else None,
        "workers": 1,
        "max_policy_lag": lag,
        "seeds": seeds,
        "speedup_vs_sequential": speed[0],
        "speedup_low": speed[1],
        "speedup_high": speed[2],
        "ideal_speedup": ideal,
        "share_of_ideal": speed[0] / ideal,
        "eval_return_mean": returns[0],
        "eval_return_spread": returns[1],
        "eval_returns_by_seed": list(by_seed),
    }


def _study(rows, summary=()):
    return {"rows": rows, "summary": list(summary), "seeds": sorted({r["seed"] for r in rows})}


def test_the_gpu_table_shows_the_first_seeds_runs_with_their_utilisation():
    rows = [_row(overlap.SEQUENTIAL, gpu_percent=23.0), _row(gpu_percent=48.0), _row(seed=1)]
    text = overlap_report.gpu_table(_study(rows)).data
    assert "| sequential | 23 | 1.00x |" in text and "| mp, 1 worker, lag 1 | 48 | 1.30x |" in text
    assert text.count("\n|") == 3  # header rule and seed 0's two runs, not seed 1's


def test_gpu_references_are_a_table_per_machine_or_a_sentence_saying_there_are_none(monkeypatch):
    monkeypatch.setattr(results, "load_references", lambda kind, with_accelerator: [])
    assert overlap_report.gpu_references().data == results.NO_ACCELERATOR_REFERENCES
    fingerprint = {"accelerator": {"type": "cuda", "name": "Test GPU"}}
    provenance = {"fingerprint": fingerprint, "date": "2026-01-01", "command": "t", "quick": False}
    record = results.Record("bench.overlap", {"summary": [_entry()]}, provenance)
    monkeypatch.setattr(results, "load_references", lambda kind, with_accelerator: [record])
    assert "| Test GPU | mp, 1 worker, lag 1 | 1.40x |" in overlap_report.gpu_references().data


def test_phase_times_are_means_over_the_sequential_runs_only():
    def timed(rollout, update, plan=overlap.SEQUENTIAL, seed=0):
        return _row(plan, seed, rollout_seconds_per_iteration=rollout,
                    update_seconds_per_iteration=update)  # fmt: skip

    rows = [timed(0.2, 1.0), timed(0.4, 3.0, seed=1), timed(9.0, 9.0, plan="overlapped")]
    assert overlap.sequential_phase_times(_study(rows)) == pytest.approx((0.3, 2.0))
    sentence = overlap_findings.phase_times_sentence(_study(rows))
    assert "R = 300.0 ms" in sentence and "U = 2000.0 ms" in sentence


def test_learning_curves_group_each_configurations_seeds():
    rows = [
        _row(overlap.SEQUENTIAL, curve=[(1, 0.0)]),
        _row(lag=0, curve=[(1, 1.0)]),
        _row(lag=1, curve=[(1, 2.0)]),
        _row(lag=1, seed=1, curve=[(1, 3.0)]),
    ]
    curves = overlap.learning_curves(_study(rows), "mp", 1, [0, 1])
    assert curves == {
        "sequential": [[(1, 0.0)]],
        "mp, 1 worker, lag 0": [[(1, 1.0)]],
        "mp, 1 worker, lag 1": [[(1, 2.0)], [(1, 3.0)]],
    }


def test_the_exercise_compares_with_the_summarys_ideal_not_one_recomputed():
    sentence = overlap_findings.ideal_vs_measured([_entry(ideal=1.6)], workers=1, max_policy_lag=1)
    assert sentence == (
        "mp, 1 worker, lag 1: speed-up: 1.40x (seeds 1.30-1.50x), inside its ideal "
        "(at most 1.60x): held"
    )
    three = [_entry(ideal=1.6, seeds=3)]  # the same range over three seeds
    assert overlap_findings.ideal_vs_measured(three, workers=1, max_policy_lag=1) == (
        "mp, 1 worker, lag 1: speed-up: 1.40x (seeds 1.30-1.50x), inside its ideal "
        "(at most 1.60x): no verdict, 3 repeats, and a verdict needs 5"
    )
    with pytest.raises(UsageError, match="mp, 1 worker, lag 1"):
        overlap_findings.ideal_vs_measured([_entry()], workers=2, max_policy_lag=1)


def test_a_run_past_its_ideal_says_the_ideal_broke_and_what_the_run_can_check():
    """06's quick run reached 1.47x against an ideal of 1.36x: the sentence says it broke,
    by how much, and names the cause its own phase times show, never "the gap"."""
    past = _entry(ideal=1.36, speed=(1.47, 1.44, 1.50)) | {
        "sequential_phase_s": [0.0855, 0.0307],
        "own_phase_s": [0.070, 0.025],
        "own_phase_ideal": 1.66,
        "dropped_rollouts": 0,
    }
    words = str(overlap_findings.ideal_finding(past))
    assert "above its ideal (at most 1.36x) by 8%: the expectation did not hold" in words
    assert "the expectation did not hold" in words
    assert (
        "its own phases (70.0 and 25.0 ms) set a ceiling of 1.66x" in words
        and "dropped" not in words
    )
    slower_parts = past | {"own_phase_ideal": 1.2}
    assert "no cause this run can check" in str(overlap_findings.ideal_finding(slower_parts))
    one_seed = past | {"seeds": 1}
    assert "no verdict" in str(overlap_findings.ideal_finding(one_seed))
    few = str(overlap_findings.ideal_finding(past | {"seeds": 3}))  # the same range, 3 seeds
    assert "above its ideal (at most 1.36x) by 8%" in few and "did not hold" not in few
    assert few.endswith("no verdict, 3 repeats, and a verdict needs 5")


def test_one_seed_gives_no_speed_verdict():
    one = _entry(speed=(1.4, 1.4, 1.4), seeds=1)
    assert "(one seed)" in overlap_findings.speed_finding(one)
    assert "no verdict" in overlap_findings.speed_finding(one)
    assert "faster" not in overlap_findings.speed_finding(one)
    assert "faster" in overlap_findings.speed_finding(_entry())


def test_learning_verdicts_pair_lag_one_with_lag_zero_and_ray_with_processes():
    worse = _entry(by_seed=(-160.0, -155.0, -150.0, -145.0, -140.0))
    ray = _entry(backend="ray", by_seed=(-155.0, -150.0, -145.0, -140.0, -130.0))
    study = {"rows": [], "env_id": "Acrobot-v1", "summary": [_entry(lag=0), worse, ray]}
    lag, backends = overlap_findings.learning_findings(study)
    assert lag.startswith("mp, 1 worker, lag 1 against lag 0: mp, 1 worker, lag 0 learned better")
    assert backends.startswith("ray, 1 worker, lag 1 against processes: no difference detected")
    three = {**study, "summary": [_entry(lag=0, by_seed=(-110.0, -100.0, -90.0)),
                                  _entry(by_seed=(-160.0, -150.0, -140.0))]}  # fmt: skip
    (few,) = overlap_findings.learning_findings(three)[:1]
    assert few.endswith("no verdict (3 seeds per arm: a learning verdict needs 5 or more)")


def test_speed_verdicts_name_an_effect_only_when_every_seed_agrees():
    assert "faster" in overlap_findings.speed_finding(_entry())
    assert "slower" in overlap_findings.speed_finding(_entry(speed=(0.9, 0.8, 0.95)))
    assert "no clear effect" in overlap_findings.speed_finding(_entry(speed=(1.1, 0.9, 1.2)))
    # the same ranges over three seeds: no side named, and no "no clear effect" either
    for speed in ((1.4, 1.3, 1.5), (0.9, 0.8, 0.95), (1.1, 0.9, 1.2)):
        few = overlap_findings.speed_finding(_entry(speed=speed, seeds=3))
        assert few.endswith("no verdict, 3 repeats, and a verdict needs 5")
        assert not any(word in few for word in ("faster", "slower", "no clear effect"))


def test_the_learning_verdict_follows_the_series_rule_and_never_says_no_worse():
    lag0 = _entry(lag=0)
    close = overlap_findings.learning_finding(
        lag0, _entry(by_seed=(-105, -100, -95, -90, -80)), "Acrobot-v1"
    )
    assert close.startswith("no difference detected") and "no worse" not in close
    single = overlap_findings.learning_finding(
        _entry(by_seed=(-90.0,)), _entry(lag=0, by_seed=(-100.0,)), "Acrobot-v1"
    )
    assert single.startswith("no verdict (1 seed per arm")
    flat = overlap_findings.learning_finding(
        _entry(by_seed=(-500.0,) * 5), _entry(lag=0, by_seed=(-500.0,) * 5), "Acrobot-v1"
    )
    assert flat.startswith(("no verdict (neither learned", "quick mode: no learning verdict"))


def test_others_load_is_left_out_for_runs_too_short_to_tell():
    short = [{"other_load_cores": None, "run_seconds": 0.6, "load_interval_seconds": 0.5}]
    assert "not reported" in overlap_findings.load_finding({"rows": short, "cores": 2})
    long = [{"other_load_cores": 0.1, "run_seconds": 9.0}, *short]
    found = overlap_findings.load_finding({"rows": long, "cores": 2})
    assert "0.10 of the 2 cores" in found and "1 of 2 runs" in found


def test_the_gpu_section_is_live_then_recorded_then_nothing(monkeypatch):
    monkeypatch.setattr(results, "load_references", lambda kind, with_accelerator: [])
    rows = [_row(overlap.SEQUENTIAL, gpu_percent=23.0), _row(gpu_percent=48.0)]
    assert "| sequential | 23 |" in overlap_report.gpu_section(_study(rows), "cuda").data
    assert overlap_report.gpu_section(_study(rows), None) is None


def test_a_study_is_resolved_once_every_speed_up_is_on_one_side_of_one():
    sequential = _entry(plan=overlap.SEQUENTIAL)
    lag0 = _entry(lag=0, by_seed=(-500.0, -500.0))
    quick = {"rows": [], "env_id": "Acrobot-v1"}
    faster = _entry(by_seed=(-500.0, -500.0))
    assert overlap_findings.resolved(quick | {"summary": [sequential, lag0, faster]})
    straddles = _entry(speed=(1.1, 0.9, 1.2), by_seed=(-500.0, -500.0))
    assert not overlap_findings.resolved(quick | {"summary": [sequential, straddles]})


def test_rounds_of_one_seed_merge_into_one_study():
    def round_of(seed):
        rows = [_row(overlap.SEQUENTIAL, seed=seed), _row(seed=seed)]
        for row in rows:
            row |= {"env_steps_per_s": 1.0, "eval_return_mean": -500.0, "other_load_cores": None}
        rows[1] |= {"ideal_speedup": 1.4, "share_of_ideal": 0.9, "learner_idle_share": 0.1,
                    "worker_idle_share": 0.1, "dropped_rollouts": 0, "own_phase_ideal": 1.5,
                    "sequential_phase_s": [0.08, 0.03], "own_phase_s": [0.07, 0.02]}  # fmt: skip
        return {"seeds": [seed], "rows": rows, "timelines": {"t": seed}, "env_id": "Acrobot-v1",
                "seconds": 90.0 + seed}  # fmt: skip

    study = overlap.merge_studies([round_of(0), round_of(1)])
    assert study["seeds"] == [0, 1] and len(study["rows"]) == 4 and study["timelines"] == {"t": 0}
    assert [e["seeds"] for e in study["summary"]] == [2, 2]
    assert study["seconds"] == 181.0


def test_a_further_seed_runs_only_while_unresolved_and_within_the_budget():
    sequential = _entry(plan=overlap.SEQUENTIAL)
    straddles = _entry(speed=(1.1, 0.9, 1.2), by_seed=(-500.0, -500.0))
    study = {"rows": [], "env_id": "Acrobot-v1", "config": {"total_steps": 150_000},
             "seeds": [0, 1], "seconds": 180.0, "summary": [sequential, straddles]}  # fmt: skip
    assert overlap_findings.further_seed(study, 2, None) is None
    assert overlap_findings.further_seed(study, 2, 270.0) is None  # 180 s + 90 s fits
    why = overlap_findings.further_seed(study, 2, 240.0)
    assert why.startswith("seed 2 not run: a round takes about 90 s here")
    assert "--env Acrobot-v1 --steps 150000 --seeds 0 1 2`" in why
    faster = _entry(by_seed=(-500.0, -500.0))
    settled = study | {"summary": [sequential, faster]}
    assert overlap_findings.further_seed(settled, 2, None).startswith("every verdict is resolved")


def test_the_tables_before_the_exercise_leave_out_the_ideal_it_asks_for():
    summary = [_entry()]
    assert "ideal" in overlap_report.summary_table(summary).data
    assert "ideal" not in overlap_report.summary_table(summary, ideal=False).data


def test_the_learners_guesses_are_set_beside_the_ideal_and_the_lags():
    summary = [_entry(ideal=1.5)]
    key = {"backend": "mp", "workers": 1, "max_policy_lag": 1}
    assert "1.50x, within 10% of your guess" in overlap_report.ideal_guess_line(1.4, summary, **key)
    assert "was 1.3x it" in overlap_report.ideal_guess_line(2.0, summary, **key)
    # Exercise 1's reveal: the ideal only once the exercise is solved
    assert overlap_report.ideal_reveal(1.4, None, summary, **key) == UNSOLVED
    solved = overlap_report.ideal_reveal(1.4, 1.5, summary, **key)
    assert "1.50x, within 10% of your guess" in solved and "mp, 1 worker, lag 1" in solved
    lags = overlap_report.lag_guess_line(1, {0: 1, 1: 1, 2: 14}, bound=2)
    assert "(14 of 16): 2, not 1, as you predicted" in lags


def test_the_guards_reading_of_the_whole_study_is_printed(monkeypatch):
    from hetero_tutorial.core import machine_load

    load = {"wait_share": 0.012, "others_on_study_cpus": 0.02, "other_cores": 0.05}
    reading = machine_load.Busyness("the overlap study", 24.7, load)
    monkeypatch.setattr(machine_load, "latest", lambda: reading)
    line = overlap_report.guard_line()
    assert "the overlap study ran (24.7 s), its threads waited 0.012 s for a CPU" in line
    assert "quiet enough to judge" in line and "read by run-queue wait" in line
    busy = machine_load.Busyness(
        "the overlap study", 24.7, load | {"wait_share": 0.5, "others_on_study_cpus": 0.6}
    )
    monkeypatch.setattr(machine_load, "latest", lambda: busy)
    assert "not judged" in overlap_report.guard_line()
    monkeypatch.setattr(machine_load, "latest", lambda: None)
    assert "no reading" in overlap_report.guard_line()


def test_a_study_of_fewer_than_five_seeds_is_never_resolved():
    """Two seeds both past 1 give no verdict (the series' minimum is five), so another seed
    could still change one: the study keeps adding seeds within its budget."""
    sequential = _entry(plan=overlap.SEQUENTIAL, seeds=2)
    faster = _entry(speed=(1.4, 1.3, 1.5), seeds=2, by_seed=(-500.0, -500.0))
    quick = {"rows": [], "env_id": "Acrobot-v1"}
    assert not overlap_findings.resolved(quick | {"summary": [sequential, faster]})
    five = _entry(speed=(1.4, 1.3, 1.5), seeds=5, by_seed=(-500.0,) * 5)
    assert overlap_findings.resolved(quick | {"summary": [sequential, five]})


@pytest.mark.parametrize(("lag0_speed", "named"), [(1.26, True), (1.02, False)])
def test_a_lag0_run_faster_than_the_sequential_one_names_the_sequential_run_slow(lag0_speed, named):
    """06's run: ray at lag 0 makes the sequential plan's decisions and ran 1.26x it, so the
    runs past their ideal name the sequential run as slow."""
    lag1 = _entry(ideal=1.47, speed=(1.83, 1.80, 1.86))
    lag0 = _entry(lag=0, ideal=1.0, speed=(lag0_speed, lag0_speed, lag0_speed))
    words = str(overlap_findings.ideal_finding(lag1, summary=[lag1, lag0]))
    cause = "the sequential run ran slow: mp, 1 worker, lag 0, which makes the sequential plan's"
    assert (cause in words) is named
    assert ("no cause this run can check" in words) is not named


def test_a_run_is_no_evidence_of_its_own_cause_and_a_slower_twin_clears_the_sequential_run():
    """06's quick run: mp at lag 0 ran 1.05x, past its ideal of 1.00x, and the finding named
    the sequential run slow because mp at lag 0 (itself) ran 1.05x it; ray at lag 0, the
    same decisions, ran 0.90x. A run is not its own witness, and a twin at or under the
    margin says the sequential run was not shown slow."""
    mp = _entry(lag=0, ideal=1.0, speed=(1.05, 1.05, 1.05))
    ray = _entry(lag=0, ideal=1.0, speed=(0.90, 0.90, 0.90), backend="ray")
    alone = str(overlap_findings.ideal_finding(mp, summary=[mp]))
    assert "ran slow" not in alone and "no cause this run can check explains it" in alone
    twin = str(overlap_findings.ideal_finding(mp, summary=[mp, ray]))
    assert "ran slow" not in twin
    fast = _entry(lag=0, ideal=1.0, speed=(1.30, 1.30, 1.30), backend="ray")
    lag1 = _entry(ideal=1.2, speed=(1.5, 1.5, 1.5))
    quicker = _entry(lag=0, ideal=1.0, speed=(1.10, 1.10, 1.10))
    both = str(overlap_findings.ideal_finding(lag1, summary=[lag1, quicker, fast]))
    assert "every other lag-0 run with one worker, which makes the sequential plan's very " in both
    assert "decisions, ran at least 1.10x its speed" in both
    slow = str(overlap_findings.ideal_finding(lag1, summary=[lag1, ray, fast]))
    assert "ran slow" not in slow  # one twin of two ran under the margin


def test_a_cause_every_run_shares_is_said_once_above_them():
    """06's quick run: each of four lines repeated one cause; a cause every run outside its
    ideal shares (the sequential plan's drift between its two runs) is said once, above."""
    lag0 = _entry(lag=0, ideal=1.0, speed=(1.20, 1.20, 1.20)) | {"sequential_phase_s": [0.05, 0.02]}
    lag1 = _entry(ideal=1.38, speed=(1.6, 1.6, 1.6)) | {"sequential_phase_s": [0.05, 0.02]}
    lanes = [{"kind": k, "start": 0.0, "end": s} for k, s in (("rollout", 0.04), ("update", 0.016))]
    text = overlap_report.ideal_table([lag0, lag1], lanes * 3).data
    assert text.count("the sequential plan's phases took 1.25x") == 1
    assert "Every run outside its ideal: the sequential plan's phases took" in text
    assert "- mp, 1 worker, lag 0, above its ideal by 20%:" in text


def test_an_ideal_table_with_every_run_inside_has_no_causes_to_list():
    inside = [_entry(lag=0, ideal=1.5, speed=(1.02, 0.98, 1.04)), _entry(ideal=1.6)]
    text = overlap_report.ideal_table(inside).data
    assert "inside: held" in text and "Every run outside" not in text and "\n- " not in text


@pytest.mark.parametrize(("timeline", "named"), [((0.0417, 0.0171), True), ((0.055, 0.020), False)])
def test_a_sequential_plan_faster_in_its_timeline_run_explains_a_run_past_its_ideal(
    timeline, named
):
    """06's quick run: mp lag 1 at 1.65x against an ideal of 1.36x, the study's sequential
    R + U = 77.6 ms, the timeline's separate run of the same plan 58.8 ms (1.32x faster):
    the drift between two runs of one plan covers the excess. A drift of 3% does not."""
    past = _entry(ideal=1.36, speed=(1.65, 1.65, 1.65)) | {"sequential_phase_s": [0.0569, 0.0207]}
    words = str(overlap_findings.ideal_finding(past, timeline=timeline))
    cause = "the sequential plan's phases took 1.32x as long in the study (means) as in the"
    assert (cause in words) is named
    assert ("no cause this run can check" in words) is not named
    lanes = [
        {"kind": kind, "start": 0.0, "end": s}
        for kind, s in zip(("rollout", "update"), timeline, strict=True)
    ]
    table = overlap_report.ideal_table([past], lanes * 3).data
    assert (cause in table) is named
