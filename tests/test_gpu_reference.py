"""The GPU reference run: one command line per step, a schedule that fits one device call,
four files back within the device's limits, and nothing of a step left after its end.

The dry run (every step on the CPU, tiny) runs here, so that the script cannot rot."""

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import pytest

from hetero_tutorial.app import cli
from hetero_tutorial.core import results
from hetero_tutorial.core.machine import usable_cores
from hetero_tutorial.ledger.claims import CLAIMS

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_reference.py"
NAME = re.compile(r"[A-Za-z0-9._-]+")
"""The names the device call returns: letters, digits, '.', '_', '-'."""


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


reference = _module("gpu_reference")
schedule = _module("gpu_schedule")


def _options(arguments: list[str]) -> dict[str, list[str]]:
    """Each option of a command line with the values that follow it."""
    found: dict[str, list[str]] = {}
    option = None
    for word in arguments:
        if word.startswith("-") and not re.fullmatch(r"-?\d+(\.\d+)?", word):
            option = word
            found[option] = []
        else:
            found[option].append(word)
    return found


@pytest.mark.parametrize("step", [s for s in schedule.STEPS if s.name != "setup"],
                         ids=lambda s: s.name)  # fmt: skip
def test_a_steps_dry_and_full_command_lines_differ_in_budgets_only(step):
    full, dry = _options(step.arguments(dry=False)), _options(step.arguments(dry=True))
    differing = {o for o in full.keys() | dry.keys() if full.get(o) != dry.get(o)}
    assert differing <= schedule.BUDGET_OPTIONS, differing - schedule.BUDGET_OPTIONS
    assert not set(_options(list(step.path))) & schedule.BUDGET_OPTIONS  # a path is no budget
    if step.bench is not None and step.name != "ddpg-seeds":  # both parse as the bench's
        parser = cli.build_parser()
        for arguments in (step.arguments(False), step.arguments(True)):
            parser.parse_args(["bench", step.bench, *arguments, "--json", "x.json"])


def test_the_schedule_fits_a_device_call_with_its_margin_and_says_how():
    for part in schedule.PARTS:
        assert schedule.total(part, "budget_s") <= schedule.PART_LIMIT_S
    for step in schedule.STEPS:
        assert step.budget_s >= 1.5 * step.expected_s and step.name in schedule.ARITHMETIC
    assert schedule.schedule_table() in schedule.__doc__  # the docstring's table is current
    ledger = {step.bench for step in schedule.STEPS if step.part == 1}
    needed = {kind.removeprefix("bench.") for claim in CLAIMS for kind in claim.needs}
    assert needed <= ledger, "part 1 records every kind the ledger reads"
    assert [s.name for s in schedule.steps_of("1")][:2] == ["setup", "tests"]


def test_the_accelerator_slice_is_the_marked_tests():
    files = reference.accelerator_test_files()
    assert "tests/test_ppo_accelerator.py" in files and "tests/test_gpu_reference.py" not in files
    with pytest.raises(ValueError, match="1, 2 or all"):
        schedule.steps_of("3")


def test_a_slice_cut_off_before_its_report_is_counted_from_its_log(tmp_path):
    log = tmp_path / "tests.log"
    log.write_text(
        "[gw0] [ 33%] PASSED tests/test_a.py::test_one\n"
        "[gw1] [ 66%] FAILED tests/test_a.py::test_two[cuda]\n"
        "[gw0] [100%] SKIPPED tests/test_b.py::test_three\n"
    )
    counts = reference.logged_test_counts(log)
    assert counts == {"tests": 3, "failed": 1, "skipped": 1,
                      "failures": ["tests/test_a.py::test_two[cuda]"]}  # fmt: skip
    summary = reference.summary_lines([{"step": "tests", "status": "1 of 3 tests failed",
                                        "seconds": 40.0, "expected": 30, "budget": 45,
                                        "tests": counts}])  # fmt: skip
    assert "  failed: tests/test_a.py::test_two[cuda]" in summary
    assert summary[-1] == "tests: 3 run, 1 failed, 1 skipped"


def _check_device_limits(out: Path) -> list[Path]:
    """What the device call would return: at most 8 files (we write 4), each under 16 MiB,
    at most two folders down (we write none), named with letters, digits, '.', '_', '-'."""
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert len(files) <= 4, files
    for path in files:
        assert path.parent == out and NAME.fullmatch(path.name), path
        assert path.stat().st_size <= 16 * 2**20, path
    return files


