"""One device call that records what the claims ledger and the notebooks read, on a CUDA GPU.

What: runs the steps of :mod:`gpu_schedule` (each ``python -m hetero_tutorial bench NAME``
the ledger and the notebooks' reference sections need, and the GPU test slice), each in a
fresh process group of its own with its own timeout, and files what they wrote into one
archive. Why: a GPU machine is lent for minutes, maybe once; one prepared call of at most
600 s must bring back records we can trust, whenever it is cut off. How, on the GPU
machine, from the repository root (Python 3.12 with a CUDA build of PyTorch and NumPy, no
network)::

    python3 benchmarks/gpu_reference.py --wheels build/gpu-wheels --part all --out "$OUT"

``--wheels`` installs the wheels ``make gpu-wheels`` downloaded here (what the machine's
image lacks) with ``pip install --no-index --no-deps --target`` into a temporary folder
first; the package itself runs from the repository it is started in. ``nvidia-smi`` and
the GPU's persistence mode go into the log, and the code's commit (git's, or the one the
bundle was made at: a device call carries no ``.git``) into every record. Then the
ledger's records, the test slice (``pytest -m accelerator`` with pytest-xdist, the CUDA
graph capture tests started first beside it: its failures go into the summary and stop
nothing), then the notebooks' records.

What comes back: everything is written into a work folder (``--work``, default
``build/gpu-reference/``) and the output folder receives four files only, each rewritten
after every step (so a run killed at any moment still returns every step finished before
it): ``gpu_reference.part<PART>.tar.gz`` (``partall`` for the one call: every record, log,
flame graph and the test slice's reports), ``summary.txt``, ``summary.json`` and
``gpu_reference.log`` (this run's own log). Back here::

    .venv/bin/python benchmarks/gpu_reference.py --unpack /path/to/gpu_reference.partall.tar.gz

puts each record under ``data/reference/<machine>/`` (and its flame graph under
``profiles/``); then ``python -m tools.docs regenerate`` (``make docs``).

``--dry-run`` runs every step on the CPU with the dry budgets of :mod:`gpu_schedule` (a test
does, so the script cannot rot): the same command lines but for their budgets. A full run
stops at a deadline (default :data:`gpu_schedule.DEADLINE_S`, 30 s inside the call's 600):
a step that would start after it is skipped, and a step's timeout never reaches past it; a
profile's py-spy gets its own timeout from the step's. A timeout, a Ctrl-C or a SIGTERM ends
the step's whole process tree (py-spy and the program it samples included), and a SIGKILLed
runner takes its steps with it (each child asks Linux for SIGKILL when its parent dies).
``--only NAME ...`` runs those steps alone after the set-up (a rerun of what a call lost).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # gpu_schedule, beside this script
import gpu_schedule as schedule

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(1, str(REPO))  # the package runs from the repository, installed or not
from hetero_tutorial.core.processes import own_group_dying_with_parent  # noqa: E402

WORK = REPO / "build" / "gpu-reference"
LOG_NAME = "gpu_reference.log"
MAX_FILE_BYTES = 16 * 2**20
"""The most the device call returns per file."""
LOG_TAIL_BYTES = 2**20
"""A step's log goes into the archive up to its last MiB."""
DRY_STEP_TIMEOUT_S = 900.0
"""A dry run's timeout per step: it proves the code paths on a CPU, not the schedule."""
GRACE_S = 5.0
"""How long a process tree has between SIGTERM and SIGKILL."""


