"""The peer races as notebooks 06 and 07 show them: a table from a record's pairs, where it
was measured, and a sentence wherever a peer is ahead (ratios below 1, either orientation)."""

from hetero_tutorial.core import results
from hetero_tutorial.core.results import Record
from hetero_tutorial.notebook import peer_races

PROVENANCE = {
    "fingerprint": {"cpu_model": "Test CPU", "cpu_logical_cores": 2, "accelerator": None},
    "date": "2026-12-01T18:00:00+00:00",
    "command": "python benchmarks/x_peers.py --reference",
    "quick": False,
    "peer_versions": {"rejax": {"rejax": "0.1.3", "jax": "0.10.2"}},
}


def _pair(point, metric, peer, ratio, low, high, orientation="ours / peer", ours="ours"):
    return {"point": point, "metric": metric, "ours": ours, "peer": peer,
            "median_of_round_ratios": ratio,
            "low": low, "high": high, "how": "per round", "orientation": orientation,
            "target": None}  # fmt: skip


def _record():
    pairs = [
        _pair("8 envs", "steps_per_s", "rejax", 0.1, 0.08, 0.11),
        _pair("8 envs", "total_s", "rejax", 0.72, 0.66, 0.74, "peer / ours"),
        _pair("8 envs", "steps_per_s", "sb3", 1.62, 1.55, 1.86),
        _pair("8 envs", "steps_per_s", "rejax", 0.25, 0.21, 0.28, ours="ours-compiled"),
        _pair("1024 envs", "steps_per_s", "rejax", 0.97, 0.93, 1.02, ours="ours-compiled"),
    ]
    stats = {"8 envs": {"rejax": {"compile_s": {"median": 14.2}, "train_s": {"median": 2.0}},
                        "ours": {"train_s": {"median": 22.7}}}}  # fmt: skip
    data = {"rounds": 3, "threads": 1, "core": "1", "notes": {"x": "did not install"},
            "summary": {"pairs": pairs, "stats": stats}}  # fmt: skip
    return Record("bench.device_ppo_peers", data, PROVENANCE)


def test_the_table_and_sentences_come_from_the_pairs():
    record = _record()
    table = peer_races.race_table(record).data
    assert "| 8 envs | env steps/s | ours | rejax | 0.10x | 0.08-0.11x | ours / peer |" in table
    assert "| 8 envs | env steps/s | ours | sb3 | 1.62x |" in table
    assert "| 8 envs | env steps/s | ours-compiled | rejax | 0.25x |" in table
    ahead = peer_races.behind(record)
    assert ahead[0].startswith("rejax is ahead at 8 envs, env steps/s: 10.0x ours (")
    assert "training seconds with compile: 1.4x ours" in ahead[1]
    assert ahead[2].startswith("rejax is ahead at 8 envs, env steps/s: 4.0x ours-compiled")
    assert len(ahead) == 3  # sb3 is behind us, and rounds across 1 name no one: no sentence
    assert peer_races.behind(record, ["total_s"]) == ahead[1:2]
    assert "14.2 s compiling" in peer_races.compile_split(record, "8 envs", "rejax")
    assert "Test CPU" in peer_races.provenance(record) and "rejax 0.1.3" in peer_races.provenance(
        record
    )


def test_the_report_says_how_to_record_a_race_that_is_missing(monkeypatch):
    monkeypatch.setattr(results, "load_references", lambda kind: [])
    text = peer_races.race_report("bench.env_peers", "benchmarks/env_peers.py").data
    assert "benchmarks/env_peers.py --reference" in text
    monkeypatch.setattr(results, "load_references", lambda kind: [_record()])
    text = peer_races.race_report("bench.device_ppo_peers", "b.py", ["steps_per_s"]).data
    assert "- not raced, x: did not install" in text and "rejax is ahead" in text


def test_the_committed_races_load():
    for kind in ("bench.collection_peers", "bench.env_peers", "bench.device_ppo_peers"):
        record = peer_races.race(kind)
        if record is not None:
            assert peer_races.race_table(record).data.count("\n|") > 2


def test_a_peer_ahead_by_less_than_ten_percent_is_said_to_two_decimals():
    """07 printed 'rejax is ahead ... 1.0x ours-compiled' for 0.96x (rounds 0.88-1.00x)."""
    pair = {"point": "1024 envs", "metric": "steps_per_s", "ours": "ours-compiled",
            "peer": "rejax", "median_of_round_ratios": 0.96, "low": 0.88, "high": 0.997,
            "how": "per round", "orientation": "ours / peer", "target": None}  # fmt: skip
    record = Record("bench.device_ppo_peers", {"summary": {"pairs": [pair]}}, PROVENANCE)
    (line,) = peer_races.behind(record)
    assert "env steps/s: 1.04x ours-compiled (ratio 0.96x" in line


def test_a_target_the_rounds_straddle_names_its_edge_and_who_led_every_round():
    pairs = [
        _pair("1 env", "steps_per_s", "envpool", 12.62, 9.98, 15.28) | {"target": 10.0},
        _pair("1 env", "steps_per_s", "gymnax", 2.0, 1.5, 2.5) | {"target": 1.0},
    ]
    data = {"rounds": 5, "summary": {"pairs": pairs, "stats": {}}}
    line = peer_races.targets_line(Record("bench.env_peers", data, PROVENANCE))
    assert line.startswith("The race's targets (benchmarks/README.md) over 5 rounds: 1 of 2 held")
    assert line.endswith(
        "against the target (at least 10.00x): no clear effect, its range reaches both sides "
        "of 10.00x (ours ahead in every round)"
    )
    one = _pair("1 env", "steps_per_s", "envpool", 9.0, None, None) | {"target": 10.0}
    data = {"rounds": 1, "summary": {"pairs": [one], "stats": {}}}  # one round: no range
    assert "no verdict" in peer_races.targets_line(Record("bench.env_peers", data, PROVENANCE))


def test_a_race_from_a_cpus_name_alone_says_its_generation_was_not_recorded():
    record = _record()
    assert peer_races.recorded_on(record) == (
        "Test CPU (2 cores, no GPU), a CPU's name only (its generation was not recorded)"
    )
    assert peer_races.short_provenance(record).startswith(
        "Recorded on Test CPU (2 cores, no GPU), a CPU's name only"
    )
    named = {**PROVENANCE["fingerprint"], "cpu_identity": {"family": "25", "model": "17"}}
    record.provenance = {**PROVENANCE, "fingerprint": named}
    assert peer_races.recorded_on(record) == "Test CPU (family 25, model 17; 2 cores, no GPU)"
