"""The peer races' own logic, with stand-in contestants: CI installs no peer, so these keep the
scripts from rotting. Options, fresh pinned processes, rotated rounds, ratio arithmetic and
record writing run for real; only the contestants are stand-ins (no peer venv is built)."""

import importlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetero_tutorial.core import results

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
race = importlib.import_module("race")

SCRIPTS = ("env_peers", "device_ppo_peers", "buffer_peers", "collection_peers", "ddpg_vs_cleanrl")
"""Every race built on race.py: each parses its options and builds its plan here."""


@pytest.fixture
def data_dirs(tmp_path, monkeypatch):
    """Records go to a temporary data/ (results and reference), not the repository's."""
    monkeypatch.setattr(results, "RESULTS_DIR", tmp_path / "results")
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path / "reference")
    return tmp_path


def stand_in(plan):
    """A measure for ``plan`` with no process: every metric its pairs read, known values.

    Each of our contestants (ours, ours-compiled) measures 2 x (round + 1), every peer
    1 x (round + 1): ours is twice the peer's rate and, where lower is better, twice its
    seconds; peers never solve (None) at the ``solve_s`` metrics of the second round, so
    that rounds without a pair drop out.
    """
    calls = []
    metrics = {}
    for pair in plan.pairs:
        for name in (pair.ours, pair.peer):
            metrics.setdefault((pair.point, name), set()).add(pair.metric)

    def measure(entry, job, core):
        calls.append((entry.point, entry.contestant, job["seed"], job["threads"], core))
        ours = entry.contestant.startswith("ours")  # ours, ours-compiled
        scale = (2.0 if ours else 1.0) * (job["seed"] + 1)
        found = {m: scale for m in metrics[(entry.point, entry.contestant)]}
        for m in found:
            if m.startswith("solve") and not ours and job["seed"] == 1:
                found[m] = None
        return found

    return measure, calls


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_race_runs_its_plan_end_to_end_with_stand_in_contestants(name, data_dirs, capsys):
    script = importlib.import_module(name)
    argv = ["--rounds", "3", "--core", "none", "--threads", "2", "--reference"]
    args = script.arguments(argv)
    plan = script.plan(args)
    assert plan.pairs and plan.entries and plan.script.name == f"{name}.py"
    assert set(plan.venvs()) <= set(race.peer_venvs.PEER_VENVS), plan.venvs()
    measure, calls = stand_in(plan)
    record = race.run(plan, args, measure=measure, argv=argv)

    # Every entry ran once a round, with that round's seed, the threads and its own core.
    assert len(calls) == 3 * len(plan.entries)
    for r in range(3):
        in_round = calls[r * len(plan.entries) : (r + 1) * len(plan.entries)]
        assert {c[2] for c in in_round} == {r} and {c[3] for c in in_round} == {2}
    cores = {(e.point, e.contestant): e.core or "none" for e in plan.entries}
    assert all(cores[(point, who)] == core for point, who, _, _, core in calls)

    # Ratios: ours is 2x every peer (1x another of ours), oriented so that above 1 is ours ahead.
    for pair in record.data["summary"]["pairs"]:
        ahead = 1.0 if pair["peer"].startswith("ours") else 2.0
        expected = ahead if pair["higher_is_better"] else 1 / ahead
        assert pair["ratio_of_medians"] == pytest.approx(expected), pair
        assert pair["round_ratios"] == pytest.approx([expected] * len(pair["round_ratios"]))
        dropped = pair["metric"].startswith("solve")
        assert len(pair["round_ratios"]) == (2 if dropped else 3)
        assert (pair["low"], pair["high"]) == pytest.approx((expected, expected))
        if pair["target"] is not None:
            assert pair["met"] == (expected >= pair["target"])

    # The record: written through the package's helpers, a reference copy, tagged by threads.
    saved = results.load(data_dirs / "results" / f"{plan.kind}.2-threads.json")
    assert saved.data["rounds"] == 3 and saved.data["threads"] == 2
    assert saved.provenance["command"].startswith(f"python benchmarks/{name}.py --rounds 3")
    assert saved.provenance["quick"] is False and saved.provenance["peer_versions"] == {}
    (reference,) = (data_dirs / "reference").rglob(f"{plan.kind}.2-threads.json")
    assert results.load(reference).data["summary"] == saved.data["summary"]
    assert "2.00x" in capsys.readouterr().out


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_race_refuses_a_quick_reference_and_shrinks_its_quick_run(name, capsys):
    script = importlib.import_module(name)
    with pytest.raises(SystemExit):
        script.arguments(["--quick", "--reference", "--core", "none"])
    assert "no reference" in capsys.readouterr().err
    assert script.arguments(["--quick", "--rounds", "4", "--core", "none"]).rounds == 1