class RunLog:
    """This run's own log: every line printed and written to ``<out>/gpu_reference.log``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = path.open("a", buffering=1)

    def __call__(self, text: str = "", end: str = "\n") -> None:
        print(text, end=end, flush=True)
        self.file.write(text + end)

    def close(self) -> None:
        self.file.close()


# --- processes: each step in a process group of its own, ended as a tree -------------------


def _tree(pid: int) -> list:
    """The process ``pid`` and all its descendants (in whatever session: py-spy starts one)."""
    try:
        import psutil
    except ImportError:  # then the process group is all we can reach
        return []
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def end_tree(process: subprocess.Popen, grace: float = GRACE_S) -> None:
    """End ``process``, its process group and every descendant: SIGTERM, then SIGKILL.

    The descendants are collected before any signal, while they are still children of the
    tree: py-spy runs in a session of its own (so its own timeout can end it with its
    target), which a signal to the step's process group would not reach.
    """
    members = _tree(process.pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGTERM)
    for member in members:
        with contextlib.suppress(Exception):
            member.terminate()
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_running(m) for m in [*members, process]):
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    for member in members:
        with contextlib.suppress(Exception):
            member.kill()
    process.wait()


def _running(member) -> bool:
    if isinstance(member, subprocess.Popen):
        return member.poll() is None
    with contextlib.suppress(Exception):
        return member.is_running() and member.status() != "zombie"
    return False


def run_processes(commands: list[tuple[list[str], Path]], timeout: float, env: dict) -> str:
    """Run each command (with its log file) at once, each in its own session, to the end or
    to ``timeout`` seconds; a timeout or an interruption ends every process tree."""
    processes = []
    try:
        for command, log in commands:
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("w") as out:
                started = subprocess.Popen(
                    command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO,
                    preexec_fn=own_group_dying_with_parent,
                )  # fmt: skip
                processes.append(started)
        deadline = time.monotonic() + timeout
        for process in processes:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        for process in processes:
            end_tree(process)
        return f"timed out after {timeout:.0f} s"
    except BaseException:
        for process in processes:
            end_tree(process)
        raise
    failed = [p.returncode for p in processes if p.returncode != 0]
    return "ok" if not failed else f"failed (exit {failed[0]})"


def step_environment(dry: bool) -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if dry:
        env["CUDA_VISIBLE_DEVICES"] = ""  # the CPU only, even on a GPU machine
    return env


def bench_command(bench: str, arguments: list[str], record: Path) -> list[str]:
    return [sys.executable, "-m", "hetero_tutorial", "bench", bench, *arguments,
            "--json", str(record)]  # fmt: skip


# --- the steps ------------------------------------------------------------------------------


COMMIT_FILE = "COMMIT"
"""The file in the wheel bundle that holds the commit ``make gpu-wheels`` ran at."""


def code_commit(wheels: Path | None) -> str | None:
    """The code's commit: git's where the checkout has its ``.git``, else the bundle's
    :data:`COMMIT_FILE` (a device call carries the working tree without ``.git``)."""
    from hetero_tutorial.core import results

    found = results.code_commit()
    if found is None and wheels is not None and (wheels / COMMIT_FILE).is_file():
        found = (wheels / COMMIT_FILE).read_text().strip() + " (the wheel bundle's)"
    if found is not None:
        os.environ[results.COMMIT_ENV_VAR] = found  # every step's records, the merged ones too
    return found


def setup(log: RunLog, wheels: Path | None) -> str:
    """Install the carried wheels (if any), name the code's commit for every step's records,
    then write the GPU's state into the log."""
    status = "ok"
    commit = code_commit(wheels)
    log(f"commit: {commit or 'unknown (no .git, no bundle COMMIT file)'}")
    if wheels is not None:
        site = install_wheels(wheels, log)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (site, os.environ.get("PYTHONPATH")) if p
        )
        # --target puts the wheels' programs (py-spy) in its bin/, which is on no PATH
        os.environ["PATH"] = os.pathsep.join([str(Path(site) / "bin"), os.environ["PATH"]])
        sys.path.insert(0, site)  # this process too: it merges the DDPG seeds' records
    queries = (
        ["nvidia-smi"],
        ["nvidia-smi", "--format=csv", "--query-gpu=index,name,driver_version,persistence_mode,"
         "pstate,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit"],
    )  # fmt: skip
    for query in queries:
        try:
            done = subprocess.run(query, capture_output=True, text=True, timeout=30)
            log(f"$ {' '.join(query)}\n{done.stdout.rstrip()}{done.stderr.rstrip()}")
        except (OSError, subprocess.TimeoutExpired) as error:
            log(f"$ {' '.join(query)}: {error}")
            status = "ok (no nvidia-smi)" if isinstance(error, OSError) else status
    log(f"python {sys.version.split()[0]} at {sys.executable}")
    return status


