"""The GPU reference run: one command line per step, a schedule that fits one device call with
budgets from recorded rates, four files back within the device's limits, and nothing of a
step left after its end or after a SIGKILLed runner.

The dry run (every step on the CPU, tiny) runs here, so that the script cannot rot."""

import contextlib
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
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


def test_the_schedule_fits_one_device_call_with_its_margins_and_says_how():
    assert schedule.total("all", "budget_s") <= schedule.DEADLINE_S
    assert schedule.DEADLINE_S <= schedule.CALL_LIMIT_S - 30
    for step in schedule.STEPS:
        assert step.margin >= 1.5 and step.budget_s >= step.margin * step.expected_s
        assert step.name in schedule.ARITHMETIC and step.rate in schedule.RATES
    table = schedule.schedule_table()
    assert table in schedule.__doc__  # the docstring's table is current
    assert all(word in table for word in ("budget", "margin", "source rate", "2.0x"))
    ledger = {step.bench for step in schedule.STEPS if step.part == 1}
    needed = {kind.removeprefix("bench.") for claim in CLAIMS for kind in claim.needs}
    assert needed <= ledger, "part 1 records every kind the ledger reads"
    order = [step.name for step in schedule.STEPS]
    first = [step.name for step in schedule.STEPS if step.part == 1 and step.bench in needed]
    assert order[0] == "setup" and order[1 : 1 + len(first)] == first, "the ledger's first"
    assert [step.part for step in schedule.STEPS] == sorted(step.part for step in schedule.STEPS)


def test_each_recorded_rate_is_what_its_record_says():
    folder = ROOT / "data" / "reference" / "amd-epyc-2-cores"

    def read(name: str) -> dict:
        return json.loads((folder / name).read_text())

    pieces = ("act", "env_step", "update")
    compiled = [row["compile_seconds"] for row in read("bench.compile.json")["rows"]
                if row["piece"] in pieces and row["mode"] != "eager"]  # fmt: skip
    tensor = [row["add_transitions_per_s"] for row in read("bench.buffers.json")["rows"]
              if row["design"] == "tensor" and row["capacity"] == 1_000_000]  # fmt: skip
    measured = {
        "ddpg": 1 / read("bench.ddpg.tensor.json")["env_steps_per_s"],
        "ppo": 1 / read("bench.ppo.all-accelerator.json")["env_steps_per_s"],
        "compile": sum(compiled) / len(compiled),
        "adds": 1 / tensor[0],
    }
    for key, seconds in measured.items():
        rate = schedule.RATES[key]
        assert rate.record is not None and (folder / rate.record).is_file()
        assert rate.seconds_per_unit == pytest.approx(seconds, rel=0.02), key
    assert {k for k, r in schedule.RATES.items() if r.record} == set(measured)
    assert all(r.source == "assumed" for r in schedule.RATES.values() if r.record is None)


def test_the_two_halves_of_bench_compile_are_filed_apart():
    from hetero_tutorial.app import bench

    parser, module = cli.build_parser(), bench.load("compile")
    tags = []
    for step in (s for s in schedule.STEPS if s.bench == "compile"):
        args = parser.parse_args(["bench", "compile", *step.arguments(False), "--json", "x"])
        tags.append(bench.record_tag(module, vars(args)))
    assert tags == ["pieces", "runs"]
    runs = parser.parse_args(["bench", "compile", "--pieces", "--tag", "runs"])
    assert runs.pieces == [] and not runs.no_ppo  # the second half times no piece alone


def test_a_profile_step_gives_py_spy_a_timeout_inside_its_own(monkeypatch, tmp_path):
    asked = []
    monkeypatch.setattr(reference, "run_processes", lambda commands, timeout, env: asked.append(
        (commands[0][0], timeout)) or "ok")  # fmt: skip
    step = next(s for s in schedule.STEPS if s.name == "profile")
    reference.run_step(step, tmp_path, dry=False, timeout=step.budget_s)
    ((command, timeout),) = asked
    py_spy = float(command[command.index("--timeout") + 1])
    assert timeout == step.budget_s and py_spy == step.budget_s - schedule.PY_SPY_SLACK_S


def test_a_failed_ddpg_seed_leaves_the_others_records_naming_it(monkeypatch, tmp_path):
    from hetero_tutorial.studies import ddpg_buffers

    monkeypatch.setattr(ddpg_buffers, "summarise_fields", lambda runs: {"runs": runs})
    for design in schedule.DDPG_DESIGNS:
        for seed in ("0", "2"):  # seed 1 failed: it wrote nothing
            record = results.Record("bench.ddpg", {"runs": [{"seed": int(seed)}]})
            results.save(record, tmp_path / "seeds" / f"bench.ddpg.{design}.seed{seed}.json")
    missing = reference.merge_ddpg(tmp_path, ["0", "1", "2"], pinned=False)
    assert missing == {design: ["1"] for design in schedule.DDPG_DESIGNS}
    merged = results.load(tmp_path / "records" / "bench.ddpg.tensor.json")
    assert merged.data["runs"] == [{"seed": 0}, {"seed": 2}]
    assert merged.data["missing_seeds"] == [1] and "--seed 0 2 " in merged.provenance["command"]