def test_options_say_what_to_do():
    made = race.parser("a race", rounds=5)
    with pytest.raises(SystemExit):
        race.parse(made, ["--rounds", "0", "--core", "none"])
    args = race.parse(race.parser("a race", rounds=5), ["--core", "none"])
    assert (args.rounds, args.threads, args.core, args.quick) == (5, 1, "none", False)


def test_rounds_rotate_who_goes_first():
    names = ["ours", "a", "b"]
    assert [race.rotated(names, r)[0] for r in range(4)] == ["ours", "a", "b", "ours"]
    assert sorted(race.rotated(names, 2)) == sorted(names)

    order = []
    entries = [race.Entry(p, c, "w", {}) for p in ("x", "y") for c in names]
    runs = race.interleave(
        entries, 2, 1, "none", lambda e, job, core: order.append((e.point, e.contestant)) or {}
    )
    assert order[:3] == [("x", "ours"), ("x", "a"), ("x", "b")]
    assert order[6:9] == [("x", "a"), ("x", "b"), ("x", "ours")]
    assert all(len(measured) == 2 for by in runs.values() for measured in by.values())


def test_a_race_quotes_the_median_of_its_rounds_ratios_within_their_range():
    found = race.ratio([10.0, 30.0, 20.0], [5.0, 10.0, 20.0], higher_is_better=True)
    assert found["ratio_of_medians"] == pytest.approx(20.0 / 10.0)
    assert found["round_ratios"] == pytest.approx([2.0, 3.0, 1.0])
    assert found["median_of_round_ratios"] == pytest.approx(2.0)
    assert (found["low"], found["high"]) == pytest.approx((1.0, 3.0))
    # Rounds that drift: the ratio of medians (3 / 1.875) sits at the edge of the rounds'
    # own ratios (2, 1.6, 4); the figure quoted, and judged, is the rounds' median.
    drifting = race.ratio([1.0, 3.0, 8.0], [0.5, 1.875, 2.0], higher_is_better=True)
    assert drifting["ratio_of_medians"] == pytest.approx(1.6)
    assert drifting["median_of_round_ratios"] == pytest.approx(2.0)
    runs = {"p": {"ours": [{"v": t} for t in (1.0, 3.0, 8.0)],
                  "peer": [{"v": b} for b in (0.5, 1.875, 2.0)]}}  # fmt: skip
    (judged,) = race.summarise(runs, [race.Pair("p", "ours", "peer", "v", target=1.8)])["pairs"]
    assert judged["met"] is True  # 2.0 over rounds; the ratio of medians would say 1.6
    assert "2.00x (rounds 1.60-4.00x)" in race.table(race.summarise(runs, []) | {"pairs": [judged]})
    seconds = race.ratio([1.0, 2.0], [3.0, 4.0], higher_is_better=False)  # peer / ours
    assert seconds["ratio_of_medians"] == pytest.approx(3.5 / 1.5)
    one = race.ratio([2.0], [1.0], higher_is_better=True)
    assert one["ratio_of_medians"] == 2.0 and one["low"] is None  # one round: no spread
    assert race.ratio([None], [1.0], higher_is_better=True)["ratio_of_medians"] is None
    with pytest.raises(ValueError, match="paired rounds"):
        race.ratio([1.0], [1.0, 2.0], higher_is_better=True)


def test_the_ppo_peers_race_judges_its_targets_on_the_median_of_its_rounds_ratios():
    ppo_peers = importlib.import_module("ppo_peers")
    # Rounds that drift: ours over SB3 is 2, 1.6 and 4 by round; the ratio of medians, 1.6,
    # misses the 1.8x target, and the median of the rounds' ratios, 2.0, meets it.
    ours, sb3, cleanrl = (1.0, 3.0, 8.0), (0.5, 1.875, 2.0), (1.0, 1.0, 1.0)
    setting = {name: [{metric: rate for metric in ppo_peers.METRICS} for rate in rates]
               for name, rates in (("ours", ours), ("sb3", sb3), ("cleanrl", cleanrl))}  # fmt: skip
    targets = {"sb3": ("sb3", 1.8)}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ppo_peers, "TARGETS", targets)
        summary = ppo_peers.summarise({"sb3": setting})
    for judged in summary["sb3"].values():
        assert judged["ours_over"]["sb3"]["ratio_of_medians"] == pytest.approx(1.6)
        assert judged["target"]["ratio"] == pytest.approx(2.0) and judged["target"]["met"]
    text = ppo_peers.table(summary)
    assert "2.00x 1.60-4.00x" in text  # ours over SB3 by round, in the SB3 row
    assert "target ours/sb3 >= 1.8x (median over rounds): 2.00x, met" in text


def test_spread_counts_what_was_measured():
    assert race.spread([None])["median"] is None
    found = race.spread([1.0, None, 3.0])
    assert (found["count"], found["median"], found["min"], found["max"]) == (2, 2.0, 1.0, 3.0)


