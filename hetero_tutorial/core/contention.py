"""Whether a study had to wait for a CPU while it ran, and who made it wait.

"Busy" means contended: what slows a study is a runnable thread of its own that finds its
CPU taken, not another program's load on cores it never runs on. A classroom server with
twenty learners on 64 cores, or a laptop with a video call on one of eight cores, keeps
others busy all the time while most studies lose nothing. :class:`LoadMeter` therefore
reads, for this process and every process it started, directly or not:

* **run-queue wait** (Linux): each thread's ``/proc/<pid>/task/<tid>/schedstat`` holds
  the nanoseconds it ran and the nanoseconds it waited, runnable, for a CPU. Their sums
  over the block give :attr:`LoadMeter.wait_share`, seconds waited per second of CPU;
* **others on the study's CPUs**: the busy time of the CPUs its busy threads (those that
  used :data:`ACTIVE_SHARE` of a core or more) were seen on, less its own CPU time: who
  took the CPUs it waited for. A study that runs more threads
  than it has CPUs (Ray's workers beside a learner) waits for itself, by design; that
  wait names no neighbour;
* **steal**: time the hypervisor gave this VM's CPUs (those the study ran on) to other
  VMs (a cloud or Colab machine's neighbours), which a thread cannot see as waiting;
* **throttling**: where the process runs in a cgroup with a CPU quota (a container),
  the time the quota held it back (cgroup v2 ``cpu.stat`` ``throttled_usec``, v1
  ``throttled_time``). That is the study's own setting, not a neighbour: a study with two
  busy threads in a one-CPU container throttles itself;
* **others' load** anywhere on the machine (``psutil.cpu_times``, all platforms): the
  machine's busy CPU time less this process tree's, in cores. Where the kernel offers no
  run-queue wait (macOS, Windows) it is the reading, set against the spare capacity.

This process tree's times are sampled every ``interval`` seconds on a background thread,
because a thread or process that ends takes its counters with it, and its last sample is
what it is credited with. A process the tree waited for (a compiler that Inductor's workers
start for a few hundred milliseconds, too short to be sampled) leaves its CPU time in its
parent's ``children_user`` and ``children_system``: what those grew by, less the processes
the tree was seen to end, is credited to the tree too.

The thresholds (:func:`verdict_causes`), derived on this series' 2-core CI machine (AMD EPYC
family 25, a KVM guest), interleaved 4-second probes of one thread (a 256x256 matmul and
tanh) pinned to core 0, and of two threads on both cores:

==========================================  ==============  =======================
neighbour                                   wait per CPU s  others on the study's CPUs
==========================================  ==============  =======================
none (1 or 2 threads)                       0.000-0.013     0.00-0.03 cores
spinner on the other core (1 thread)        0.001-0.005     0.00
spinner sharing a core (2 threads)          0.46-0.56       0.6-0.7
bursty (0.3 s on, 0.3 s off) on its core    0.16-0.31       0.2-0.25
spinner on its core (1 thread)              1.00            0.5
==========================================  ==============  =======================

:data:`WAIT_SHARE` (0.10) sits 8x above the quietest runs' worst and below the mildest
contention measured (the bursty neighbour sharing one of two threads' cores, 0.16);
:data:`OTHERS_ON_STUDY_CPUS` (0.10 cores) above a quiet machine's housekeeping. Steal
read 0.000-0.011 of each CPU's time in the same runs: :data:`STEAL_SHARE` (0.10) is 9x
that. Throttling reads exactly 0 without a quota: :data:`THROTTLED_SHARE` (0.05) is the
share of the block's wall time past which a quota counts.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import psutil

WAIT_SHARE = 0.10
"""Seconds a study's threads waited for a CPU per second of CPU they got, past which
(with :data:`OTHERS_ON_STUDY_CPUS`) it was contended."""

OTHERS_ON_STUDY_CPUS = 0.10
"""Cores of others' work on the CPUs the study ran on, past which its wait was theirs."""

STEAL_SHARE = 0.10
"""Share of its CPUs' time the hypervisor gave other VMs, past which a study is contended."""

THROTTLED_SHARE = 0.05
"""Share of a study's wall time its cgroup's CPU quota held it back, past which it counts."""

SPARE_MARGIN = 0.25
"""Where no run-queue wait is read: cores of others' load beyond the spare ones (the CPUs
this process may use less the threads the study ran) that a study absorbs, within the
10-20% that interleaved repeats see from drift on a 2-core machine."""