@pytest.mark.slow
def test_a_dry_run_records_what_every_claim_needs_within_the_device_limits(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--dry-run", "--out", str(out), "--work",
         str(tmp_path / "work")],
        capture_output=True, text=True, timeout=1800, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    files = _check_device_limits(out)
    assert {p.name for p in files} == {
        "gpu_reference.partall.tar.gz", "summary.txt", "summary.json", "gpu_reference.log"
    }  # fmt: skip
    rows = json.loads((out / "summary.json").read_text())
    assert [row["step"] for row in rows] == [step.name for step in schedule.STEPS]
    assert all(row["status"].startswith("ok") for row in rows), rows
    tests = next(row["tests"] for row in rows if row["step"] == "tests")
    assert tests["tests"] > 10 and tests["failed"] == 0
    log = (out / "gpu_reference.log").read_text()
    assert "[1/" in log and "total" in log and "nvidia-smi" in log

    data = tmp_path / "data"
    env = {**os.environ, "HETERO_TUTORIAL_DATA": str(data)}
    filed = subprocess.run(
        [sys.executable, str(SCRIPT), "--unpack", str(out / "gpu_reference.partall.tar.gz")],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
    )  # fmt: skip
    assert filed.returncode == 0, filed.stderr
    (machine,) = (data / "reference").iterdir()
    kinds = {record.kind for record in results.load_all(machine)}
    needed = {kind for claim in CLAIMS for kind in claim.needs}
    assert needed <= kinds, needed - kinds
    names = {path.name for path in machine.glob("*.json")}
    assert {"bench.profile.all-accelerator.json", "bench.ddpg.trajectory.json"} <= names
    native = results.load(machine / "bench.profile.all-accelerator-native.json")
    assert native.data["native"] and not native.data["nonblocking"]  # native, sampled here
    share = results.load(machine / "bench.profile.all-accelerator.json")
    assert share.data["nonblocking"] and not share.data["native"]
    for profile in (native, share):
        assert Path(profile.data["flamegraph_svg"]).name.endswith(".svg")
        assert (ROOT / profile.data["flamegraph_svg"]).is_file() or Path(
            profile.data["flamegraph_svg"]
        ).is_file()
    merged = results.load(machine / "bench.ddpg.tensor.json")
    assert merged.data["seeds"] == [0] and len(merged.data["runs"]) == 1
    # the merged record describes the machine, not the one core each seed's process had
    assert merged.provenance["fingerprint"]["usable_cores"] == usable_cores()


def test_a_killed_run_still_returns_every_step_finished_before(tmp_path):
    out, work = tmp_path / "out", tmp_path / "work"
    runner = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--dry-run", "--part", "2", "--out", str(out),
         "--work", str(work)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    summary, finished = out / "summary.json", []
    try:
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline and runner.poll() is None:
            rows = json.loads(summary.read_text()) if summary.is_file() else []
            finished = [row["step"] for row in rows]
            if "profile-native" in finished:
                break
            time.sleep(0.5)
        time.sleep(3)  # the next step has started
        import psutil

        running = psutil.Process(runner.pid).children(recursive=True)
        runner.send_signal(signal.SIGKILL)  # no handler runs: only what was written counts
        runner.wait()
    finally:
        if runner.poll() is None:
            runner.kill()
    assert finished[:2] == ["setup", "profile-native"], finished
    _check_device_limits(out)
    with tarfile.open(out / "gpu_reference.part2.tar.gz") as tar:
        names = tar.getnames()
    assert "records/bench.profile.profile-native.json" in names
    assert any(name.startswith("profiles/") and name.endswith("-native.svg") for name in names)
    gone = time.monotonic() + 10
    while time.monotonic() < gone and any(p.is_running() and p.status() != "zombie"
                                          for p in running):  # fmt: skip
        time.sleep(0.2)
    assert not [p for p in running if p.is_running() and p.status() != "zombie"]


# Stands in for py-spy: like `py-spy record -- target`, it launches the target as its child,
# then waits; the child (a long sleep) writes its pid where the test can read it.
FAKE_PY_SPY = textwrap.dedent(
    """\
    #!{python}
    import subprocess, sys, time
    child = subprocess.Popen(sys.argv[sys.argv.index("--") + 1 :])
    with open({pid_file!r}, "w") as out:
        out.write(f"{{child.pid}}")
    time.sleep(120)
    """
)

# Stands in for `bench profile`: runs the fake py-spy in a session of its own, as
# profiling.pyspy.run_in_own_group does (so that py-spy's own timeout can end it with its target).
BENCH = textwrap.dedent(
    """\
    import subprocess, sys
    target = [sys.executable, "-c", "import time; time.sleep(120)"]
    subprocess.Popen([{fake!r}, "--", *target], start_new_session=True).wait(timeout=1800)
    """
)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_a_step_timeout_ends_py_spy_and_the_program_it_samples(tmp_path):
    import psutil

    pid_file, fake = tmp_path / "target.pid", tmp_path / "py-spy"
    fake.write_text(FAKE_PY_SPY.format(python=sys.executable, pid_file=str(pid_file)))
    fake.chmod(0o755)
    command = [sys.executable, "-c", BENCH.format(fake=str(fake))]
    status = reference.run_processes([(command, tmp_path / "step.log")], 8.0, dict(os.environ))
    assert status == "timed out after 8 s"
    target = int(pid_file.read_text())
    try:
        deadline = time.monotonic() + 5
        while psutil.pid_exists(target) and time.monotonic() < deadline:
            if psutil.Process(target).status() == "zombie":
                break
            time.sleep(0.1)
        alive = psutil.pid_exists(target) and psutil.Process(target).status() != "zombie"
        assert not alive, "the sampled program outlived its step"
    finally:
        if psutil.pid_exists(target):
            os.kill(target, signal.SIGKILL)
