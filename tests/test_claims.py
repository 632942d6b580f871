import json

import pytest

from hetero_tutorial.app import fill_ledger, run_times
from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.results import Record, RecordError
from hetero_tutorial.ledger import claims
from hetero_tutorial.ledger import verdicts as ledger
from hetero_tutorial.ledger.claims import Status, claim, group_by_kind, judge
from hetero_tutorial.notebook.solutions.claims_ledger import speedup_and_time_saved
from tools.docs import cards, readme

GPU = {"type": "cuda", "device": "cuda:0", "name": "Test GPU"}


def _record(kind, data, gpu=True, date="2026-11-30T00:00:00+00:00"):
    fingerprint = {"accelerator": GPU if gpu else None, "cpu_model": "Test CPU", "usable_cores": 2}
    return Record(
        kind, data, {"fingerprint": fingerprint, "date": date, "command": "t", "quick": 0}
    )


def _verdict(claim_id, *records):
    return judge(claim(claim_id), group_by_kind(records))


def _grid(accelerator_over_cpu, iqr=0.05, batch=256):
    """Forward-grid cells at ``batch``: per width, the accelerator's time over the CPU's."""
    rows = []
    for width, ratio in accelerator_over_cpu.items():
        for device, seconds in (("cpu", 1.0), ("cuda:0", ratio)):
            rows.append({"device": device, "width": width, "batch_size": batch,
                         "seconds_per_call": seconds, "iqr_s": iqr * seconds,
                         "seconds_per_sample": seconds / batch})  # fmt: skip
    return rows


def _crossover(step_cpu=1.0, step_gpu=2.0, speedup=2.0, grid=None, gpu=True, iqr=0.05):
    costs = {"cpu": {"median_s": step_cpu, "iqr_s": iqr}, "env_only": {"median_s": 0.1}}
    update = {"cpu": {"median_s": speedup, "iqr_s": iqr}}
    if gpu:
        costs["cuda:0"] = {"median_s": step_gpu, "iqr_s": iqr}
        update["cuda:0"] = {"median_s": 1.0, "iqr_s": iqr}
    return _record(
        "bench.crossover",
        {
            "policy_step": costs,
            "value_update": update,
            "value_update_speedup": {"cuda:0": speedup} if gpu else {},
            "grid": grid if grid is not None else _grid({64: 2.0, 256: 0.5}),
        },
        gpu=gpu,
    )


def test_c1_c2_c3_from_the_crossover_record():
    assert _verdict("C1", _crossover(step_gpu=2.0)).status == Status.HELD
    assert _verdict("C1", _crossover(step_gpu=0.5)).status == Status.NOT_HELD
    assert _verdict("C1", _crossover(step_gpu=2.0)).ratio == 2.0
    assert _verdict("C2", _crossover(speedup=1.8)).status == Status.HELD
    assert _verdict("C2", _crossover(speedup=0.7)).status == Status.NOT_HELD
    assert _verdict("C3", _crossover()).status == Status.HELD
    never = _verdict("C3", _crossover(grid=_grid({64: 2.0, 256: 1.5})))
    assert never.status == Status.NOT_HELD and "from width never" in never.measured
    assert _verdict("C3", _crossover(grid=_grid({32: 0.5, 256: 0.5}))).status == Status.NOT_HELD
    # 0.9x at width 64 by median, inside +-25% IQRs: the crossover may lie below 128
    unclear = _verdict("C3", _crossover(grid=_grid({64: 0.9, 256: 0.5}, iqr=0.5)))
    assert unclear.status == Status.NO_CLEAR_EFFECT
    assert "within the noise at width 64" in unclear.measured
    for claim_id in ("C1", "C2", "C3"):
        assert _verdict(claim_id, _crossover(gpu=False)).status == Status.NOT_MEASURABLE
    # each device's IQR spreads the ratio: a 10% difference inside +-25% IQRs is no effect
    noisy = _verdict("C1", _crossover(step_gpu=1.1, iqr=0.5))
    assert noisy.status == Status.NO_CLEAR_EFFECT and "within the measured noise" in noisy.measured
    assert "(from the two medians' IQRs 0.68-1.80x)" in noisy.measured
    assert _verdict("C2", _crossover(speedup=1.1, iqr=0.5)).status == Status.NO_CLEAR_EFFECT


def _twice(step_cpu, again_s, iqr):
    """A crossover record of one run that timed the CPU step twice, as notebook 00 does."""
    once = _crossover(step_cpu=step_cpu, iqr=iqr, gpu=False)
    again = {"cpu": {"median_s": again_s, "iqr_s": iqr}}
    return _record("bench.crossover", {**once.data, "policy_step_again": again}, gpu=False)


