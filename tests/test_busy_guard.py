"""The busy-machine guard withholds a study's verdicts where the study waited for a CPU
that others held, and only then: a neighbour on a core the study never runs on is not one.

These tests load cores themselves, so `make unit` runs them alone, after the rest: beside
another test worker the "quiet" half would itself wait. The pinned studies run in child
processes (``taskset``'s view: the child's every thread on the cores it is given).
"""

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hetero_tutorial.core import contention, machine_load, results
from hetero_tutorial.core.machine import usable_cores
from hetero_tutorial.ledger import claims
from hetero_tutorial.ledger.rules import Status
from hetero_tutorial.notebook import step_drift, timing_report
from hetero_tutorial.studies import sweeps, threads

LINUX = sys.platform.startswith("linux") and contention.schedstat_readable()
needs_two_cores = pytest.mark.skipif(
    not LINUX or len(contention.allowed_cpus()) < 2,
    reason="needs Linux's run-queue wait and two CPUs this process may use",
)

# A neighbour that ends by itself within a minute, should the test die before killing it:
# pinned to one core, it spins (``on`` s) and sleeps (``off`` s) in turn.
NEIGHBOUR = (
    "import os, sys, time\n"
    "core, on, off = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])\n"
    "os.sched_setaffinity(0, {core})\n"
    "end = time.time() + 60\n"
    "while time.time() < end:\n"
    "    t = time.time() + on\n"
    "    while time.time() < t:\n"
    "        pass\n"
    "    time.sleep(off)\n"
)

# A study as a notebook runs one: a matrix-product loop under the guard, on the cores and
# threads it is given; it prints its reading.
STUDY = (
    "import json, os, sys, time\n"
    "import torch\n"
    "from hetero_tutorial.core import machine_load\n"
    "cores, count = {int(c) for c in sys.argv[1].split(',')}, int(sys.argv[2])\n"
    "os.sched_setaffinity(0, cores)\n"
    "torch.set_num_threads(count)\n"
    "a = torch.randn(256 * count, 256 * count)\n"
    "@machine_load.guarded('a matmul loop')\n"
    "def loop():\n"
    "    end = time.monotonic() + 3.0\n"
    "    while time.monotonic() < end:\n"
    "        torch.tanh(a @ a)\n"
    "loop()\n"
    "print(json.dumps(machine_load.latest().to_json()))\n"
)


