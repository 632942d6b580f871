import json

import pytest

from hetero_tutorial.app import fill_ledger, readme
from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.results import Record, RecordError
from hetero_tutorial.ledger import claims
from hetero_tutorial.ledger import verdicts as ledger
from hetero_tutorial.ledger.claims import Status, claim, group_by_kind, judge
from hetero_tutorial.notebook.solutions.claims_ledger import speedup_and_time_saved

GPU = {"type": "cuda", "device": "cuda:0", "name": "Test GPU"}


def _record(kind, data, gpu=True, date="2026-11-30T00:00:00+00:00"):
    fingerprint = {"accelerator": GPU if gpu else None, "cpu_model": "Test CPU", "usable_cores": 2}
    return Record(
        kind, data, {"fingerprint": fingerprint, "date": date, "command": "t", "quick": 0}
    )


def _verdict(claim_id, *records):
    return judge(claim(claim_id), group_by_kind(records))


def _crossover(step_cpu=1.0, step_gpu=2.0, speedup=2.0, crossover=None, gpu=True):
    costs = {"cpu": {"median_s": step_cpu}, "env_only": {"median_s": 0.1}}
    if gpu:
        costs["cuda:0"] = {"median_s": step_gpu}
    return _record(
        "bench.crossover",
        {
            "policy_step": costs,
            "value_update_speedup": {"cuda:0": speedup} if gpu else {},
            "crossover_width_by_batch": crossover if crossover is not None else {"256": 256},
        },
        gpu=gpu,
    )


def test_c1_c2_c3_from_the_crossover_record():
    assert _verdict("C1", _crossover(step_gpu=2.0)).status == Status.HELD
    assert _verdict("C1", _crossover(step_gpu=0.5)).status == Status.NOT_HELD
    assert _verdict("C1", _crossover(step_gpu=2.0)).ratio == 2.0
    assert _verdict("C2", _crossover(speedup=1.8)).status == Status.HELD
    assert _verdict("C2", _crossover(speedup=0.7)).status == Status.NOT_HELD
    assert _verdict("C3", _crossover(crossover={"1": None, "256": 256})).status == Status.HELD
    assert _verdict("C3", _crossover(crossover={"256": None})).status == Status.NOT_HELD
    assert _verdict("C3", _crossover(crossover={"256": 32})).status == Status.NOT_HELD
    for claim_id in ("C1", "C2", "C3"):
        assert _verdict(claim_id, _crossover(gpu=False)).status == Status.NOT_MEASURABLE


def _ppo(copies):
    return _record("bench.ppo", {"placement": "all-accelerator", "copies_per_env_step": copies})