def test_c1s_cpu_half_is_judged_on_any_machine():
    near = _verdict("C1-CPU", _twice(0.00035, 0.00036, 0.00001))
    assert near.status == Status.HELD and near.ratio == pytest.approx(0.355 / 0.3)
    fast = _verdict("C1-CPU", _twice(0.00005, 0.000051, 0.000003))
    assert fast.status == Status.NOT_HELD and "faster than the article's CPU" in fast.measured
    assert "half a claim" in fast.measured
    # a range that reaches past 2x the article's figure cannot say whether it held
    wide = _verdict("C1-CPU", _twice(0.0005, 0.0005, 0.0004))
    assert wide.status == Status.NO_CLEAR_EFFECT
    # one timing: runs drift past one IQR (notebook 00), so it says nothing either way
    once = _verdict("C1-CPU", _crossover(step_cpu=0.00005, iqr=0.000003, gpu=False))
    assert once.status == Status.NO_VERDICT and "one timing" in once.measured


def test_c1_cpu_of_one_run_spans_both_of_its_timings():
    """Notebook 00 times the step twice; the verdict's range holds both middle halves."""
    once = _crossover(step_cpu=0.00035, iqr=0.00001, gpu=False)
    again = {"cpu": {"median_s": 0.0009, "iqr_s": 0.00002}}
    twice = _record("bench.crossover", {**once.data, "policy_step_again": again}, gpu=False)
    verdict = _verdict("C1-CPU", twice)
    assert "timed twice in one run: 0.345-0.910 ms" in verdict.measured
    assert verdict.status == Status.NO_CLEAR_EFFECT  # the second timing reaches past 2x
    assert "drifted 2.57x apart" in verdict.measured
    assert _verdict("C1-CPU", once).status == Status.NO_VERDICT


def test_c1_cpu_spans_every_recorded_run_and_says_how_far_apart_they_are():
    # today 0.029 ms with a tiny IQR, four hours earlier 0.049 ms: the range holds both
    today = _crossover(step_cpu=0.000029, iqr=0.0000005, gpu=False)
    earlier = _record("bench.crossover", {**today.data, "policy_step": {
        "cpu": {"median_s": 0.000049, "iqr_s": 0.0000015}}}, gpu=False,
        date="2026-11-29T20:00:00+00:00")  # fmt: skip
    both = _verdict("C1-CPU", today, earlier)
    assert "0.029-0.049 ms over 2 recorded runs" in both.measured
    assert "1.7x apart" in both.measured and "at most 0.002 ms" in both.measured
    assert both.ratio == pytest.approx(0.029 / 0.3)  # the newest run's figure
    assert both.status == Status.NOT_HELD  # every run lies past the article's band
    near = _record("bench.crossover", {**today.data, "policy_step": {
        "cpu": {"median_s": 0.0002, "iqr_s": 0.0000015}}}, gpu=False,
        date="2026-11-29T20:00:00+00:00")  # fmt: skip
    assert _verdict("C1-CPU", today, near).status == Status.NO_CLEAR_EFFECT  # runs straddle it


def test_this_machine_reads_the_earlier_runs_of_its_kind_and_labels_them():
    here = _crossover(step_cpu=0.000029, iqr=0.0000005, gpu=False)
    earlier = _record("bench.crossover", {**here.data, "policy_step": {
        "cpu": {"median_s": 0.000049, "iqr_s": 0.0000015}}}, gpu=False,
        date="2026-11-29T20:00:00+00:00")  # fmt: skip
    kind = results.machine_slug(here.provenance["fingerprint"])
    by_machine = {ledger.THIS_MACHINE: group_by_kind([here]), kind: group_by_kind([earlier])}
    table = ledger.rows(by_machine)
    row = next(r for r in table if r["claim"] == "C1-CPU" and r["machine"] == ledger.THIS_MACHINE)
    assert "over 2 recorded runs" in row["measured"]
    other = next(r for r in table if r["claim"] == "C1-CPU" and r["machine"] == kind)
    assert "recorded runs" not in other["measured"]  # the earlier run alone
    assert "an earlier run on this kind of machine" in ledger.markdown(table).splitlines()[0]
    assert (
        ledger.column_label(kind, by_machine) == f"{kind}: an earlier run on this kind of machine"
    )
    assert ledger.column_label("nvidia-h200", {}) == "nvidia-h200"


def _ppo(copies):
    return _record("bench.ppo", {"placement": "all-accelerator", "copies_per_env_step": copies})