def install_wheels(wheels: Path, log: RunLog) -> str:
    """Install the carried wheels into a temporary folder; return it (for PYTHONPATH)."""
    target = tempfile.mkdtemp(prefix="gpu-reference-site-")
    atexit.register(shutil.rmtree, target, True)  # gone with this run
    files = sorted(str(p) for p in wheels.glob("*.whl"))
    if not files:
        raise OSError(f"no wheels in {wheels}: run `make gpu-wheels` on a machine with network")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                           "--no-compile", "--target", target, *files],
                          capture_output=True, text=True)  # fmt: skip
    log(f"installed {len(files)} wheels into {target}" + (done.stdout + done.stderr).rstrip())
    done.check_returncode()
    return target


def accelerator_test_files() -> list[str]:
    """The test files that hold a test marked ``accelerator`` (pytest collects only those)."""
    return sorted(
        str(path.relative_to(REPO))
        for path in (REPO / "tests").glob("test_*.py")
        if "pytest.mark.accelerator" in path.read_text()
    )


def run_tests(step: schedule.Step, work: Path, dry: bool, timeout: float) -> tuple[str, dict]:
    """The test slice; its counts and failing tests, read from its reports.

    Two pytest processes at once: the CUDA graph capture tests
    (:data:`gpu_schedule.CAPTURE_TESTS`: cold compiles, the slowest) started first in one of
    their own, so that they never wait in a worker's queue, and the rest of the slice with
    pytest-xdist beside them.
    """
    (work / "tests").mkdir(parents=True, exist_ok=True)
    files = accelerator_test_files()
    groups = {"capture": [f for f in files if f in schedule.CAPTURE_TESTS],
              "slice": [f for f in files if f not in schedule.CAPTURE_TESTS]}  # fmt: skip
    commands, reports = [], []
    for name, group in groups.items():
        if not group:
            continue
        report, log = work / "tests" / f"{name}.xml", work / "tests" / f"{name}.log"
        # the capture tests' own process takes the path's marker, not the slice's workers
        arguments = step.arguments(dry) if name == "slice" else list(step.path)
        # -v: each result is logged as it comes, so a slice cut off by its timeout still counts
        commands.append(([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                          *arguments, f"--junitxml={report}", *group], log))  # fmt: skip
        reports.append((report, log))
    env = {**step_environment(dry), "HETERO_TUTORIAL_QUICK": "1"}
    status = run_processes(commands, timeout, env)
    counts = _counted([])
    for report, log in reports:
        found = test_counts(report) if report.is_file() else logged_test_counts(log)
        counts = {key: counts[key] + found[key] for key in counts}
    if counts.get("failed"):
        status = f"{counts['failed']} of {counts['tests']} tests failed" + (
            "" if status in ("ok", "failed (exit 1)") else f", {status}"
        )
    return status, counts


def test_counts(report: Path) -> dict:
    """Tests, failures (errors included), skips and the failing tests' ids, from JUnit XML."""
    results = []
    for case in ET.parse(report).getroot().iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        outcome = "FAILED" if failed else "SKIPPED" if case.find("skipped") is not None else ""
        results.append((outcome, f"{case.get('classname')}::{case.get('name')}"))
    return _counted(results)


OUTCOMES = "PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS"


def logged_test_counts(log: Path) -> dict:
    """The same counts from pytest's verbose lines, for a slice stopped before its report:
    pytest-xdist's (``[gw0] [ 33%] PASSED id``) and a single process's (``id PASSED [ 33%]``)."""
    text = log.read_text(errors="replace") if log.is_file() else ""
    found = re.findall(rf"\[gw\d+\] \[ *\d+%\] ({OUTCOMES}) (\S+)", text)
    found += [(kind, name) for name, kind in
              re.findall(rf"^(\S+::\S+) ({OUTCOMES})\b", text, flags=re.MULTILINE)]  # fmt: skip
    return _counted([("FAILED" if kind == "ERROR" else kind, name) for kind, name in found])


