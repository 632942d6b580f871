"""py-spy: sample the call stacks of a training run it launches, and measure the transfers.

py-spy samples the call stacks of a process it launches (no root, no ptrace attach
needed). :func:`profile_ppo` and :func:`profile_command` keep its raw samples,
measure the share spent in host<->device transfers (:mod:`hetero_tutorial.profiling.stacks`),
and draw an SVG flame graph and a speedscope file from the same samples.

Every output file goes under ``build/profiles/`` (ignored by git) unless told otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import study
from hetero_tutorial.core.paths import BUILD_DIR, REPO_DIR, display_path
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.processes import own_group_dying_with_parent
from hetero_tutorial.core.results import Record, load_references
from hetero_tutorial.profiling import flamegraph, reading, stacks
from hetero_tutorial.profiling import target as profile_target
from hetero_tutorial.rl.ppo.options import RunOptions

PROFILE_DIR = BUILD_DIR / "profiles"
"""Where profiles are written by default (ignored by git)."""


@dataclass(frozen=True)
class PySpyStatus:
    """Whether py-spy can profile here, and a sentence saying why not when it cannot."""

    available: bool
    message: str
    executable: str | None = None


STUDY_SUFFIX = {"": "", "-native": " (native frames)", "-blocking": " (sampled with pauses)"}
"""How the guard names each kind of recording: two in one notebook are two studies."""

NOT_INSTALLED = "py-spy is not installed: `pip install py-spy` (the cProfile path still works)."


def py_spy_executable() -> str | None:
    """The py-spy program: on the PATH, or beside this Python (a virtual environment's bin/)."""
    return shutil.which("py-spy") or _beside_python("py-spy")


def py_spy_status(timeout: float = 30.0, native: bool = False) -> PySpyStatus:
    """Try py-spy for real: record a half-second Python busy loop it launches itself.

    Launching the target (``py-spy record -- python ...``) needs no root and no
    ptrace permission to attach, which is why the series always profiles that way.
    ``native``: try native sampling (``--native``, with pauses, as py-spy needs).
    """
    executable = py_spy_executable()
    if executable is None:
        return PySpyStatus(False, NOT_INSTALLED)
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "check.txt"
        busy = "import time\nend = time.time() + 0.5\nwhile time.time() < end: pass"
        command = [
            executable,
            "record",
            "--format",
            "raw",
            "--rate",
            "200",
            *(["--native"] if native else []),
            "--output",
            str(output),
            "--",
            sys.executable,
            "-c",
            busy,
        ]
        try:
            done = run_in_own_group(command, timeout)
        except (OSError, subprocess.TimeoutExpired) as error:
            return PySpyStatus(False, f"py-spy could not run here: {error}", executable)
        if done.returncode != 0 or not output.exists() or not output.read_text().strip():
            reason = (done.stderr or done.stdout).strip().splitlines()
            return PySpyStatus(
                False,
                "py-spy is installed but could not sample a process here"
                + (f": {reason[-1]}" if reason else "")
                + " (containers may forbid it; the cProfile path still works).",
                executable,
            )
    return PySpyStatus(True, "py-spy can profile processes it launches here.", executable)


def native_sampling_works(timeout: float = 30.0) -> bool:
    """Whether to sample native frames here: an accelerator runs (CUDA's copy and wait
    frames are what native sampling adds; a CPU run has none to show) and a short native
    recording, with pauses, works on this machine (some systems cannot unwind C frames)."""
    from hetero_tutorial.core.devices import accelerator

    return accelerator() is not None and py_spy_status(timeout, native=True).available


def run_in_own_group(
    command: Sequence[str], timeout: float, grace: float = 5.0
) -> subprocess.CompletedProcess:
    """Run ``command`` in a process group of its own; end the whole group if it does not finish.

    py-spy launches the profiled program as its child; ``subprocess.run``'s timeout
    (or a Ctrl-C) would kill py-spy alone and leave that program training on.
    Here, on a timeout or any interruption, every process of the group gets
    SIGTERM, then SIGKILL after ``grace`` seconds, before the error goes on.
    Output is captured as text, as with ``subprocess.run(capture_output=True)``.
    """
    process = subprocess.Popen(
        list(command),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=own_group_dying_with_parent,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except BaseException:  # the timeout, a Ctrl-C, anything: nothing of the run outlives it
        _end_group(process, grace)
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _end_group(process: subprocess.Popen, grace: float) -> None:
    """SIGTERM the process group of ``process``, then SIGKILL what is left after ``grace`` s."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:  # the group is already gone
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.communicate(timeout=grace)
    with contextlib.suppress(ProcessLookupError):  # the program py-spy launched, if it lingers
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _beside_python(name: str) -> str | None:
    candidate = Path(sys.executable).with_name(name)
    return str(candidate) if candidate.exists() else None


@dataclass(frozen=True)
class PySpyProfile:
    """One run's py-spy samples, the transfer shares measured from them, and its pictures."""

    name: str
    command: tuple[str, ...]
    """the py-spy command line that recorded it"""
    rate: int
    """samples per second"""
    native: bool
    idle: bool
    nonblocking: bool
    """sampled without pausing the program (see :func:`py_spy_command`)"""
    samples: stacks.Stacks
    """every sample of this run, start-up included"""
    shares: stacks.TransferShares
    raw_path: Path
    """the recording's raw collapsed stacks (shared by the runs of one recording)"""
    svg_path: Path
    speedscope_path: Path
    phase_seconds: dict[str, float] = field(default_factory=dict)
    """the profiled run's own phase timer (seconds per phase), where the program printed it"""

    def svg(self) -> str:
        """The flame graph's SVG text (display it with ``IPython.display.SVG(data=...)``)."""
        return self.svg_path.read_text()

    def training_stacks(self) -> stacks.Stacks:
        """The samples taken inside a training phase (start-up and set-up left out)."""
        return stacks.training_stacks(self.samples)

    def fields(self) -> dict[str, Any]:
        """What this profile measured, as the fields of a ``bench.profile`` record."""
        return {
            "rate": self.rate,
            "native": self.native,
            "idle": self.idle,
            "nonblocking": self.nonblocking,
            "py_spy_command": shlex.join(self.command),
            "samples": self.shares.total,
            "samples_outside_phases": self.shares.outside,
            # copies + waits for data; the phase timer's own syncs are counted apart below
            "transfer_share": self.shares.share,
            "transfer_share_stderr": self.shares.stderr,
            "transfer_share_by_phase": self.shares.by_phase(),
            "copy_share": self.shares.share_of("copies"),
            "wait_share": self.shares.share_of("waits"),
            "timer_sync_share": self.shares.share_of("timer_sync"),
            "timer_sync_share_stderr": self.shares.stderr_of("timer_sync"),
            "timer_sync_share_by_phase": self.shares.by_phase("timer_sync"),
            "samples_by_phase": self.shares.samples,
            "phase_timer_seconds": self.phase_seconds,
            "phase_share": self.shares.phase_share(),
            "transfer_samples_by_operation": self.shares.operations,
            "top_frames": stacks.top_frames(self.training_stacks()),
            "flamegraph_svg": display_path(self.svg_path),
            "speedscope_json": display_path(self.speedscope_path),
            "raw_stacks": display_path(self.raw_path),
        }


def py_spy_command(
    target: Sequence[str],
    output: Path,
    *,
    rate: int = 100,
    native: bool = False,
    idle: bool = True,
    nonblocking: bool | None = None,
) -> list[str]:
    """The ``py-spy record`` command line that samples ``target`` into raw collapsed stacks.

    ``rate``: samples per second. ``native``: also unwind C/C++/CUDA frames
    (``cudaMemcpyAsync``, ``cudaStreamSynchronize``); slower to sample, and only
    where py-spy can unwind them (Linux, Windows). ``idle``: keep samples of
    threads the OS reports as sleeping: a host thread blocked on the GPU can
    sleep in the driver, and without ``--idle`` py-spy would drop exactly the
    waits we are looking for.

    ``nonblocking``: read the stacks without pausing the program (the default for
    Python frames). Otherwise py-spy stops the program for every sample; it stops
    the host, not the GPU, which works through its queue meanwhile, so the waits
    for it that follow shrink and the profile under-counts exactly what C5 asks
    about (and the run slows). The cost of not pausing: a stack read while the
    program changes it can be inconsistent (a torn or mis-attributed stack now and
    then; py-spy says so in its help). ``nonblocking=False`` pauses, for consistent
    samples where no accelerator runs on meanwhile. py-spy reads native frames only
    from a paused program (see :func:`sampling_without_pauses`).
    """
    executable = py_spy_executable()
    if executable is None:
        raise UsageError(NOT_INSTALLED)
    if rate < 1:
        raise UsageError(f"the sampling rate must be at least 1 per second, got {rate}")
    nonblocking = sampling_without_pauses(native, nonblocking)
    command = [executable, "record", "--format", "raw", "--full-filenames"]
    command += ["--rate", str(rate), "--output", str(output)]
    command += ["--native"] * native + ["--idle"] * idle + ["--nonblocking"] * nonblocking
    return [*command, "--", *target]


NATIVE_PAUSES = (
    "py-spy reads native (C/C++/CUDA) frames only from a paused program (it would exit with "
    '"Can\'t get native stack traces with the --nonblocking option."): sample Python frames '
    "without pauses, or native ones with pauses (`--blocking` on the command line)."
)


def sampling_without_pauses(native: bool, nonblocking: bool | None) -> bool:
    """Whether py-spy samples without pausing: ``nonblocking``, or (None) unless ``native``;
    native frames without pauses are refused (:class:`UsageError`), before py-spy fails."""
    if nonblocking is None:
        return not native
    if native and nonblocking:
        raise UsageError(NATIVE_PAUSES)
    return nonblocking


def record_py_spy(
    target: Sequence[str], raw_path: Path, *, timeout: float = 1800.0, **options: Any
) -> tuple[list[str], stacks.Stacks, str]:
    """Launch ``target`` (a command line) under py-spy; return the command, the samples and
    what the program printed.

    The raw collapsed stacks are kept at ``raw_path``; ``options`` as in
    :func:`py_spy_command`. Raises :class:`UsageError` when py-spy is missing or
    cannot sample here, or when the target fails.
    """
    raw_path = Path(raw_path)
    raw_path.parent.mkdir(parents=True, exist_ok=True)
    command = py_spy_command(target, raw_path, **options)
    try:
        done = run_in_own_group(command, timeout)
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"the run under py-spy took over {timeout:.0f} s; profile fewer steps"
        ) from None
    _check_recording(done, raw_path)
    return command, stacks.read_collapsed(raw_path.read_text()), done.stdout or ""


def _check_recording(done: subprocess.CompletedProcess, raw: Path) -> None:
    """Explain a failed recording: py-spy refused, or the profiled program itself failed."""
    lines = (done.stderr or "").strip().splitlines()
    traceback = _target_traceback(lines)
    if traceback:  # py-spy may exit 0 when its target fails, or fail itself afterwards
        raise UsageError("the profiled program failed:\n" + "\n".join(traceback[-8:]))
    if done.returncode != 0 or not raw.exists() or not raw.read_text().strip():
        reason = lines[-1] if lines else f"exit status {done.returncode}"
        raise UsageError(
            f"py-spy could not sample the program here ({reason}). Containers may forbid "
            "it; the cProfile path (cprofile_call) still works."
        )


def _target_traceback(lines: list[str]) -> list[str]:
    """The profiled program's last Python traceback in py-spy's stderr, up to its error line.

    A target that dies at once can leave py-spy failing to attach, and py-spy then
    prints its own error and Rust backtrace after the program's traceback.
    """
    header = "Traceback (most recent call last):"
    if header not in lines:
        return []
    start = len(lines) - 1 - lines[::-1].index(header)
    for end in range(start + 1, len(lines)):
        if lines[end] and not lines[end][0].isspace():  # the unindented "SomeError: ..." line
            return lines[start : end + 1]
    return lines[start:]


def make_profile(
    name: str,
    samples: stacks.Stacks,
    command: Sequence[str],
    raw_path: Path,
    out_dir: Path = PROFILE_DIR,
    phase_seconds: dict[str, float] | None = None,
) -> PySpyProfile:
    """Measure the transfer shares of ``samples``; write their flame graph and speedscope file.

    ``<name>.svg`` (in ``out_dir``) shows the training phases only, transfers in
    red. ``<name>.speedscope.json`` holds every sample, start-up included, and
    sits beside the raw recording (``raw_path``): sample files stay together, out
    of the record folders. Rate and options are read back from ``command``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    training = stacks.training_stacks(samples)
    left_out = sum(samples.values()) - sum(training.values())
    title = f"{name}: from the training loop up ({left_out} samples of start-up left out)"
    svg = out_dir / f"{name}.svg"
    loop, marked = reading.from_the_loop(training, stacks.transfer_stacks(training))
    svg.write_text(flamegraph.flamegraph_svg(loop, title, marked))
    scope = Path(raw_path).with_name(f"{name}.speedscope.json")
    scope.parent.mkdir(parents=True, exist_ok=True)
    scope.write_text(json.dumps(flamegraph.speedscope(samples, name)))
    rate = int(command[command.index("--rate") + 1])
    native, idle, nonblocking = (
        flag in command for flag in ("--native", "--idle", "--nonblocking")
    )
    shares = stacks.transfer_shares(samples)
    return PySpyProfile(
        name,
        tuple(command),
        rate,
        native,
        idle,
        nonblocking,
        samples,
        shares,
        Path(raw_path),
        svg,
        scope,
        dict(phase_seconds or {}),
    )


def profile_command(
    target: Sequence[str], name: str, out_dir: Path = PROFILE_DIR, **options: Any
) -> PySpyProfile:
    """Profile one program (a command line) under py-spy: samples, shares, flame graph."""
    raw = Path(out_dir) / f"{name}.txt"
    command, samples, _ = record_py_spy(target, raw, **options)
    return make_profile(name, samples, command, raw, out_dir)


def split_runs(samples: stacks.Stacks, runners: dict[str, str]) -> dict[str, stacks.Stacks]:
    """The samples of each run of a recording, found by the run's function in their stacks.

    ``runners`` maps a run's name to the function it ran in; samples outside
    every run (start-up) are left out.
    """
    found: dict[str, stacks.Stacks] = {name: Counter() for name in runners}
    owner = {function: name for name, function in runners.items()}
    for stack, count in samples.items():
        for text in stack:
            name = owner.get(stacks.Frame.parse(text).function)
            if name is not None:
                found[name][stack] += count
                break
    return found


def profile_ppo(
    placements: str | Sequence[str],
    options: RunOptions | None = None,
    *,
    out_dir: Path = PROFILE_DIR,
    samples_dir: Path = PROFILE_DIR,
    **sampling: Any,
) -> dict[str, PySpyProfile]:
    """Profile PPO under each placement, one after the other in one py-spy recording.

    ``options``: the run's options (task, width, steps, seed, threads; None: the
    defaults), as every PPO command takes them. Returns one profile per placement; its flame graph
    ``ppo-<placement>-h<hidden>.svg`` (``...-native.svg`` with native frames,
    ``...-blocking.svg`` sampled with pauses) goes to ``out_dir``, the raw recording
    (megabytes) and the speedscope files to ``samples_dir``. ``sampling`` goes to
    :func:`py_spy_command` (rate, native, idle, nonblocking) and ``timeout``.
    """
    placements = [placements] if isinstance(placements, str) else list(placements)
    unknown = [name for name in placements if name not in profile_target.RUNNERS]
    if unknown or len(set(placements)) != len(placements):
        raise UsageError(
            f"profile distinct placements among {', '.join(profile_target.RUNNERS)}; "
            f"got {placements}"
        )
    options = options or RunOptions()
    target = profile_target.command(placements, options)
    hidden = options.config().hidden
    # never over a Python-level profile sampled without pauses, C5's source
    native = sampling.get("native", False)
    paused = not sampling_without_pauses(native, sampling.get("nonblocking"))
    kind = "-native" if native else "-blocking" if paused else ""
    raw = Path(samples_dir) / f"ppo-h{hidden}-{'+'.join(placements)}{kind}.txt"
    with study(f"the py-spy profile{STUDY_SUFFIX[kind]}") as recording:
        command, samples, output = record_py_spy(target, raw, **sampling)
    timers = profile_target.phase_seconds(output)
    runners = {name: profile_target.RUNNERS[name].__name__ for name in placements}
    profiles = {
        name: make_profile(
            f"ppo-{name}-h{hidden}{kind}", run, command, raw, out_dir, timers.get(name)
        )
        for name, run in split_runs(samples, runners).items()
    }
    return recording.file(profiles)


def profile_fields(profile: PySpyProfile, placement: Placement, **workload: Any) -> dict[str, Any]:
    """The fields of a ``bench.profile`` record: the workload, where it ran, what was measured.

    ``workload``: the run's settings (env_id, hidden, steps, seed, threads).
    """
    where = {
        "placement": placement.name,
        "placement_description": placement.describe(),
        "accelerator_missing": placement.accelerator_missing,
    }
    return {**workload, **where, **profile.fields()}


def reference_profiles(with_accelerator: bool = False) -> list[tuple[Record, str | None]]:
    """Recorded ``bench.profile`` references (``data/reference/``), each with its SVG if stored.

    ``with_accelerator``: only profiles recorded on a machine with an accelerator.
    """
    found = []
    for record in load_references("bench.profile", with_accelerator):
        svg = REPO_DIR / record.data.get("flamegraph_svg", "")
        found.append((record, svg.read_text() if svg.is_file() else None))
    return found
