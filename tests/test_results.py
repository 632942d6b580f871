import json

import pytest

from hetero_tutorial.core import results
from hetero_tutorial.core.results import Record, RecordError


def test_round_trip_keeps_fields_and_provenance(tmp_path):
    record = Record("bench.demo", {"env_steps_per_s": 1234.5, "rows": [{"a": 1}]})
    path = results.save(record, tmp_path / "demo.json")
    payload = json.loads(path.read_text())
    assert payload["env_steps_per_s"] == 1234.5  # measured fields sit at the top level
    assert payload["schema"] == results.SCHEMA
    loaded = results.load(path)
    assert loaded.kind == "bench.demo"
    assert loaded.data == record.data
    assert loaded.provenance == record.provenance


def test_provenance_names_machine_versions_date_command_mode(monkeypatch):
    monkeypatch.setenv("HETERO_TUTORIAL_QUICK", "1")
    facts = results.provenance(command="python -m hetero_tutorial bench demo")
    assert facts["quick"] is True
    assert facts["command"] == "python -m hetero_tutorial bench demo"
    assert facts["date"].startswith("20")
    assert facts["fingerprint"]["versions"]["torch"]


def test_record_without_provenance_is_refused():
    with pytest.raises(RecordError, match="provenance"):
        Record("bench.demo", {"x": 1}, {"date": "2026-01-01"})


def test_reserved_field_names_are_refused():
    with pytest.raises(RecordError, match="reserved"):
        Record("bench.demo", {"provenance": 1})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"some": "thing"}', "not a hetero-tutorial record"),
        ("[1, 2]", "not a hetero-tutorial record"),
        (json.dumps({"schema": results.SCHEMA, "kind": 3, "provenance": {}}), "kind"),
        (json.dumps({"schema": results.SCHEMA, "kind": "x", "provenance": {}}), "provenance"),
    ],
)
def test_malformed_or_foreign_files_give_clear_errors(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(RecordError, match=message):
        results.load(path)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(RecordError, match="no record"):
        results.load(tmp_path / "absent.json")


def test_load_all_filters_by_kind(tmp_path):
    results.save(Record("bench.a", {"v": 1}), tmp_path / "a.json")
    results.save(Record("bench.b", {"v": 2}), tmp_path / "sub" / "b.json")
    assert [r.kind for r in results.load_all(tmp_path)] == ["bench.a", "bench.b"]
    assert [r.data["v"] for r in results.load_all(tmp_path, kind="bench.b")] == [2]
    assert results.load_all(tmp_path / "absent") == []


def test_references_can_be_limited_to_machines_with_an_accelerator(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path)
    cpu_only, gpu = Record("bench.a", {"v": 1}), Record("bench.a", {"v": 2})
    cpu_only.provenance["fingerprint"]["accelerator"] = None
    gpu.provenance["fingerprint"]["accelerator"] = {"type": "cuda", "name": "NVIDIA H200"}
    results.save(cpu_only, tmp_path / "cpu" / "a.json")
    results.save(gpu, tmp_path / "gpu" / "a.json")
    assert sorted(r.data["v"] for r in results.load_references("bench.a")) == [1, 2]
    assert [r.data["v"] for r in results.load_references("bench.a", with_accelerator=True)] == [2]


def test_committed_reference_records_all_load():
    for record in results.load_references():
        assert record.provenance["fingerprint"]


def test_reference_records_go_to_a_folder_named_after_the_machine():
    record = Record("bench.demo", {})
    record.provenance["fingerprint"]["accelerator"] = {"type": "cuda", "name": "NVIDIA H200"}
    assert results.reference_directory(record) == results.REFERENCE_DIR / "nvidia-h200"
    facts = {
        "accelerator": None,
        "cpu_model": "AMD EPYC",
        "cpu_logical_cores": 2,
        "usable_cores": 1,
    }
    record.provenance["fingerprint"].update(facts)  # pinned to one core: still the same machine
    assert results.machine_slug(record.provenance["fingerprint"]) == "amd-epyc-2-cores"
    # The label names the CPU's generation where the record has it (records from before
    # the fingerprint kept it: the model name alone); the folder stays the same.
    record.provenance["fingerprint"]["cpu_identity"] = {"family": "25", "model": "17",
                                                        "vector_isa": "AVX512"}  # fmt: skip
    assert record.hardware == "AMD EPYC (family 25, model 17, AVX512; 2 cores, no GPU)"
    assert results.machine_slug(record.provenance["fingerprint"]) == "amd-epyc-2-cores"
    del record.provenance["fingerprint"]["cpu_identity"]
    assert record.hardware == "AMD EPYC (2 cores, no GPU)"


def test_records_of_one_folder_are_of_one_machine_only_with_one_cpu_identity():
    old, new, other = (Record("bench.demo", {}) for _ in range(3))
    old.provenance["fingerprint"].pop("cpu_identity")
    other.provenance["fingerprint"]["cpu_identity"] = {"family": "23", "vector_isa": "AVX2"}
    facts = [record.provenance["fingerprint"] for record in (old, new, other)]
    assert len({results.machine_slug(fingerprint) for fingerprint in facts}) == 1  # one folder
    assert results.same_machine(facts[1], Record("bench.demo", {}).provenance["fingerprint"])
    assert not results.same_machine(facts[0], facts[1])  # a generation not recorded
    assert not results.same_machine(facts[1], facts[2])
    labels = results.hardware_of([old, new, other, new]).split(" or ")
    assert labels == [old.hardware, new.hardware, other.hardware] and len(set(labels)) == 3
    assert results.hardware_of([]) == "no records"