def _counted(results: list[tuple[str, str]]) -> dict:
    failures = [name for outcome, name in results if outcome == "FAILED"]
    skipped = sum(outcome == "SKIPPED" for outcome, _ in results)
    return {"tests": len(results), "failed": len(failures), "skipped": skipped,
            "failures": failures}  # fmt: skip


def split_seeds(arguments: list[str]) -> tuple[list[str], list[str]]:
    """The ``--seeds`` list of the DDPG seeds' step, and the ``bench ddpg`` arguments left."""
    if "--seeds" not in arguments:
        return ["0"], arguments
    at = arguments.index("--seeds")
    end = next((i for i in range(at + 1, len(arguments)) if arguments[i].startswith("--")),
               len(arguments))  # fmt: skip
    return arguments[at + 1 : end], arguments[:at] + arguments[end:]


def run_ddpg_seeds(step: schedule.Step, work: Path, dry: bool, timeout: float) -> str:
    """Every buffer design x seed of all-CPU DDPG at once, one process per core, then merged.

    Each process writes one seed's record; :func:`merge_ddpg` turns them into one
    ``bench.ddpg`` record per design, as ``bench ddpg --seed 0 1 2`` would write, also when
    some failed or were cut off: then of the seeds that finished, the others named.
    """
    seeds, arguments = split_seeds(step.arguments(dry))
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    commands = []
    pairs = [(design, seed) for design in schedule.DDPG_DESIGNS for seed in seeds]
    for index, (design, seed) in enumerate(pairs):
        record = work / "seeds" / f"bench.ddpg.{design}.seed{seed}.json"
        record.parent.mkdir(parents=True, exist_ok=True)
        command = bench_command("ddpg", ["--buffer", design, "--seed", seed, *arguments], record)
        if len(cores) > index and shutil.which("taskset"):
            command = ["taskset", "-c", str(cores[-1 - index]), *command]
        commands.append((command, work / "logs" / f"ddpg-{design}-{seed}.log"))
    status = run_processes(commands, timeout, step_environment(dry))
    missing = merge_ddpg(work, seeds, pinned=bool(cores and shutil.which("taskset")))
    if missing:
        named = "; ".join(f"{design} without seed {', '.join(s)}" for design, s in missing.items())
        status += f": merged {named}"
    return status


def merge_ddpg(work: Path, seeds: list[str], pinned: bool) -> dict[str, list[str]]:
    """One ``bench.ddpg`` record per design from the per-seed records (``bench ddpg``'s fields),
    of the seeds that wrote one; ``missing_seeds`` names the others (a failed or cut-off
    process). Returns the missing seeds of each design that lacks any.

    The provenance is this process's: the machine as it is (all its cores), where each seed's
    process saw only the one core it was pinned to.
    """
    from hetero_tutorial.core import results
    from hetero_tutorial.studies.ddpg_buffers import summarise_fields

    missing = {}
    for design in schedule.DDPG_DESIGNS:
        paths = {seed: work / "seeds" / f"bench.ddpg.{design}.seed{seed}.json" for seed in seeds}
        found = [seed for seed, path in paths.items() if path.is_file()]
        if len(found) < len(seeds):
            missing[design] = [seed for seed in seeds if seed not in found]
        if not found:
            continue
        runs = [run for seed in found for run in results.load(paths[seed]).data["runs"]]
        how = "each on a core of its own" if pinned else "unpinned"
        command = (f"benchmarks/gpu_reference.py: bench ddpg --buffer {design} --seed "
                   f"{' '.join(found)} (one process per seed, in parallel, {how})")  # fmt: skip
        fields = summarise_fields(runs) | {
            "missing_seeds": [int(s) for s in missing.get(design, [])]
        }
        merged = results.Record("bench.ddpg", fields, results.provenance(command=command))
        results.save(merged, work / "records" / f"bench.ddpg.{design}.json")
    return missing