def _ddpg_placements(cpu_sps=100.0, switching_sps=80.0, copies=24.0, gpu=True, turns=None):
    """``turns``: each placement's steps/s per interleaved turn, as (all-cpu, hybrid) lists."""
    cpu_turns, switching_turns = turns or ([cpu_sps] * 5, [switching_sps] * 5)
    rows = [
        {
            "placement": "all-cpu",
            "env_steps_per_s": cpu_sps,
            "chunk_steps_per_s": cpu_turns,
            "copies_per_1000_samples": 0.0,
        },
        {
            "placement": "hybrid",
            "env_steps_per_s": switching_sps,
            "chunk_steps_per_s": switching_turns,
            "copies_per_1000_samples": copies,
        },
        {"placement": "all-accelerator", "env_steps_per_s": 90.0, "copies_per_1000_samples": 2.0},
    ]
    return _record("bench.ddpg_placements", {"rows": rows}, gpu=gpu)


def test_c4_compares_copies_per_step_of_ppo_and_ddpg():
    assert _verdict("C4", _ppo(0.25), _ddpg_placements()).status == Status.HELD
    assert _verdict("C4", _ppo(0.001), _ddpg_placements()).status == Status.NOT_HELD
    cpu_only = _ddpg_placements(gpu=False)
    assert _verdict("C4", _ppo(0.25), cpu_only).status == Status.NOT_MEASURABLE


def test_c4_is_judged_without_an_accelerator_from_copies_counted_on_meta():
    counted = {"placement": "all-accelerator", "counted_on": "meta", "copies_per_env_step": 0.27}
    ppo = _record("bench.ppo", {"placement": "all-accelerator", "copies_per_env_step": 0.0,
                                "counted_copies": counted}, gpu=False)  # fmt: skip
    ddpg = _ddpg_placements(gpu=False)
    ddpg.data["counted_copies"] = {
        "all-accelerator": {"counted_on": "meta", "copies_per_env_step": 8.0}
    }
    verdict = _verdict("C4", ppo, ddpg)
    assert verdict.status == Status.NOT_HELD and verdict.ratio == pytest.approx(0.27 / 8)
    assert "PPO 0.270, DDPG 8.000" in verdict.measured and "meta, a stand-in" in verdict.measured


def test_c7_compares_switching_ddpg_with_all_cpu():
    held = _verdict("C7", _ddpg_placements(switching_sps=85.0))
    assert held.status == Status.HELD and held.ratio == pytest.approx(0.85)
    assert "0.85x (per turn 0.85-0.85x)" in held.measured
    assert _verdict("C7", _ddpg_placements(switching_sps=120.0)).status == Status.NOT_HELD
    straddling = ([100] * 5, [90, 105, 95, 110, 100])  # turns 0.90-1.10x
    unclear = _verdict("C7", _ddpg_placements(switching_sps=98.0, turns=straddling))
    assert unclear.status == Status.NO_CLEAR_EFFECT
    assert "(within the measured noise, +-0.10x)" in unclear.measured
    # the same turns, four of them: too few for any verdict, held or unclear
    four_held, four_straddling = ([100] * 4, [85] * 4), ([100] * 4, [90, 105, 95, 110])
    for sps, turns in ((85.0, four_held), (98.0, four_straddling)):
        few = _verdict("C7", _ddpg_placements(switching_sps=sps, turns=turns))
        assert few.status == Status.NO_VERDICT and "a verdict needs 5" in few.measured
        assert "within the measured noise" not in few.measured
    # an older record: one speed per placement, so no spread, so no verdict
    one_turn = _verdict("C7", _ddpg_placements(switching_sps=50.0, turns=([], [])))
    assert one_turn.status == Status.NO_VERDICT and "no spread" in one_turn.measured


def _profile(share, missing=False, stderr=0.02, timer=0.1, native=False, date=None):
    data = {"placement": "all-accelerator", "transfer_share": share, "hidden": 128}
    data |= {"transfer_share_stderr": stderr, "timer_sync_share": timer}
    data |= {"native": native, "nonblocking": not native}  # native frames need pauses
    dated = {"date": date} if date else {}
    return _record("bench.profile", {**data, "accelerator_missing": missing}, **dated)


def test_c5_transfer_share_band():
    held = _verdict("C5", _profile(0.37))
    assert held.status == Status.HELD and "+10% in the timer's syncs" in held.measured
    assert _verdict("C5", _profile(0.05)).status == Status.NOT_HELD
    assert _verdict("C5", _profile(0.80)).status == Status.NOT_HELD
    assert _verdict("C5", _profile(0.37, missing=True)).status == Status.NOT_MEASURABLE
    edge = _verdict("C5", _profile(0.23, stderr=0.03))  # 25% lies within two standard errors
    assert edge.status == Status.NO_CLEAR_EFFECT and "+-6%" in edge.measured
    old = _verdict("C5", _profile(0.37, timer=None))  # recorded before the timer's own bucket
    assert "timer's syncs inside" in old.measured
    # a later native profile paused the program for every sample: its share is not C5's
    later = _profile(0.05, native=True, date="2026-12-30T00:00:00+00:00")
    assert _verdict("C5", _profile(0.37), later).status == Status.HELD


