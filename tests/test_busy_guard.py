"""The busy-machine guard withholds a study's verdicts when others load the machine.

These tests load every core themselves, so `make unit` runs them alone, after the rest:
beside another test worker the "quiet" half would itself see a busy machine.
"""

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from hetero_tutorial.core import machine_load, results
from hetero_tutorial.core.machine import usable_cores
from hetero_tutorial.ledger import claims
from hetero_tutorial.ledger.rules import Status
from hetero_tutorial.notebook import timing_report
from hetero_tutorial.studies import sweeps, threads

# A spinner that ends by itself within a minute, should the test die before killing it.
SPIN = "import time\nend = time.time() + 60\nwhile time.time() < end:\n    pass"


@pytest.fixture
def guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard on (the test suite switches it off) and no earlier study's reading."""
    monkeypatch.setenv(machine_load.GUARD_ENV_VAR, "1")
    monkeypatch.setattr(machine_load, "_readings", [])
    monkeypatch.setattr(machine_load, "_recorded", 0)


@pytest.fixture
def load_on_every_core() -> Iterator[None]:
    """One spinning process per usable core, started outside this process tree (the shell
    that starts each exits at once, so the spinner is another program's, as a browser is)."""
    pids = []
    try:
        for _ in range(usable_cores()):
            shell = subprocess.run(
                ["sh", "-c", f'"{sys.executable}" -c "$0" >/dev/null 2>&1 & echo $!', SPIN],
                capture_output=True,
                text=True,
                check=True,
            )
            pids.append(int(shell.stdout))
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)


def thread_sweep() -> list[str]:
    """A small thread sweep (notebook 03's study) and the rule it prints."""
    rows = sweeps.width_sweep(
        "CartPole-v1",
        [64],
        ("all-cpu",),
        iterations=3,
        threads=(1, None),
        num_steps=32,
        update_epochs=1,
    )
    return threads.thread_rule(threads.thread_effects(rows))


def test_a_loaded_machine_withholds_the_thread_sweeps_verdict(guard, load_on_every_core):
    lines = thread_sweep()
    reading = machine_load.latest()
    assert reading is not None and reading.busy
    assert reading.other_cores > machine_load.BUSY_CORES
    assert lines == [reading.line()]
    assert "measured on a busy machine" in lines[0] and "not judged" in lines[0]
    assert "others used" in lines[0]


def test_a_quiet_machine_gives_the_thread_sweeps_verdict(guard):
    lines = thread_sweep()
    reading = machine_load.latest()
    assert reading is not None and not reading.busy, reading
    assert lines and not any("busy machine" in line for line in lines)


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
    quiet = machine_load.Busyness("the forward-pass grid", other_cores=0.0, seconds=2.0)
    monkeypatch.setattr(machine_load, "_readings", [quiet])  # only the figure can tell
    timing_report.against_reference(grid=[row])
    flagged = machine_load.withheld()
    assert flagged is not None
    assert "width 32 at batch 16: 10x this CPU's reference record" in flagged.line()
    assert "not judged" in timing_report.drift_sentence(
        row | {"median_s": 1e-3}, row | {"median_s": 1e-3}, 1.0
    )


def test_a_record_from_a_busy_study_carries_the_mark_and_the_ledger_judges_nothing(
    guard, monkeypatch
):
    busy = machine_load.Busyness("the policy step", other_cores=1.0, seconds=4.0)
    monkeypatch.setattr(machine_load, "_readings", [busy])
    record = results.Record("bench.crossover", {"policy_step": {}})
    assert record.provenance["machine_load"]["busy"]
    verdict = claims.judge(claims.claim("C1-CPU"), {"bench.crossover": [record]})
    assert verdict.status is Status.NO_VERDICT
    assert verdict.measured == busy.line()


def test_a_busy_study_leaves_no_thread_verdict_and_the_ledger_says_why(monkeypatch):
    """Verdict words written into tables (the thread sweep's, the allocator's thread check)
    read "not judged" under a busy reading, and the ledger counts such claims apart from
    those with one repeat."""
    from hetero_tutorial.allocator import trials
    from hetero_tutorial.ledger import verdicts
    from hetero_tutorial.studies import threads

    busy = machine_load.Busyness("a study", 1.0, 2.0)
    monkeypatch.setattr(machine_load, "_readings", [busy])
    monkeypatch.setattr(machine_load, "_measuring", False)
    assert threads._verdict(True) == threads.NOT_JUDGED
    rows = [
        {"rollout": "cpu", "storage": "cpu", "update": "cpu", "threads": t,
         "seconds_per_iteration": s, "iteration_seconds": [s, s * 1.01, s * 0.99]}
        for t, s in ((1, 1.0), (2, 2.0))
    ]  # fmt: skip
    assert trials.thread_check(rows, rows[0])["threads_verdict"].startswith("not judged")
    table = [
        {"machine": "here", "claim": "C2", "status": "no verdict", "measured": busy.line()},
        {"machine": "here", "claim": "C8", "status": "no verdict", "measured": "one seed"},
    ]
    summary = verdicts.takeaways(table, machine="here")[0]
    assert "1 had no verdict (one repeat), 1 were measured on a busy machine" in summary