ACTIVE_SHARE = 0.10
"""A thread counts as one the study ran when it used this share of a core or more."""

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _cgroup_dir() -> tuple[Path, int] | None:
    """This process's cgroup folder holding its CPU controller, and the cgroup version."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:  # v1: "ID:cpu,cpuacct:/path"; v2: "0::/path"
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            for name in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
                folder = CGROUP_ROOT / name / path.lstrip("/")
                if (folder / "cpu.cfs_quota_us").exists():
                    return folder, 1
    for line in lines:
        if line.startswith("0::"):
            folder = CGROUP_ROOT / line[3:].lstrip("/")
            if (folder / "cpu.stat").exists():
                return folder, 2
    return None


def quota_cpus(quotas: Sequence[tuple[Path, Path | None]]) -> float | None:
    """The CPUs a cgroup CPU quota allows (quota over period), from the first readable of
    ``quotas`` (v2: ``(cpu.max, None)``; v1: ``(cpu.cfs_quota_us, cpu.cfs_period_us)``), or
    None where there is no quota."""
    for quota_file, period_file in quotas:
        try:
            fields = quota_file.read_text(encoding="utf-8").split()
            if period_file is not None:
                fields.append(period_file.read_text(encoding="utf-8").strip())
        except OSError:
            continue
        if len(fields) < 2 or fields[0] in ("max", "-1"):
            return None
        quota, period = float(fields[0]), float(fields[1])
        return quota / period if quota > 0 and period > 0 else None
    return None


def cpu_quota() -> float | None:
    """The CPUs this process's own cgroup's quota allows, or None: no quota."""
    found = _cgroup_dir()
    if found is None:
        return None
    folder, version = found
    if version == 2:
        return quota_cpus([(folder / "cpu.max", None)])
    return quota_cpus([(folder / "cpu.cfs_quota_us", folder / "cpu.cfs_period_us")])


def throttled_seconds() -> float | None:
    """Seconds this process's cgroup has been held back by its CPU quota, or None."""
    found = _cgroup_dir()
    if found is None:
        return None
    folder, version = found
    try:
        stat = dict(
            line.split()[:2] for line in (folder / "cpu.stat").read_text().splitlines() if line
        )
    except (OSError, ValueError):
        return None
    if version == 2:
        return int(stat.get("throttled_usec", 0)) / 1e6
    return int(stat.get("throttled_time", 0)) / 1e9


def allowed_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on (its affinity; every CPU where that is not known)."""
    if hasattr(os, "sched_getaffinity"):
        return tuple(sorted(os.sched_getaffinity(0)))
    return tuple(range(os.cpu_count() or 1))


def allowance_line() -> str:
    """What ``doctor`` prints: the CPUs this process may use, by affinity and by quota."""
    cpus = allowed_cpus()
    machine = psutil.cpu_count(logical=True) or len(cpus)
    line = f"may run on {len(cpus)} of this machine's {machine} CPUs"
    quota = cpu_quota()
    if quota is not None:
        line += f"; its container's quota allows {quota:g} CPU{'s' if quota != 1 else ''}"
    return line


def schedstat_readable() -> bool:
    """Whether the kernel gives each thread's run-queue wait (Linux with schedstats)."""
    return Path(f"/proc/{os.getpid()}/task/{threading.get_native_id()}/schedstat").exists()


@dataclass
class _Thread:
    """One thread's counters at its first and last sample, in seconds."""

    first_cpu: float
    first_wait: float
    cpu: float
    wait: float
    cpus: set[int]


def _linux_threads(pid: int) -> dict[int, tuple[float, float, int]]:
    """Each thread of ``pid``: (CPU seconds, run-queue wait seconds, the CPU it last ran on)."""
    found = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            ran, waited, _ = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except (OSError, ValueError):
            continue  # it ended meanwhile
        processor = int(stat.rsplit(")", 1)[1].split()[36])  # field 39, after the name
        found[int(tid)] = (int(ran) / 1e9, int(waited) / 1e9, processor)
    return found


def _threads(process: psutil.Process) -> dict[int, tuple[float, float, int]]:
    """Each thread's counters, by the kernel's run-queue figures where it has them."""
    if sys.platform.startswith("linux"):
        return _linux_threads(process.pid)
    return {t.id: (t.user_time + t.system_time, 0.0, -1) for t in process.threads()}