def _hybrid(baseline_s, hybrid_s, sweep=None, jitter=(0.0,)):
    """Each plan's iterations: its median time, times (1 + j) for j in ``jitter`` (the
    baseline's) and in reverse order (the hybrid's), after a first warm-up iteration."""
    use = {"process_cpu_percent": 90.0, "gpu_percent": 30.0}
    runs = {
        name: {
            "median_iteration_seconds": median,
            "iteration_seconds": [9.0] + [median * (1 + j) for j in order],
            "utilisation": use,
        }
        for name, median, order in (
            ("all-accelerator", baseline_s, jitter * 6),
            ("hybrid", hybrid_s, jitter[::-1] * 6),
        )
    }
    return _record("bench.hybrid", {"runs": runs, "width_sweep": sweep or []})


def _sweep(advantage_128, advantage_512, iqr=0.02):
    rows = []
    for width, advantage in ((128, advantage_128), (512, advantage_512)):
        rows.append({"width": width, "placement": "all-accelerator", "seconds_per_iteration": 1.0})
        rows.append({"width": width, "placement": "hybrid", "seconds_per_iteration": 1 / advantage})
    return [{**row, "iqr_s": iqr * row["seconds_per_iteration"]} for row in rows]


def test_c6_held_did_not_hold_or_no_clear_effect_by_its_interleaved_iterations():
    held = _verdict("C6", _hybrid(58.0, 41.0, jitter=(-0.02, 0.0, 0.02)))
    assert held.status == Status.HELD and "1.41x (per iteration 1.36-1.47x)" in held.measured
    assert _verdict("C6", _hybrid(1.0, 1.0, jitter=(-0.02, 0.0, 0.02))).status == Status.NOT_HELD
    # 1.10x with iterations +-10% apart: the threshold lies inside the spread
    unclear = _verdict("C6", _hybrid(1.1, 1.0, jitter=(-0.1, 0.0, 0.1)))
    assert unclear.status == Status.NO_CLEAR_EFFECT
    assert "within the measured noise" in unclear.measured and "CPU %/GPU %" in unclear.measured
    one = _record("bench.hybrid", {"runs": {n: {**r, "iteration_seconds": [1.0]} for n, r in
                  _hybrid(2.0, 1.0).data["runs"].items()}, "width_sweep": []})  # fmt: skip
    assert _verdict("C6", one).status == Status.NO_VERDICT  # one iteration: no spread


def test_c9_from_the_width_sweep_and_its_timings_iqrs():
    assert _verdict("C9", _hybrid(1, 1, _sweep(1.4, 1.0))).status == Status.HELD
    assert _verdict("C9", _hybrid(1, 1, _sweep(1.4, 1.4))).status == Status.NOT_HELD
    # -13% with timings whose IQRs add up to +-10%: the 10% threshold is inside the spread
    assert _verdict("C9", _hybrid(1, 1, _sweep(1.4, 1.22, 0.05))).status == Status.NO_CLEAR_EFFECT
    # At 512 the hybrid ran at one thread (slow) and at eight (as fast as at 128): its best counts.
    slow_one_thread = {"width": 512, "placement": "hybrid", "seconds_per_iteration": 2.0}
    judged = _verdict("C9", _hybrid(1, 1, [*_sweep(1.4, 1.4), slow_one_thread]))
    assert judged.status == Status.NOT_HELD and "1.40x at 512" in judged.measured


def _ddpg(
    buffer, seconds_per_episode, spread=10.0, seeds=(0, 1, 2, 3, 4), by_seed=None, steps=5000
):
    times = by_seed or [seconds_per_episode] * len(seeds)
    runs = [{"seconds_per_episode": s, "env_steps_per_s": 1000.0 / s,
             "config": {"buffer": buffer, "seed": seed, "total_steps": steps}}
            for s, seed in zip(times, seeds, strict=True)]  # fmt: skip
    data = {
        "buffer": buffer,
        "seeds": list(seeds),
        "seconds_per_episode": seconds_per_episode,
        "env_steps_per_s": 1000.0 / seconds_per_episode,
        "eval_return_spread": spread,
        "runs": runs,
    }
    return _record("bench.ddpg", data, gpu=False)


def test_c8_is_measurable_on_a_cpu():
    held = _verdict("C8", _ddpg("transition", 72.0), _ddpg("trajectory", 53.0))
    assert held.status == Status.HELD and "over 5 seeds 10 (transition)" in held.measured
    slow = _verdict("C8", _ddpg("transition", 50.0), _ddpg("trajectory", 53.0))
    assert slow.status == Status.NOT_HELD
    one_seed = _verdict(
        "C8", _ddpg("transition", 72.0, 0.0, [0]), _ddpg("trajectory", 53.0, 0.0, [0])
    )
    assert "no spread" in one_seed.measured and "per seed" not in one_seed.measured
    assert one_seed.status == Status.NO_VERDICT  # one repeat: "no verdict", as its text says
    assert "no verdict" in one_seed.measured