def test_a_plan_whose_pair_names_no_entry_says_so():
    plan = race.Plan("bench.x", BENCHMARKS / "x.py", [race.Entry("p", "ours", "w", {})],
                     [race.Pair("p", "ours", "gymnax", "m")])  # fmt: skip
    with pytest.raises(ValueError, match="no such entry"):
        plan.check()


def test_steady_rate_counts_items_per_second_after_a_warm_up():
    calls = []
    rate = race.steady_rate(lambda: calls.append(time.sleep(0.001)), 10, 0.02, 3)
    assert 0 < rate["per_s"] <= 10 / 0.001 and rate["calls_per_repeat"] >= 1
    assert len(calls) >= 1 + 3 * rate["calls_per_repeat"]


STAND_IN = textwrap.dedent(
    """
    import os, subprocess, sys, time
    sys.path.insert(0, {benchmarks!r})
    import race

    def ok(job):
        child = subprocess.Popen(["sleep", "60"])  # must not outlive the contestant
        return {{"value": 2.0 * (job["seed"] + 1), "child": child.pid,
                 "omp": os.environ["OMP_NUM_THREADS"], "xla": os.environ["XLA_FLAGS"],
                 "cores": sorted(os.sched_getaffinity(0))}}

    def broken(job):
        raise RuntimeError("the stand-in broke")

    args = race.parse(race.parser("stand-in", rounds=1))
    race.serve({{"ok": ok, "broken": broken}}, args)
    """
)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_a_contestant_runs_in_a_fresh_process_whose_children_end_with_it(tmp_path):
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN.format(benchmarks=str(BENCHMARKS)))
    core = "0" if shutil.which("taskset") else "none"
    entry = race.Entry("p", "ours", "ok", {})
    found = race.run_worker(script, entry, {"seed": 1, "threads": 1}, core)
    assert found["value"] == 4.0 and found["process_seconds"] > 0
    assert found["omp"] == "1" and "intra_op_parallelism_threads=1" in found["xla"]
    if core == "0":
        assert found["cores"] == [0]  # pinned by taskset
    deadline = time.monotonic() + 5
    while _alive(found["child"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(found["child"])
    broken = race.Entry("p", "gymnax", "broken", {})
    with pytest.raises(race.RaceError, match="the stand-in broke"):
        race.run_worker(script, broken, {"seed": 0, "threads": 1}, "none")


def test_a_race_runs_its_entries_as_processes_and_records_its_notes(tmp_path, data_dirs):
    """race.main end to end with the default measure: each entry a real fresh process."""
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN.format(benchmarks=str(BENCHMARKS)))
    entries = [race.Entry("p", "ours", "ok", {}), race.Entry("p", "b", "ok", {})]
    plan = race.Plan("bench.stand-in", script, entries, [race.Pair("p", "ours", "b", "value")])
    record = race.main(
        lambda argv: race.parse(race.parser("a race", rounds=2), argv), lambda args: plan, {},
        ["--core", "none"], notes=lambda: {"peer c": "not raced: it does not install"},
    )  # fmt: skip
    (pair,) = record.data["summary"]["pairs"]
    assert pair["ratio_of_medians"] == pytest.approx(1.0) and len(pair["round_ratios"]) == 2
    assert record.data["notes"] == {"peer c": "not raced: it does not install"}
    assert [m["value"] for m in record.data["runs"]["p"]["ours"]] == [2.0, 4.0]  # seeds 0, 1
    assert (data_dirs / "results" / "bench.stand-in.json").exists()


def test_a_race_script_serves_one_contestant_as_a_worker(tmp_path):
    """The scripts' worker entry point: --worker NAME --job JSON prints one JSON line."""
    job = {"design": "tensor", "capacity": 2000, "batch": 32, "slice": 16, "seconds": 0.005,
           "repeats": 2, "seed": 0, "threads": 1}  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "buffer_peers.py"), "--worker", "ours", "--job",
         json.dumps(job)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    metrics = json.loads(done.stdout.strip().splitlines()[-1])
    assert metrics["stored"] == 2000 and metrics["sample_per_s"] > 0 and metrics["add_per_s"] > 0
    assert metrics["bytes_per_transition"] == 4 * (3 + 1 + 3 + 3)  # one float32 row each


@settings(max_examples=200, deadline=None)
@given(
    returns=st.lists(st.sampled_from([100.0, 474.9, 475.0, 500.0]), max_size=12),
    hold=st.integers(1, 4),
)
def test_the_rejax_race_solves_by_the_series_rule(returns, hold):
    """device_ppo_peers.py's rule (written out for the peers' venvs) is solved_at's: the
    first of the first ``hold`` evaluations in a row at 475, or none."""
    from hetero_tutorial.studies.device_ppo import solved_at

    evaluations = [(8192 * (i + 1), mean) for i, mean in enumerate(returns)]
    index = solved_at(evaluations, 475.0, hold)
    expected = None if index is None else evaluations[index][0]
    assert importlib.import_module("device_ppo_peers").solving(evaluations, hold) == expected