@pytest.fixture
def guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard on (the test suite switches it off)."""
    monkeypatch.setenv(machine_load.GUARD_ENV_VAR, "1")


@pytest.fixture
def neighbour() -> Iterator[Callable[..., None]]:
    """``neighbour(core, on=1.0, off=0.0)`` starts another program's busy process on ``core``
    (the shell that starts it exits at once, so it is not in this process tree, as a
    browser is not); all end with the test."""
    pids = []

    def start(core: int, on: float = 1.0, off: float = 0.0) -> None:
        command = f'"{sys.executable}" -c "$0" {core} {on} {off} >/dev/null 2>&1 & echo $!'
        shell = subprocess.run(
            ["sh", "-c", command, NEIGHBOUR],
            capture_output=True,
            text=True,
            check=True,
        )
        pids.append(int(shell.stdout))
        time.sleep(0.3)

    try:
        yield start
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)


def pinned_study(cores: str, count: int, **popen: object) -> machine_load.Busyness:
    """The reading of :data:`STUDY` run on ``cores`` with ``count`` threads, in a child."""
    env = os.environ | {machine_load.GUARD_ENV_VAR: "1"}
    child = subprocess.run(
        [sys.executable, "-c", STUDY, cores, str(count)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        **popen,  # type: ignore[arg-type]
    )
    assert child.returncode == 0, child.stderr
    return machine_load.Busyness.from_json(json.loads(child.stdout.splitlines()[-1]))


@needs_two_cores
def test_a_neighbour_on_another_core_leaves_a_one_thread_study_judged(guard, neighbour):
    neighbour(1)
    reading = pinned_study("0", 1)
    assert reading.other_cores > 0.5  # the old machine-wide rule would call this busy
    assert reading.method == "run-queue wait"
    assert not reading.busy, reading.line()


@needs_two_cores
def test_a_neighbour_on_the_studys_own_core_withholds_it_and_says_why(guard, neighbour):
    neighbour(0)
    reading = pinned_study("0", 1)
    assert reading.busy
    assert reading.load["wait_share"] > contention.WAIT_SHARE
    assert "waited" in reading.line() and "for a CPU per second they ran" in reading.line()
    assert "read by run-queue wait" in reading.line()


@needs_two_cores
@pytest.mark.parametrize("core", [0, 1])
def test_a_two_thread_study_with_a_neighbour_on_either_core_is_not_judged(guard, neighbour, core):
    neighbour(core)
    reading = pinned_study("0,1", 2)
    assert reading.busy
    assert reading.load["wait_share"] > contention.WAIT_SHARE
    assert reading.load["others_on_study_cpus"] > contention.OTHERS_ON_STUDY_CPUS


@needs_two_cores
def test_a_bursty_neighbour_on_the_studys_core_is_caught(guard, neighbour):
    neighbour(0, on=0.3, off=0.3)
    reading = pinned_study("0", 1)
    assert reading.busy
    assert reading.load["wait_share"] > contention.WAIT_SHARE


def _cgroup_with_one_cpu() -> Path | None:
    """A fresh cgroup with a quota of one CPU, where this process may make one."""
    found = contention._cgroup_dir()
    if os.geteuid() != 0 or found is None:
        return None
    folder, version = found
    group = folder / f"hetero-guard-test-{os.getpid()}"
    try:
        group.mkdir()
        if version == 2:
            (group / "cpu.max").write_text("100000 100000")
        else:
            (group / "cpu.cfs_period_us").write_text("100000")
            (group / "cpu.cfs_quota_us").write_text("100000")
    except OSError:
        with contextlib.suppress(OSError):
            group.rmdir()
        return None
    return group


@needs_two_cores
def test_a_quota_below_the_studys_threads_reads_as_throttled_not_as_others(guard):
    group = _cgroup_with_one_cpu()
    if group is None:
        pytest.skip("no writable cgroup with a CPU controller here (needs root)")
    procs = str(group / "cgroup.procs")

    def join() -> None:  # in the child, before it runs the study
        Path(procs).write_text(str(os.getpid()))

    try:
        reading = pinned_study("0,1", 2, preexec_fn=join)
    finally:
        time.sleep(0.2)
        with contextlib.suppress(OSError):
            group.rmdir()
    assert reading.busy
    assert reading.load["quota"] == 1.0
    line = reading.line()
    assert "this kernel may use 1 CPU" in line and "the study ran 2 threads" in line
    assert "use 1" in line and "others used" not in line


def thread_sweep() -> list[dict]:
    """A small thread sweep (notebook 03's study): its rows."""
    return sweeps.width_sweep(
        "CartPole-v1",
        [64],
        ("all-cpu",),
        iterations=3,
        num_steps=32,
        update_epochs=1,
        threads=(1, None),
    )


def spin_every_core(neighbour: Callable[..., None]) -> None:
    for core in contention.allowed_cpus():
        neighbour(core)


@needs_two_cores
def test_a_quiet_studys_verdict_stays_when_a_later_study_is_busy(guard, neighbour):
    quiet_rows = thread_sweep()
    assert not machine_load.latest().busy, machine_load.latest().line()
    spin_every_core(neighbour)
    busy_rows = thread_sweep()
    busy = machine_load.latest()
    assert busy.busy
    quiet_lines = threads.thread_rule(threads.thread_effects(quiet_rows))
    assert not any("busy machine" in line for line in quiet_lines)
    assert threads.thread_rule(threads.thread_effects(busy_rows)) == [busy.line()]
    assert all(e["verdict"] == threads.NOT_JUDGED for e in threads.thread_effects(busy_rows))
    assert machine_load.withheld(quiet_rows) is None
    assert machine_load.withheld(busy_rows) == busy


def test_a_figure_ten_times_off_this_cpus_reference_flags_the_study(
    guard, monkeypatch: pytest.MonkeyPatch, tmp_path
):
    measured = {"device": "cpu", "width": 32, "batch_size": 16}
    row = measured | {"seconds_per_call": 1e-3, "iqr_s": 1e-5}
    reference = results.Record(
        "bench.crossover",
        {"grid": [measured | {"seconds_per_call": 1e-4, "iqr_s": 1e-6}], "policy_step": {}},
    )
    results.save(reference, directory=tmp_path / "this-machine")
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path)
    with machine_load.study("the forward-pass grid"):  # a quiet study: only the figure tells
        pass
    assert not machine_load.latest().busy
    timing_report.against_reference(grid=[row])
    flagged = machine_load.withheld()
    assert flagged is not None
    assert "width 32 at batch 16: 10x this CPU's reference record" in flagged.line()
    assert "not judged" in step_drift.drift_sentence(
        row | {"median_s": 1e-3}, row | {"median_s": 1e-3}, 1.0
    )