def test_c8_pairs_only_runs_of_the_same_seeds_and_settings():
    seeds = _verdict("C8", _ddpg("transition", 72.0), _ddpg("trajectory", 53.0, seeds=(0, 1)))
    assert seeds.status == Status.MISSING and "different seeds ([0, 1, 2, 3, 4] and [0, 1])" in (
        seeds.measured
    )
    steps = _verdict("C8", _ddpg("transition", 72.0), _ddpg("trajectory", 53.0, steps=2000))
    assert steps.status == Status.MISSING and "besides the buffer (total_steps)" in steps.measured


def test_c8_held_did_not_hold_or_no_clear_effect_by_its_seeds():
    steady = _verdict(
        "C8", _ddpg("transition", 72.0, by_seed=[70, 72, 75, 71, 74]), _ddpg("trajectory", 53.0)
    )
    assert steady.status == Status.HELD and "1.36x (per seed 1.32-1.42x)" in steady.measured
    # the reference machine's case: 1.08x, seeds 1.05-1.08x, all short of 1.1x
    short_seeds = [55.6, 57.2, 57.2, 56.0, 57.0]
    short = _verdict(
        "C8", _ddpg("transition", 57.2, by_seed=short_seeds), _ddpg("trajectory", 53.0)
    )
    assert short.status == Status.NOT_HELD and "(per seed 1.05-1.08x)" in short.measured
    # the first three of the same seeds: too few for a verdict, whatever their range
    three = (0, 1, 2)
    few = _verdict(
        "C8",
        _ddpg("transition", 57.2, seeds=three, by_seed=short_seeds[:3]),
        _ddpg("trajectory", 53.0, seeds=three),
    )
    assert few.status == Status.NO_VERDICT and "(per seed 1.05-1.08x)" in few.measured
    assert "3 repeats, and a verdict needs 5: no verdict" in few.measured
    straddling = _verdict(
        "C8",
        _ddpg("transition", 58.3, by_seed=[55.6, 58.3, 61.0, 57.0, 60.0]),
        _ddpg("trajectory", 53.0),
    )
    assert straddling.status == Status.NO_CLEAR_EFFECT
    assert (
        "1.10x (per seed 1.05-1.15x) the transition buffer's env steps/s (within the measured "
        "noise, +-0.05x)" in straddling.measured
    )


def _allocator(slowdowns=(0.0, 0.01), noise=(0.01, 0.02), saved=0.25, updates=("cpu", "cuda:0")):
    """``slowdowns`` of two MLPs, ``noise``: how much identical plans differ on each."""
    criterion = [
        {"network": "mlp-64", "slowdown": slowdowns[0], "same_devices_spread": noise[0]},
        {"network": "mlp-1024", "slowdown": slowdowns[1], "same_devices_spread": noise[1]},
        {
            "network": "cnn-512",
            "slowdown": 0.0,
            "same_devices_spread": 0.04,
            "saved_vs_fixed_rule": saved,
        },
    ]
    timeline = [
        {"stage": f"mlp-{i}", "decision": "plan", "update": update}
        for i, update in enumerate(updates)
    ]
    return _record(
        "bench.allocator", {"criterion": criterion, "curriculum": {"timeline": timeline}}
    )


def test_c10_held_did_not_hold_or_no_clear_effect_by_identical_plans_spread():
    assert _verdict("C10", _allocator()).status == Status.HELD
    assert _verdict("C10", _allocator(slowdowns=(0.0, 0.2))).status == Status.NOT_HELD
    # 4% slower where identical plans differ by 10%: within 5% or not, the noise cannot say
    unclear = _verdict("C10", _allocator(slowdowns=(0.0, 0.04), noise=(0.01, 0.10)))
    assert unclear.status == Status.NO_CLEAR_EFFECT
    assert "identical plans differ by 10%" in unclear.measured and "noise on mlp-1024" in (
        unclear.measured
    )
    # the best fixed configuration itself is chosen: no noise can make that a miss
    assert _verdict("C10", _allocator(slowdowns=(0.0, 0.0), noise=(0.3, 0.3))).status == (
        Status.HELD
    )