def test_every_record_names_the_code_s_commit(monkeypatch, tmp_path):
    real = results.code_commit
    real.cache_clear()
    monkeypatch.setenv(results.COMMIT_ENV_VAR, "abc123")  # undone after the test, as set below
    try:
        assert results.provenance()["commit"] == "abc123"
        # a device call has no .git: the bundle's COMMIT file names the commit instead
        monkeypatch.delenv(results.COMMIT_ENV_VAR)
        monkeypatch.setattr(results, "code_commit", lambda: None)
        (tmp_path / reference.COMMIT_FILE).write_text("def456\n")
        assert reference.code_commit(tmp_path) == "def456 (the wheel bundle's)"
        assert os.environ[results.COMMIT_ENV_VAR] == "def456 (the wheel bundle's)"
    finally:
        real.cache_clear()


def test_the_accelerator_slice_is_the_marked_tests():
    files = reference.accelerator_test_files()
    assert "tests/test_ppo_accelerator.py" in files and "tests/test_gpu_reference.py" not in files
    assert set(schedule.CAPTURE_TESTS) <= set(files)  # started first, beside the slice
    with pytest.raises(ValueError, match="1, 2 or all"):
        schedule.steps_of("3")
    assert [s.name for s in reference.chosen_steps("all", ["buffers"])] == ["setup", "buffers"]
    with pytest.raises(ValueError, match="no step nothing"):
        reference.chosen_steps("all", ["nothing"])


def test_a_slice_cut_off_before_its_report_is_counted_from_its_log(tmp_path):
    log = tmp_path / "tests.log"
    log.write_text(
        "[gw0] [ 33%] PASSED tests/test_a.py::test_one\n"
        "[gw1] [ 66%] FAILED tests/test_a.py::test_two[cuda]\n"
        "[gw0] [100%] SKIPPED tests/test_b.py::test_three\n"
        "tests/test_compiled.py::test_graphed[cuda] FAILED                    [100%]\n"
    )
    counts = reference.logged_test_counts(log)
    assert counts == {"tests": 4, "failed": 2, "skipped": 1,
                      "failures": ["tests/test_a.py::test_two[cuda]",
                                   "tests/test_compiled.py::test_graphed[cuda]"]}  # fmt: skip
    counts = {
        "tests": 3,
        "failed": 1,
        "skipped": 1,
        "failures": ["tests/test_a.py::test_two[cuda]"],
    }
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
        [sys.executable, str(SCRIPT), "--dry-run", "--part", "all", "--deadline", "0", "--out",
         str(out), "--work", str(tmp_path / "work")],
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
    assert {"bench.profile.all-accelerator.json", "bench.ddpg.trajectory.json",
            "bench.compile.pieces.json", "bench.compile.runs.json"} <= names  # fmt: skip
    assert all(r.provenance.get("commit") for r in results.load_all(machine))
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
    assert merged.data["missing_seeds"] == []
    # the merged record describes the machine, not the one core each seed's process had
    assert merged.provenance["fingerprint"]["usable_cores"] == usable_cores()


def _alive(processes: list) -> list:
    """Those of ``processes`` (psutil's) still running: neither gone nor a zombie."""
    import psutil

    alive = []
    for process in processes:
        with contextlib.suppress(psutil.Error):
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
    return alive


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_a_sigkilled_runner_leaves_no_bench_and_no_py_spy_behind(tmp_path):
    """SIGKILL runs no handler: each child must have asked to die with its parent."""
    import psutil

    from hetero_tutorial.profiling.pyspy import py_spy_executable

    if py_spy_executable() is None:
        pytest.skip("py-spy is not installed here")
    runner = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--dry-run", "--only", "profile", "--out",
         str(tmp_path / "out"), "--work", str(tmp_path / "work")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    running: list = []
    names: list[str] = []
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and runner.poll() is None:
            with contextlib.suppress(psutil.Error):
                running = psutil.Process(runner.pid).children(recursive=True)
                names = [" ".join(p.cmdline()) for p in running]
                # py-spy, and the program it samples, are running: the step is under way
                if any("py-spy" in n and "record" in n for n in names) and any(
                    "profiling.target" in n and "py-spy" not in n for n in names
                ):
                    break
            time.sleep(0.2)
        assert runner.poll() is None, "the runner ended before py-spy started"
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    finally:
        if runner.poll() is None:
            runner.kill()
    assert any("hetero_tutorial bench profile" in name for name in names), names
    gone = time.monotonic() + 15
    while time.monotonic() < gone and _alive(running):
        time.sleep(0.2)
    left = _alive(running)
    for process in left:  # not to leave them to the next test
        process.kill()
    assert not left, [p.cmdline() for p in left]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_the_group_run_in_its_own_session_dies_with_a_sigkilled_parent():
    """py-spy's session of its own is out of reach of its parent's group: the child asks Linux
    to end it with its parent. A sleep writes nothing, so no broken pipe would end it instead."""
    import psutil

    parent = subprocess.Popen(
        [sys.executable, "-c", "from hetero_tutorial.profiling.pyspy import run_in_own_group; "
         "run_in_own_group(['sleep', '120'], 300)"], cwd=ROOT,
    )  # fmt: skip
    try:
        deadline, children = time.monotonic() + 60, []
        while time.monotonic() < deadline and not children:
            children = psutil.Process(parent.pid).children()
            time.sleep(0.1)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    finally:
        if parent.poll() is None:
            parent.kill()
    assert children, "the child never started"
    gone = time.monotonic() + 5
    while time.monotonic() < gone and _alive(children):
        time.sleep(0.1)
    left = _alive(children)
    for process in left:
        process.kill()
    assert not left


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