def keep_flame_graph(record_path: Path, work: Path) -> None:
    """Copy a profile's flame graph into the work folder, and point its record at the copy."""
    if not record_path.is_file():
        return
    record = json.loads(record_path.read_text())
    svg = record.get("flamegraph_svg")
    source = Path(svg) if svg and Path(svg).is_absolute() else REPO / (svg or "")
    if svg and source.is_file():
        (work / "profiles").mkdir(parents=True, exist_ok=True)
        shutil.copy(source, work / "profiles" / source.name)
        record["flamegraph_svg"] = f"profiles/{source.name}"
        record_path.write_text(json.dumps(record, indent=2) + "\n")


def run_step(step: schedule.Step, work: Path, dry: bool, timeout: float) -> dict:
    """One step to its end; its summary row."""
    row = {"step": step.name, "part": step.part, "expected": step.expected_s,
           "budget": step.budget_s, "status": None, "seconds": None}  # fmt: skip
    began = time.perf_counter()
    try:
        if step.name == "tests":
            row["status"], row["tests"] = run_tests(step, work, dry, timeout)
        elif step.name == "ddpg-seeds":
            row["status"] = run_ddpg_seeds(step, work, dry, timeout)
        else:
            record = work / "records" / f"bench.{step.bench}.{step.name}.json"
            record.parent.mkdir(parents=True, exist_ok=True)
            arguments = step.arguments(dry)
            if step.bench == "profile":  # py-spy ends itself and its target inside the step
                arguments += ["--timeout", f"{max(1.0, timeout - schedule.PY_SPY_SLACK_S):.0f}"]
            command = bench_command(step.bench, arguments, record)
            log = work / "logs" / f"{step.name}.log"
            row["status"] = run_processes([(command, log)], timeout, step_environment(dry))
            if step.bench == "profile":
                keep_flame_graph(record, work)
    finally:
        row["seconds"] = time.perf_counter() - began
    return row


# --- what comes back: four files, rewritten after every step --------------------------------


def summary_lines(rows: list[dict]) -> list[str]:
    """The one-page summary: each step's status and seconds against its expectation and budget."""
    lines = [f"{'step':<17}{'status':<38}{'seconds':>8}{'expected':>9}{'budget':>7}"]
    for row in rows:
        seconds = "" if row["seconds"] is None else f"{row['seconds']:.0f}"
        lines.append(f"{row['step']:<17}{row['status']:<38}{seconds:>8}"
                     f"{row['expected']:>9.0f}{row['budget']:>7.0f}")  # fmt: skip
        for failure in row.get("tests", {}).get("failures", []):
            lines.append(f"  failed: {failure}")
    spent = sum(row["seconds"] or 0 for row in rows)
    expected, budget = (sum(row[key] for row in rows) for key in ("expected", "budget"))
    lines.append(f"{'total':<55}{spent:>8.0f}{expected:>9.0f}{budget:>7.0f}")
    tests = next((row["tests"] for row in rows if row.get("tests")), None)
    if tests:
        lines.append(f"tests: {tests['tests']} run, {tests['failed']} failed, "
                     f"{tests['skipped']} skipped")  # fmt: skip
    return lines


def _replace(target: Path, write) -> None:
    """Write ``target`` through a temporary file beside it, so it is never seen half written."""
    partial = target.with_name(target.name + ".partial")
    write(partial)
    os.replace(partial, target)