def test_c10_reads_the_paired_spread_of_a_slightly_faster_plan():
    # 1% faster than the best fixed plan by median, its paired iterations -10%..+8%: unclear
    row = {"network": "mlp-64", "slowdown": -0.01, "slowdown_low": -0.10, "slowdown_high": 0.08}
    same = {"network": "mlp-128", "slowdown": 0.0, "slowdown_low": 0.0, "slowdown_high": 0.0}
    record = _record("bench.allocator", {"criterion": [row, same]})
    unclear = _verdict("C10", record)
    assert unclear.status == Status.NO_CLEAR_EFFECT and "noise on mlp-64" in unclear.measured
    assert "past the noise on 1 of 2 MLPs" in unclear.measured  # the same configuration: exact
    row["slowdown_low"] = row["slowdown_high"] = None  # one iteration: no spread, no verdict
    assert _verdict("C10", record).status == Status.NO_VERDICT


def test_c11_c13_from_the_allocator_record():
    assert _verdict("C11", _allocator(saved=0.22)).status == Status.HELD
    assert _verdict("C11", _allocator(saved=0.0)).status == Status.NOT_HELD
    assert _verdict("C11", _allocator(saved=0.11)).status == Status.NO_CLEAR_EFFECT  # +-2%
    assert _verdict("C13", _allocator()).status == Status.HELD
    assert _verdict("C13", _allocator(updates=("cpu", "cpu"))).status == Status.NOT_HELD


def test_no_verdict_without_the_named_measurement():
    for each in claims.CLAIMS:
        verdict = judge(each, {})
        expected = Status.MISSING if each.needs else Status.NOT_MEASURABLE
        assert verdict.status == expected, each.id
    # a rule never runs without its record: C1 given only other kinds is still "not measured yet"
    assert _verdict("C1", _ppo(0.1)).status == Status.MISSING
    # here the remedy is a notebook to run; a reference machine's gap is only reported
    assert "run notebook 00" in judge(claims.CLAIMS[0], {}).measured
    assert judge(claims.CLAIMS[0], {}, here=False).measured == "needs bench.crossover: no record"


def test_newest_record_of_a_kind_wins():
    old = _crossover(step_gpu=0.5)
    old.provenance["date"] = "2020-01-01T00:00:00+00:00"
    assert _verdict("C1", old, _crossover(step_gpu=2.0)).status == Status.HELD


def test_the_ledger_refuses_records_without_provenance(tmp_path, monkeypatch):
    with pytest.raises(UsageError):
        group_by_kind([{"kind": "bench.crossover"}])
    machine = tmp_path / "reference" / "some-gpu"
    machine.mkdir(parents=True)
    payload = {"schema": results.SCHEMA, "kind": "bench.crossover", "policy_step": {}}
    (machine / "bench.crossover.json").write_text(json.dumps(payload))
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path / "reference")
    with pytest.raises(RecordError, match="provenance"):
        ledger.machines(include_this=False)


def test_unknown_claim_is_a_clear_error():
    with pytest.raises(UsageError, match=r"C1, C1-CPU, C2, .*, C13"):
        claim("C99")


def test_ledger_markdown_has_a_row_per_claim_and_a_column_per_machine():
    table = ledger.rows({"gpu box": group_by_kind([_crossover()]), "laptop": {}})
    text = ledger.markdown(table)
    assert text.count("\n| C") == len(claims.CLAIMS)
    assert "gpu box (Test GPU)" in text and "**held**" in text and "**not measured yet**" in text
    assert ledger.summary(table, "gpu box")["held"] == ["C1", "C2", "C3"]


def test_the_readme_and_results_tables_match_the_reference_records():
    assert set(readme.PAGES) == {readme.README, readme.RESULTS}
    for page, sections in readme.PAGES.items():
        text = page.read_text()
        for name, build in sections.items():
            assert readme.section(text, name) == build(), (
                f"{page.name} section {name!r} is stale: run `make docs` (python -m "
                "tools.docs regenerate)"
            )


def _race_record(kind, pairs, stats, date="2026-12-01T00:00:00+00:00"):
    return _record(kind, {"summary": {"pairs": pairs, "stats": stats}, "threads": 1, "core": 1},
                   gpu=False, date=date)  # fmt: skip


def test_the_front_pages_notebooks_carry_reading_minutes_and_the_newest_full_runs_machine():
    table = readme.notebooks_table()
    names = run_times.series_notebooks()
    rows = [line for line in table.splitlines() if line[:5].strip("| ").isdigit()]
    assert [row.split(" | ")[0].strip("| ") for row in rows] == [n[:2] for n in names]
    for row, name in zip(rows, names, strict=True):
        assert f"(notebooks/{name}) | {cards.reading_minutes(name):.0f} min |" in row
    machine = readme.front_machine(run_times.run_times_by_machine())
    full = [r for r in run_times.run_time_records() if r.data["mode"] == "full"]
    assert machine == max(full, key=lambda r: r.provenance["date"]).hardware
    assert f"recorded runs on {machine}:" in table