def _per_cpu_busy() -> tuple[list[float], list[float]]:
    """Each CPU's busy seconds (not idle, not the hypervisor's) and its stolen seconds."""
    busy, stolen = [], []
    for t in psutil.cpu_times(percpu=True):
        steal = getattr(t, "steal", 0.0)
        idle = t.idle + getattr(t, "iowait", 0.0)
        guest = getattr(t, "guest", 0.0) + getattr(t, "guest_nice", 0.0)
        busy.append(sum(t) - idle - steal - guest)  # guest time is already in user time
        stolen.append(steal)
    return busy, stolen


class LoadMeter:
    """``with LoadMeter() as load: ...``, then its readings of the block (in the class
    docstring's terms): :attr:`wait_share`, :attr:`others_on_study_cpus`,
    :attr:`steal_share`, :attr:`throttled_share`, :attr:`threads`, :attr:`own_cores` and
    :attr:`other_cores` (others' load anywhere on the machine)."""

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval
        # Per process (pid, start time): (own CPU seconds, its waited-for children's).
        self._first: dict[tuple[int, float], tuple[float, float]] = {}
        self._last: dict[tuple[int, float], tuple[float, float]] = {}
        self._parent: dict[tuple[int, float], int] = {}
        self._alive: set[tuple[int, float]] = set()
        self._threads: dict[tuple[int, int], _Thread] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _sample(self, before: bool = False) -> None:
        """Sample every process and thread of the tree (``before``: as the block begins)."""
        me = psutil.Process()
        alive = set()
        for process in [me, *me.children(recursive=True)]:
            try:
                with process.oneshot():
                    key = (process.pid, process.create_time())
                    times = process.cpu_times()
                    self._parent[key] = process.ppid()
                threads = _threads(process)
            except (psutil.Error, OSError):  # it ended meanwhile: its last sample stands
                continue
            seconds = (times.user + times.system, times.children_user + times.children_system)
            # A process first seen after the block began was born in it and spent all its
            # CPU time there (a start time from psutil is only as exact as the boot time,
            # to a second, so it cannot tell); so was a thread.
            self._first.setdefault(key, seconds if before else (0.0, 0.0))
            self._last[key] = seconds
            alive.add(key)
            for tid, (cpu, wait, processor) in threads.items():
                seen = self._threads.get((process.pid, tid))
                if seen is None:
                    start = (cpu, wait) if before else (0.0, 0.0)
                    seen = self._threads[(process.pid, tid)] = _Thread(*start, cpu, wait, set())
                seen.cpu, seen.wait = cpu, wait
                if processor >= 0 and not before:
                    seen.cpus.add(processor)
        self._alive = alive

    def _ours(self) -> float:
        """CPU seconds this process tree used in the block: every sampled process's own, and
        what each waited for besides the processes seen to end (those count as themselves)."""
        seen_ended: dict[int, float] = {}
        for key in self._last.keys() - self._alive:  # ended: its parent may have waited for it
            seen_ended[self._parent[key]] = seen_ended.get(self._parent[key], 0.0) + sum(
                self._last[key]
            )
        ours = 0.0
        for key, (own, waited) in self._last.items():
            first_own, first_waited = self._first[key]
            unseen = waited - first_waited - seen_ended.get(key[0], 0.0)
            ours += own - first_own + max(unseen, 0.0)  # Ray's raylet waits for none
        return ours

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> LoadMeter:
        self._wall = time.monotonic()
        self._busy, self._stolen = _per_cpu_busy()
        self._throttled = throttled_seconds()
        self._sample(before=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        wall = max(time.monotonic() - self._wall, 1e-9)
        busy, stolen = _per_cpu_busy()
        throttled = throttled_seconds()
        ours = self._ours()
        self.wall_seconds = wall
        self.own_cores = ours / wall
        """cores this process and its descendants used, on average"""
        self.other_cores = max(sum(busy) - sum(self._busy) - ours, 0.0) / wall
        """cores every other program used, on average, anywhere on the machine"""
        spent = [t for t in self._threads.values() if t.cpu > t.first_cpu]
        cpu = sum(t.cpu - t.first_cpu for t in spent)
        self.threads = sum(1 for t in spent if t.cpu - t.first_cpu >= ACTIVE_SHARE * wall)
        """threads of the tree that used at least :data:`ACTIVE_SHARE` of a core"""
        self.wait_share: float | None = (
            sum(t.wait - t.first_wait for t in spent) / cpu
            if schedstat_readable() and cpu > 0
            else None
        )
        """seconds the tree's threads waited for a CPU per second of CPU; None: not read"""
        active = [t for t in spent if t.cpu - t.first_cpu >= ACTIVE_SHARE * wall] or spent
        cpus = set().union(*(t.cpus for t in active))
        if len(cpus) < len(active):  # a team seen on fewer CPUs than threads: the samples
            cpus |= set(allowed_cpus())  # missed some, or others held the rest: count them all
        cpus = {c for c in cpus if c < len(busy)}
        self.study_cpus = len(cpus)
        """how many CPUs the tree's busy threads were seen running on"""
        on_them = sum(busy[c] - self._busy[c] for c in cpus)
        self.others_on_study_cpus = max(on_them - ours, 0.0) / wall
        """cores of others' work on the CPUs the tree ran on"""
        steal = sum(stolen[c] - self._stolen[c] for c in cpus)
        self.steal_share = steal / (wall * len(cpus)) if cpus else 0.0
        """share of those CPUs' time the hypervisor gave other VMs"""
        self.throttled_share = (
            (throttled - self._throttled) / wall
            if throttled is not None and self._throttled is not None
            else 0.0
        )
        """share of the wall time the cgroup's CPU quota held the tree back"""
        self.quota = cpu_quota()
        """the CPUs the cgroup's quota allows, or None"""
        self.allowed = len(allowed_cpus())
        """the CPUs this process may run on"""


def verdict_causes(r: dict[str, float | None]) -> list[str]:
    """Why a study is not judged, from its meter's :func:`readings` (or a record's
    provenance): one line per cause, empty where it was not contended."""
    causes = []
    throttled = r.get("throttled_share") or 0.0
    if throttled > THROTTLED_SHARE:
        quota, threads = r.get("quota"), int(r.get("threads") or 0)
        if quota is not None and threads > quota:
            use = max(1, math.floor(quota))
            causes.append(
                f"this kernel may use {quota:g} CPU{'s' if quota != 1 else ''} (its container's "
                f"quota) and the study ran {threads} threads, so the quota held them back "
                f"({throttled:.2f} s per second): use {use} (torch.set_num_threads({use}) or "
                f"HETERO_TUTORIAL_THREADS={use})"
            )
        else:
            causes.append(f"its container's CPU quota held it back ({throttled:.2f} s per second)")
    wait = r.get("wait_share")
    if wait is not None:
        others = r.get("others_on_study_cpus") or 0.0
        if wait > WAIT_SHARE and others > OTHERS_ON_STUDY_CPUS and throttled <= THROTTLED_SHARE:
            causes.append(
                f"its threads waited {wait:.2f} s for a CPU per second they ran, while others "
                f"used {others:.2f} cores of the CPUs it ran on"
            )
    else:
        spare = max((r.get("allowed") or 1) - (r.get("threads") or 1), 0)
        other = r.get("other_cores") or 0.0
        if other > spare + SPARE_MARGIN:
            causes.append(
                f"others used {other:.2f} cores, more than the {spare} this process had to spare"
            )
    steal = r.get("steal_share") or 0.0
    if steal > STEAL_SHARE:
        causes.append(f"the hypervisor gave other machines {steal:.0%} of its CPUs' time")
    return causes


def method(r: dict[str, float | None]) -> str:
    """Which reading decided: the kernel's run-queue wait, or others' load (elsewhere)."""
    return (
        "run-queue wait"
        if r.get("wait_share") is not None
        else ("others' load against the spare CPUs")
    )


READING_KEYS = (
    "wait_share",
    "others_on_study_cpus",
    "steal_share",
    "throttled_share",
    "other_cores",
    "own_cores",
    "threads",
    "allowed",
    "quota",
)
"""The names of a meter's readings (:func:`readings`), as a record's provenance keeps them."""


def readings(load: LoadMeter) -> dict[str, float | None]:
    """The meter's readings as plain numbers (what a record's provenance keeps)."""
    return {
        "wait_share": None if load.wait_share is None else round(load.wait_share, 4),
        "others_on_study_cpus": round(load.others_on_study_cpus, 3),
        "steal_share": round(load.steal_share, 4),
        "throttled_share": round(load.throttled_share, 4),
        "other_cores": round(load.other_cores, 3),
        "own_cores": round(load.own_cores, 3),
        "threads": load.threads,
        "allowed": load.allowed,
        "quota": load.quota,
    }
