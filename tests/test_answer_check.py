"""The instructor's sheet against a run: each rule agrees, mismatches or cannot tell."""

from hetero_tutorial.core import results
from tools.docs import answer_check


def _record(kind, data):
    provenance = {"fingerprint": {"cpu_model": "T", "cpu_logical_cores": 2}, "date": "2026-12-07",
                  "command": "t", "quick": True}  # fmt: skip
    return results.Record(kind, data, provenance)


def _grid(per_sample_at_largest):
    rows = [{"device": "cpu", "width": 64, "batch_size": 1, "seconds_per_sample": 1e-4}]
    rows.append({"device": "cpu", "width": 64, "batch_size": 4096,
                 "seconds_per_sample": per_sample_at_largest})  # fmt: skip
    return {"bench.crossover": [_record("bench.crossover", {"grid": rows})]}


def _copies(base, hybrid):
    counted = {"all-accelerator": {"copies_per_iteration": base},
               "hybrid": {"copies_per_iteration": hybrid}}  # fmt: skip
    return {"bench.hybrid": [_record("bench.hybrid", {"counted_copies": counted})]}


def test_each_rule_reads_both_sides_and_says_when_it_cannot_tell():
    assert answer_check.per_sample_falls(_grid(1e-6)).agrees is True
    assert answer_check.per_sample_falls(_grid(2e-4)).agrees is False
    assert answer_check.baseline_copies_more(_copies(133, 4)).agrees is True
    assert answer_check.baseline_copies_more(_copies(4, 4)).agrees is False
    rows = [{"design": d, "capacity": 10, "device": "cuda:0", "copies_per_batch": c}
            for d, c in (("transition", 6), ("trajectory", 6), ("tensor", 1))]  # fmt: skip
    buffers = {"bench.buffers": [_record("bench.buffers", {"rows": rows})]}
    assert answer_check.tensor_buffer_copies_fewest(buffers).agrees is True
    rows[2]["copies_per_batch"] = 9
    assert answer_check.tensor_buffer_copies_fewest(buffers).agrees is False
    for rule in answer_check.RULES.values():
        assert rule({}).agrees is None


def test_the_check_lists_mismatches_first_and_counts_answers_without_a_rule():
    lines = answer_check.check(_grid(2e-4) | _copies(133, 4))
    assert lines[0].startswith("00 Q3: MISMATCH")
    assert lines[-1].endswith("answers are reasoning the instructor reads (no rule)")


def test_a_busy_record_is_named_as_not_judged_not_as_missing(monkeypatch, tmp_path, capsys):
    record = _grid(1e-6)["bench.crossover"][0]
    record.provenance["machine_load"] = {"study": "the forward-pass grid", "seconds": 2.0,
                                         "wait_share": 0.6, "others_on_study_cpus": 0.9,
                                         "busy": True}  # fmt: skip
    results.save(record, directory=tmp_path)
    monkeypatch.setattr(results, "RESULTS_DIR", tmp_path)
    answer_check.main()
    said = capsys.readouterr().out
    assert "00 Q3: not checkable here: bench.crossover ran busy, not judged" in said