def test_the_speed_table_rows_of_a_race_span_every_recorded_run(monkeypatch):
    pair = {"point": "uniform", "ours": "ours", "peer": "torchrl", "metric": "sample_per_s",
            "target": 5.0, "round_ratios": [6.0, 4.0]}  # fmt: skip
    skipped = {**pair, "metric": "bytes_per_transition", "round_ratios": [0.9]}
    stats = {"uniform": {"ours": {"sample_per_s": {"min": 10.0, "max": 12.0}},
                         "torchrl": {"sample_per_s": {"min": 2.0, "max": 3.0}}}}  # fmt: skip
    later = {**pair, "round_ratios": [5.0]}
    kind = "bench.buffer_peers"
    records = {
        kind: [_race_record(kind, [pair, skipped], stats), _race_record(kind, [later], stats)]
    }
    monkeypatch.setattr(results, "load_references", lambda kind: records.get(kind, []))
    rows = readme._race_rows("bench.buffer_peers")
    assert len(rows) == 1  # the rates only, both runs in one row
    assert "uniform sampling: transitions sampled/s, vs TorchRL | 10-12 | 2-3 |" in rows[0]
    assert "| 5.00x (4.00-6.00x) | >= 5x |" in rows[0] and rows[0].count("rounds") == 2
    assert all(kind in readme.RACES for kind in ("bench.env_peers", "bench.ddpg_vs_cleanrl"))


def test_takeaways_follow_the_verdicts():
    table = ledger.rows({"gpu box": group_by_kind([_crossover(step_gpu=0.5)]), "laptop": {}})
    lines = ledger.takeaways(table, "gpu box")
    assert "13 claims and 1 half-claim (C1-CPU)" in lines[0]
    # C2, C3 held; C1 did not; its CPU half, timed once, gives no verdict
    assert "2 held, 1 did not hold, 0 showed no clear effect, 1 had no verdict" in lines[0]
    assert any(line.startswith("Did not hold: C1") for line in lines)
    laptop = ledger.takeaways(table, "laptop")
    assert any("Not measured yet" in line for line in laptop)
    noisy = _crossover(step_gpu=1.1, speedup=1.1, iqr=0.5)
    noisy = ledger.rows({"gpu box": group_by_kind([noisy])})
    assert ledger.summary(noisy, "gpu box")["no clear effect"] == ["C1", "C2"]
    assert any(
        line.startswith("No clear effect: C1, C2") for line in ledger.takeaways(noisy, "gpu box")
    )


def test_every_claim_has_a_quick_benchmark_for_what_it_needs():
    from hetero_tutorial.app import cli

    parser = cli.build_parser()
    for each in claims.CLAIMS:
        for kind in each.needs:
            for arguments, _ in fill_ledger.QUICK_BENCHMARKS[kind]:
                parser.parse_args(["bench", *arguments, "--json", "x.json"])


def test_the_ledger_lists_what_is_missing_and_the_one_command_instead_of_measuring(monkeypatch):
    here = {ledger.THIS_MACHINE: group_by_kind([_crossover(gpu=False)])}
    monkeypatch.setattr(ledger, "machines", lambda: here)
    found = fill_ledger.missing()
    assert "bench.crossover" not in found and found["bench.hybrid"] == ["C6", "C9"]
    lines = fill_ledger.missing_lines()
    assert "not measured yet: bench.hybrid (for C6, C9; notebook 03 writes it)" in lines
    assert "not measured yet: bench.ppo (for C4; notebook 01 writes it)" in lines
    needed = {kind for each in claims.CLAIMS for kind in each.needs}
    assert needed == set(fill_ledger.WRITTEN_BY) == set(fill_ledger.QUICK_BENCHMARKS)
    assert fill_ledger.COMMAND in lines[-1] and "MEASURE_MISSING = True" in lines[-1]
    monkeypatch.setattr(fill_ledger, "missing", dict)
    assert fill_ledger.missing_lines() == [
        "Every record the claims need is here: nothing to measure."
    ]


def test_solution_speedup_and_time_saved():
    speedup, saved = speedup_and_time_saved(72.0, 53.0)
    assert speedup == pytest.approx(1.3585, abs=1e-4) and saved == pytest.approx(0.2639, abs=1e-4)
    with pytest.raises(ValueError):
        speedup_and_time_saved(0.0, 1.0)


def test_a_kind_without_the_record_a_rule_needs_is_not_measured_yet():
    only_tensor = _verdict("C8", _ddpg("tensor", 60.0))  # no transition or trajectory record
    assert only_tensor.status == Status.MISSING
    expected = "needs a bench.ddpg record with buffer transition: run notebook 04"
    assert expected in only_tensor.measured