def archive(work: Path, target: Path) -> None:
    """Everything in the work folder as one tar.gz, each log cut to its last MiB; without the
    logs if it would pass the device's 16 MiB a file (the records matter more)."""
    files = sorted(p for p in work.rglob("*") if p.is_file())
    for with_logs in (True, False):
        with tarfile.open(target, "w:gz") as tar:
            for path in files:
                is_log = path.parent.name in ("logs", "tests") and path.suffix == ".log"
                if is_log and not with_logs:
                    continue
                data = path.read_bytes()
                if is_log and len(data) > LOG_TAIL_BYTES:
                    data = b"[... cut: the log's last MiB ...]\n" + data[-LOG_TAIL_BYTES:]
                info = tarfile.TarInfo(str(path.relative_to(work)))
                info.size, info.mtime = len(data), int(path.stat().st_mtime)
                tar.addfile(info, io.BytesIO(data))
        if target.stat().st_size <= MAX_FILE_BYTES:
            return


def write_outputs(out: Path, work: Path, rows: list[dict], part: str) -> None:
    """The summary (text and JSON) and the archive, in the work folder and the output folder."""
    text = "\n".join(summary_lines(rows)) + "\n"
    payload = json.dumps(rows, indent=2) + "\n"
    for folder in (work, out):
        _replace(folder / "summary.txt", lambda p: p.write_text(text))
        _replace(folder / "summary.json", lambda p: p.write_text(payload))
    _replace(out / f"gpu_reference.part{part}.tar.gz", lambda p: archive(work, p))