def _ddpg_placements(cpu_sps=100.0, switching_sps=80.0, copies=24.0, gpu=True):
    rows = [
        {"placement": "all-cpu", "env_steps_per_s": cpu_sps, "copies_per_1000_samples": 0.0},
        {
            "placement": "hybrid",
            "env_steps_per_s": switching_sps,
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


def test_c7_compares_switching_ddpg_with_all_cpu():
    held = _verdict("C7", _ddpg_placements(switching_sps=85.0))
    assert held.status == Status.HELD and held.ratio == pytest.approx(0.85)
    assert _verdict("C7", _ddpg_placements(switching_sps=120.0)).status == Status.NOT_HELD


def _profile(share, missing=False):
    data = {"placement": "all-accelerator", "transfer_share": share, "hidden": 128}
    return _record("bench.profile", {**data, "accelerator_missing": missing})


def test_c5_transfer_share_band():
    assert _verdict("C5", _profile(0.37)).status == Status.HELD
    assert _verdict("C5", _profile(0.05)).status == Status.NOT_HELD
    assert _verdict("C5", _profile(0.80)).status == Status.NOT_HELD
    assert _verdict("C5", _profile(0.37, missing=True)).status == Status.NOT_MEASURABLE


def _hybrid(baseline_s, hybrid_s, sweep=None):
    use = {"process_cpu_percent": 90.0, "gpu_percent": 30.0}
    runs = {
        "all-accelerator": {"median_iteration_seconds": baseline_s, "utilisation": use},
        "hybrid": {"median_iteration_seconds": hybrid_s, "utilisation": use},
    }
    return _record("bench.hybrid", {"runs": runs, "width_sweep": sweep or []})


def _sweep(advantage_128, advantage_512):
    rows = []
    for width, advantage in ((128, advantage_128), (512, advantage_512)):
        rows.append({"width": width, "placement": "all-accelerator", "seconds_per_iteration": 1.0})
        rows.append({"width": width, "placement": "hybrid", "seconds_per_iteration": 1 / advantage})
    return rows


def test_c6_and_c9_from_the_hybrid_record():
    assert _verdict("C6", _hybrid(58.0, 41.0)).status == Status.HELD
    assert _verdict("C6", _hybrid(1.0, 1.0)).status == Status.NOT_HELD
    assert _verdict("C9", _hybrid(1, 1, _sweep(1.4, 1.0))).status == Status.HELD
    assert _verdict("C9", _hybrid(1, 1, _sweep(1.4, 1.4))).status == Status.NOT_HELD
    # At 512 the hybrid ran at one thread (slow) and at eight (as fast as at 128): its best counts.
    slow_one_thread = {"width": 512, "placement": "hybrid", "seconds_per_iteration": 2.0}
    judged = _verdict("C9", _hybrid(1, 1, [*_sweep(1.4, 1.4), slow_one_thread]))
    assert judged.status == Status.NOT_HELD and "1.40x at 512" in judged.measured


def _ddpg(buffer, seconds_per_episode, spread=10.0, seeds=(0, 1, 2), by_seed=None):
    data = {
        "buffer": buffer,
        "seeds": list(seeds),
        "seconds_per_episode": seconds_per_episode,
        "eval_return_spread": spread,
        "runs": [{"seconds_per_episode": s} for s in by_seed or [seconds_per_episode] * len(seeds)],
    }
    return _record("bench.ddpg", data, gpu=False)


def test_c8_is_measurable_on_a_cpu():
    held = _verdict("C8", _ddpg("transition", 72.0), _ddpg("trajectory", 53.0))
    assert held.status == Status.HELD and "over 3 seeds 10 (transition)" in held.measured
    slow = _verdict("C8", _ddpg("transition", 50.0), _ddpg("trajectory", 53.0))
    assert slow.status == Status.NOT_HELD
    one_seed = _verdict(
        "C8", _ddpg("transition", 72.0, 0.0, [0]), _ddpg("trajectory", 53.0, 0.0, [0])
    )
    assert "no spread" in one_seed.measured and "per seed" not in one_seed.measured


def test_c8_needs_every_seed_faster_and_shows_their_range():
    steady = _verdict(
        "C8", _ddpg("transition", 72.0, by_seed=[70, 72, 75]), _ddpg("trajectory", 53.0)
    )
    assert steady.status == Status.HELD and "(per seed 1.32-1.42x)" in steady.measured
    one_seed_slower = _verdict(
        "C8", _ddpg("transition", 72.0, by_seed=[72, 72, 50]), _ddpg("trajectory", 53.0)
    )
    assert one_seed_slower.status == Status.NOT_HELD


def _allocator(within=(True, True), saved=0.25, updates=("cpu", "cuda:0")):
    criterion = [
        {"network": "mlp-64", "slowdown": 0.01, "within_tolerance": within[0]},
        {"network": "mlp-1024", "slowdown": 0.2, "within_tolerance": within[1]},
        {
            "network": "cnn-512",
            "slowdown": 0.0,
            "within_tolerance": True,
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


def test_c10_c11_c13_from_the_allocator_record():
    assert _verdict("C10", _allocator()).status == Status.HELD
    assert _verdict("C10", _allocator(within=(True, False))).status == Status.NOT_HELD
    assert _verdict("C11", _allocator(saved=0.22)).status == Status.HELD
    assert _verdict("C11", _allocator(saved=0.0)).status == Status.NOT_HELD
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
    with pytest.raises(UsageError, match=r"C1\.\.C13"):
        claim("C99")


def test_ledger_markdown_has_a_row_per_claim_and_a_column_per_machine():
    table = ledger.rows({"gpu box": group_by_kind([_crossover()]), "laptop": {}})
    text = ledger.markdown(table)
    assert text.count("\n| C") == len(claims.CLAIMS)
    assert "gpu box (Test GPU)" in text and "**held**" in text and "**not measured yet**" in text
    assert ledger.summary(table, "gpu box")["held"] == ["C1", "C2", "C3"]


def test_readme_tables_match_the_reference_records():
    text = readme.README.read_text()
    for name, build in readme.SECTIONS.items():
        assert readme.section(text, name) == build(), (
            f"README section {name!r} is stale: run python -m hetero_tutorial ledger --readme"
        )


def test_takeaways_follow_the_verdicts():
    table = ledger.rows({"gpu box": group_by_kind([_crossover(step_gpu=0.5)]), "laptop": {}})
    lines = ledger.takeaways(table, "gpu box")
    assert "2 held, 1 did not hold" in lines[0]  # C2 and C3 held, C1 did not
    assert any(line.startswith("Did not hold: C1") for line in lines)
    laptop = ledger.takeaways(table, "laptop")
    assert any("Not measured yet" in line for line in laptop)


def test_every_claim_has_a_quick_benchmark_for_what_it_needs():
    from hetero_tutorial.app import cli

    parser = cli.build_parser()
    for each in claims.CLAIMS:
        for kind in each.needs:
            for arguments, _ in fill_ledger.QUICK_BENCHMARKS[kind]:
                parser.parse_args(["bench", *arguments, "--json", "x.json"])


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