def _race(threads, core, ratios, command="python benchmarks/ddpg_vs_sb3.py --reference"):
    data = {"threads": threads, "round_ratios": ratios}
    data["steps_per_s"] = {"ours": [130.0 * r for r in ratios], "sb3": [130.0] * len(ratios)}
    if core is not None:
        data["core"] = core
    record = _record("bench.ddpg_vs_sb3", data, gpu=False)
    record.provenance["command"] = command
    return record


def test_the_speed_table_spans_every_recorded_round_and_says_which_were_pinned(
    tmp_path, monkeypatch
):
    machine = tmp_path / "some-cpu"
    machine.mkdir()
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path)
    races = [
        _race(1, "1", [1.2, 1.3, 1.4]),
        _race(2, "none", [1.1, 1.5, 1.6]),
        _race(2, None, [1.0, 1.3], "python benchmarks/ddpg_vs_sb3.py --core none"),  # older
    ]
    for index, race in enumerate(races):
        results.save(race, machine / f"bench.ddpg_vs_sb3.{index}.json")
    [row] = [line for line in readme.speed_table().splitlines() if line.startswith("| DDPG")]
    assert "| 1.30x (1.00-1.60x) | >= 1.25x |" in row  # the median of all 8 rounds, their range
    hardware = races[0].hardware
    assert f"3 rounds, 1 thread, pinned to core 1, {hardware}, 2026-11-30: 1.30x" in row
    assert f"3 rounds, 2 threads, not pinned, {hardware}, 2026-11-30: 1.50x" in row
    assert f"2 rounds, 2 threads, not pinned, {hardware}, 2026-11-30: 1.15x" in row  # its command
    commands = [line for line in readme.speed_table().splitlines() if line.startswith("Record")]
    assert commands == [
        "Recorded with `python benchmarks/ddpg_vs_sb3.py --reference`, "
        "`python benchmarks/ddpg_vs_sb3.py --core none`."
    ]  # each once
    assert "| 130-208 | 130-130 |" in row


def test_a_folder_of_another_cpu_of_the_same_name_is_not_an_earlier_run_here():
    here = _crossover(step_cpu=0.000029, iqr=0.0000005, gpu=False)
    here.provenance["fingerprint"]["cpu_identity"] = {"family": 6, "model": 167}
    other = _record("bench.crossover", dict(here.data), gpu=False, date="2026-11-29T20:00:00+00:00")
    other.provenance["fingerprint"]["cpu_identity"] = {"family": 6, "model": 85}
    kind = results.machine_slug(here.provenance["fingerprint"])
    by_machine = {ledger.THIS_MACHINE: group_by_kind([here]), kind: group_by_kind([other])}
    assert ledger.column_label(kind, by_machine) == kind  # the folder's CPU is another one
    assert ledger.earlier_runs("C1-CPU", by_machine) == 1  # this machine's run alone
    row = next(
        r
        for r in ledger.rows(by_machine)
        if r["claim"] == "C1-CPU" and r["machine"] == ledger.THIS_MACHINE
    )
    assert "recorded runs" not in row["measured"]
    same = _record("bench.crossover", dict(here.data), gpu=False, date="2026-11-29T20:00:00+00:00")
    same.provenance["fingerprint"]["cpu_identity"] = {"family": 6, "model": 167}
    mixed = {**by_machine, kind: group_by_kind([same, other])}
    assert ledger.column_label(kind, mixed) == kind  # one record of another CPU: not labelled
    assert ledger.earlier_runs("C1-CPU", mixed) == 2  # but its run of this CPU is read


def test_the_ledger_says_how_many_runs_c1s_cpu_half_read_and_checks_the_guess():
    from hetero_tutorial.notebook import ledger_report

    here = _crossover(step_cpu=0.000029, iqr=0.0000005, gpu=False)
    alone = {ledger.THIS_MACHINE: group_by_kind([here])}
    assert "this machine's one recorded run" in ledger_report.across_runs_line(alone)
    assert "no run of this machine" in ledger_report.across_runs_line({})
    earlier = _record("bench.crossover", dict(here.data), gpu=False, date="2026-11-29T20:00:00Z")
    kind = results.machine_slug(here.provenance["fingerprint"])
    both = {**alone, kind: group_by_kind([earlier])}
    assert "read 2 recorded runs" in ledger_report.across_runs_line(both)
    answer = speedup_and_time_saved(72.0, 53.0)
    line = ledger_report.arithmetic_line(answer, "time saved")
    assert "is neither" in line and "you predicted 'time saved'" in line
    assert "(as you predicted.)" in ledger_report.arithmetic_line(answer, "neither")
    assert "is the speed-up" in ledger_report.arithmetic_line((1.28, 0.22), None)
    assert "Solve the exercise" in ledger_report.arithmetic_line(None, "neither")
