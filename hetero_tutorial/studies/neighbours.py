"""What a busy neighbour does to a study: on another core, and on the study's own core.

Notebook 00's exercise. One thread of this process runs a matrix-product loop pinned to
one CPU, three ways, interleaved over rounds: alone, beside a spinning process pinned to
another CPU, and beside one pinned to the same CPU. Each run is read as the busy-machine
guard reads a study (:class:`~hetero_tutorial.core.contention.LoadMeter`): the loop's
calls per second, how long its thread waited for a CPU, and others' load on its CPU and
on the whole machine. The neighbour is started by a shell that exits at once, so it is
another program's process, not this one's child; it ends with the study, or by itself
when this process is gone.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from hetero_tutorial.core import contention
from hetero_tutorial.core.contention import LoadMeter

CASES = ("alone", "beside a neighbour on another core", "beside a neighbour on its core")

SPINNER = (
    "import os, sys, time\n"
    "core, owner = int(sys.argv[1]), int(sys.argv[2])\n"
    "os.sched_setaffinity(0, {core})\n"
    "check = time.time()\n"
    "while True:\n"
    "    if time.time() > check:\n"  # twice a second: is the study's process still there?
    "        try:\n"
    "            os.kill(owner, 0)\n"
    "        except OSError:\n"
    "            break\n"
    "        check = time.time() + 0.5\n"
)


@dataclass(frozen=True)
class NeighbourRun:
    """One run of the pinned loop."""

    case: str
    """one of :data:`CASES`"""
    round: int
    calls_per_s: float
    wait_share: float | None
    """seconds its thread waited for a CPU per second it ran (None: not read here)"""
    others_on_its_cpu: float
    """cores of others' work on the CPU it ran on"""
    others_anywhere: float
    """cores of others' work on the whole machine"""
    judged: bool
    """whether the guard would judge a study read so"""


def unavailable() -> str | None:
    """Why the study cannot run here (one line), or None where it can."""
    if not hasattr(os, "sched_setaffinity"):
        return "this platform cannot pin a thread to a core (no os.sched_setaffinity): skipped"
    if len(contention.allowed_cpus()) < 2:
        return "this process may use one CPU only, so there is no other core: skipped"
    return None


@contextlib.contextmanager
def _spinner(core: int | None) -> Iterator[None]:
    """Another program's process spinning on ``core`` (None: none) while the block runs."""
    if core is None:
        yield
        return
    command = f'"{sys.executable}" -c "$0" {core} {os.getpid()} >/dev/null 2>&1 & echo $!'
    shell = subprocess.run(["sh", "-c", command, SPINNER], capture_output=True, text=True)
    pid = int(shell.stdout)
    try:
        time.sleep(0.2)  # let it start spinning
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def _loop(seconds: float) -> int:
    a = torch.randn(256, 256)
    calls, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        torch.tanh(a @ a)
        calls += 1
    return calls


def measure(seconds: float = 1.5, rounds: int = 2) -> list[NeighbourRun]:
    """The loop alone, beside a neighbour on another core, and beside one on its own core,
    ``seconds`` each, interleaved over ``rounds``. Raises where :func:`unavailable` says."""
    why = unavailable()
    if why is not None:
        raise RuntimeError(why)
    mine, other = contention.allowed_cpus()[:2]
    neighbour_core = {CASES[0]: None, CASES[1]: other, CASES[2]: mine}
    affinity, threads = os.sched_getaffinity(0), torch.get_num_threads()
    runs = []
    try:
        os.sched_setaffinity(0, {mine})
        torch.set_num_threads(1)
        _loop(0.2)  # warm-up
        for round_ in range(rounds):
            for case in CASES:
                with _spinner(neighbour_core[case]), LoadMeter(interval=seconds / 4) as load:
                    calls = _loop(seconds)
                reading = contention.readings(load)
                runs.append(
                    NeighbourRun(
                        case,
                        round_,
                        calls / load.wall_seconds,
                        load.wait_share,
                        load.others_on_study_cpus,
                        load.other_cores,
                        not contention.verdict_causes(reading),
                    )
                )
    finally:
        os.sched_setaffinity(0, affinity)
        torch.set_num_threads(threads)
    return runs