def test_a_record_from_a_busy_study_carries_the_mark_and_the_ledger_judges_nothing(guard):
    busy = machine_load.Busyness(
        "the policy step", 4.0, {"wait_share": 0.6, "others_on_study_cpus": 0.9}
    )
    record = results.Record("bench.crossover", {"policy_step": {}})
    record.provenance["machine_load"] = busy.to_json()
    assert record.provenance["machine_load"]["busy"]
    verdict = claims.judge(claims.claim("C1-CPU"), {"bench.crossover": [record]})
    assert verdict.status is Status.NO_VERDICT
    assert verdict.measured == busy.line()


def test_a_busy_study_withholds_the_claims_that_read_it_not_its_records_others(
    monkeypatch: pytest.MonkeyPatch,
):
    """Notebook 00's record holds five studies: a busy grid withholds C3 and the batch
    advice, while C1's step, timed quietly, is judged (as 00 judged it)."""
    from hetero_tutorial.ledger import advice

    cause = {"wait_share": 0.6, "others_on_study_cpus": 0.9}
    step = machine_load.Busyness("the policy step", 4.0, {"wait_share": 0.0})
    grid = machine_load.Busyness("the forward-pass grid", 4.0, cause)
    monkeypatch.setattr(machine_load, "_readings", [grid, step])
    monkeypatch.setattr(machine_load, "_recorded", 0)
    costs = {"cpu": {"median_s": 3e-4, "iqr_s": 1e-6}}
    data = {"policy_step": costs, "policy_step_again": costs, "value_update": costs, "grid": []}
    records = {"bench.crossover": [results.Record("bench.crossover", data)]}
    assert [r["study"] for r in records["bench.crossover"][0].provenance["machine_load"][
        "busy_studies"]] == ["the forward-pass grid"]  # fmt: skip
    assert claims.judge(claims.claim("C1-CPU"), records).status is Status.HELD
    assert claims.judge(claims.claim("C3"), records).measured == grid.line()
    answers = {item["question"]: item["advice"] for item in advice.advice(records)}
    assert answers["which batch sizes (per forward call)"] == grid.line()
    assert "not judged" not in answers["where each phase should run"]
    # a record from before the list of busy studies: its one busy study withholds them all
    old = results.Record("bench.crossover", data, records["bench.crossover"][0].provenance)
    del old.provenance["machine_load"]["busy_studies"]
    assert claims.judge(claims.claim("C1-CPU"), {"bench.crossover": [old]}).measured == grid.line()


def test_a_record_from_before_the_run_queue_reading_is_read_as_others_load():
    old = {"study": "a study", "other_load_cores": 1.0, "seconds": 2.0, "off_reference": []}
    reading = machine_load.Busyness.from_json(old | {"busy": True})
    assert reading.busy and "others used 1.00 cores" in reading.line()


def test_the_ledger_counts_busy_claims_apart_from_one_repeat():
    from hetero_tutorial.ledger import verdicts

    busy = machine_load.Busyness("a study", 2.0, {"wait_share": 1.0, "others_on_study_cpus": 1})
    table = [
        {"machine": "here", "claim": "C2", "status": "no verdict", "measured": busy.line()},
        {"machine": "here", "claim": "C8", "status": "no verdict", "measured": "one seed"},
    ]
    summary = verdicts.takeaways(table, machine="here")[0]
    assert "1 had no verdict (too few repeats), 1 were measured on a busy machine" in summary


@pytest.mark.skipif(usable_cores() < 1, reason="no CPU")
def test_without_run_queue_wait_others_count_only_past_the_spare_cpus():
    """The fallback (macOS, Windows): others' load against the CPUs the study left free."""
    spare = {"wait_share": None, "allowed": 8, "threads": 2}
    assert not contention.verdict_causes(spare | {"other_cores": 5.5})
    assert contention.verdict_causes(spare | {"other_cores": 6.5})
    full = {"wait_share": None, "allowed": 2, "threads": 2}
    assert contention.verdict_causes(full | {"other_cores": 0.3})
    assert "others' load" in contention.method(spare)