def record_all(out: Path, work: Path, part: str, dry: bool, deadline: float | None,
               wheels: Path | None = None,
               only: list[str] | None = None) -> list[dict]:  # fmt: skip
    """Run every step of ``part`` (or the set-up and the steps ``only`` names); after each,
    rewrite the four output files."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log = RunLog(out / LOG_NAME)
    steps = chosen_steps(part, only)
    if deadline is None:
        deadline = 0.0 if dry else schedule.DEADLINE_S
    log(f"gpu_reference: part {part}{' (dry run, on the CPU)' if dry else ''}, "
        f"{len(steps)} steps, deadline {deadline:.0f} s (0: none)")  # fmt: skip
    from hetero_tutorial.app import bench  # the names only: no benchmark is imported here

    have, started, rows = set(bench.names()), time.perf_counter(), []
    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, _interrupt)}
    try:
        for number, step in enumerate(steps, start=1):
            left = deadline - (time.perf_counter() - started) if deadline > 0 else float("inf")
            header = f"[{number}/{len(steps)}] {step.name}: "
            log(header, end="\n" if step.name == "setup" else "")  # its output follows
            if rows and rows[0]["status"].startswith("failed"):
                row = _row(step, "skipped: the set-up failed")
            elif step.bench is not None and step.bench not in have:
                row = _row(step, "not in this checkout")
            elif left < 5:
                row = _row(step, "skipped: deadline")
            elif step.name == "setup":
                began = time.perf_counter()
                try:
                    row = _row(step, setup(log, wheels))
                except (OSError, subprocess.CalledProcessError) as error:
                    row = _row(step, "failed: the wheels did not install")
                    log(f"{error}")
                row["seconds"] = time.perf_counter() - began
                log(header, end="")
            else:
                timeout = DRY_STEP_TIMEOUT_S if dry else min(step.budget_s, left)
                try:
                    row = run_step(step, work, dry, timeout)
                except KeyboardInterrupt:
                    rows.append(_row(step, "interrupted"))
                    raise
            seconds = "" if row["seconds"] is None else f" in {row['seconds']:.0f} s"
            log(row["status"] + seconds)
            rows.append(row)
            write_outputs(out, work, rows, part)
    except KeyboardInterrupt:
        log("\ninterrupted: the archive holds every step finished before")
    finally:
        signal.signal(signal.SIGTERM, previous[signal.SIGTERM])
        write_outputs(out, work, rows, part)
        log("\n" + "\n".join(summary_lines(rows)))
        log(f"archive: {out / f'gpu_reference.part{part}.tar.gz'}")
        log.close()
    return rows


def chosen_steps(part: str, only: list[str] | None) -> list[schedule.Step]:
    """The steps of ``part``, or the set-up and the steps named in ``only`` (in their order)."""
    if not only:
        return schedule.steps_of(part)
    unknown = sorted(set(only) - {step.name for step in schedule.STEPS})
    if unknown:
        raise ValueError(f"no step {', '.join(unknown)}: see --schedule for the steps")
    return [step for step in schedule.STEPS if step.part == 0 or step.name in only]


def _row(step: schedule.Step, status: str) -> dict:
    return {"step": step.name, "part": step.part, "expected": step.expected_s,
            "budget": step.budget_s, "status": status, "seconds": None}  # fmt: skip


def _interrupt(signum: int, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


# --- back here: file the records ------------------------------------------------------------


def unpack(archive_path: Path) -> list[Path]:
    """Put an archive's records under ``data/reference/<machine>/`` and its flame graphs
    under ``profiles/`` beside them (the records' ``flamegraph_svg`` rewritten to match).

    Each record is named as ``bench NAME --reference`` names it: ``<kind>.<tag>.json``.
    """
    from hetero_tutorial.app import bench
    from hetero_tutorial.core import results
    from hetero_tutorial.core.paths import display_path

    written = []
    with tempfile.TemporaryDirectory() as folder, tarfile.open(archive_path) as tar:
        tar.extractall(folder, filter="data")
        folder = Path(folder)
        for path in sorted((folder / "records").glob("bench.*.json")):
            record = results.load(path)
            target_dir = results.reference_directory(record)
            svg = record.data.get("flamegraph_svg")
            if svg and (folder / "profiles" / Path(svg).name).is_file():
                (target_dir / "profiles").mkdir(parents=True, exist_ok=True)
                kept = shutil.copy(folder / "profiles" / Path(svg).name, target_dir / "profiles")
                record.data["flamegraph_svg"] = display_path(kept)
            module = bench.load(record.kind.removeprefix("bench."))
            tag = bench.record_tag(module, record.data)
            written.append(results.save(record, directory=target_dir, tag=tag))
        summary = folder / "summary.txt"
        part = re.search(r"part(\w+)\.tar\.gz$", archive_path.name)
        if summary.is_file() and written:
            name = f"gpu_reference.part{part[1] if part else ''}.summary.txt"
            shutil.copy(summary, written[0].parent / name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="the output folder: the four files to return")
    parser.add_argument("--work", type=Path, default=WORK, help="where the steps write")
    parser.add_argument(
        "--part",
        default="all",
        choices=("1", "2", "all"),
        help="part 1 (the ledger's records, the test slice), part 2, or all (the one call)",
    )
    parser.add_argument("--wheels", type=Path, help="install these wheels first (--target)")
    parser.add_argument("--only", nargs="+", metavar="STEP", help="these steps alone, after set-up")
    parser.add_argument("--dry-run", action="store_true", help="every step on the CPU, tiny")
    parser.add_argument(
        "--deadline",
        type=float,
        default=None,
        help=f"seconds for all steps (0: none; default {schedule.DEADLINE_S:.0f})",
    )
    parser.add_argument("--unpack", type=Path, metavar="ARCHIVE", help="file a run's records")
    parser.add_argument("--schedule", action="store_true", help="print the schedule and stop")
    args = parser.parse_args(argv)  # fmt: skip
    if args.schedule:
        print(schedule.schedule_table())
        return 0
    if args.unpack:
        for path in unpack(args.unpack):
            print("reference record:", path)
        return 0
    if args.out is None:
        parser.error("--out is required (or --unpack ARCHIVE, or --schedule)")
    work, out = args.work.resolve(), args.out.resolve()
    if work == out or out in work.parents:
        parser.error("--work must lie outside --out: only four files may go back")
    try:
        steps = chosen_steps(args.part, args.only)
    except ValueError as error:
        parser.error(str(error))
    rows = record_all(args.out, args.work, args.part, args.dry_run, args.deadline, args.wheels,
                      args.only)  # fmt: skip
    done = {"ok", "ok (no nvidia-smi)", "not in this checkout"}
    finished = len(rows) == len(steps)
    return 0 if finished and all(row["status"] in done for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
