"""How busy other programs kept the machine while a measurement ran.

On a shared machine (a classroom's, CI's, a developer box with other people's jobs) a
design that needs two free cores suffers from one other busy program far more than a
design that needs one. A measurement should therefore say how much CPU others used
while it ran. :class:`OtherLoad` measures it as the machine's busy CPU time, from the
kernel's counters (``psutil.cpu_times``), minus that of this process and every process
it started, directly or not, divided by the wall time: in cores.

This process tree's CPU time is sampled per process every ``interval`` seconds on a
background thread, because a process that ends takes its CPU time with it where its
parent does not wait for it (Ray's raylet lets the kernel reap its workers), and the
last sample of a process is what it is credited with: the figure's resolution is
about ``interval`` seconds of CPU per process that ends during the block. A process the
tree waited for (a compiler that Inductor's workers start for a few hundred milliseconds,
too short to be sampled) leaves its time in its parent's ``children_user`` and
``children_system``: what those grew by, less the processes the tree was seen to end, is
credited to the tree too.

The guard built on it: every timed study that prints a verdict or an advice line runs
under :func:`study` (or is decorated :func:`guarded`). Where others kept more than
:data:`BUSY_CORES` busy while it ran, or one of its figures sits :data:`OFF_REFERENCE`
times from this CPU's reference record with a tight spread (:func:`compare_to_reference`),
the study is busy: until the next study begins, :func:`withheld` returns its reading, every
:class:`~hetero_tutorial.core.timing.Spread` declines to name a side, the functions that
write verdicts (decorated :func:`judged`) write the guard's line instead, and tables, plots
and records (their provenance's ``machine_load``, which the ledger and the advice read)
carry the mark. A verdict is therefore never drawn from a busy study, wherever it is
written. The guard keeps its readings per process (a notebook's kernel, a bench command),
in the order the studies ran, because a notebook measures in one cell and judges in the next.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

import psutil

P = ParamSpec("P")
R = TypeVar("R")


def _machine_busy_seconds() -> float:
    t = psutil.cpu_times()
    idle = t.idle + getattr(t, "iowait", 0.0)
    # steal is the hypervisor's; guest time is already counted in user time
    excluded = sum(getattr(t, name, 0.0) for name in ("steal", "guest", "guest_nice"))
    return sum(t) - idle - excluded


class OtherLoad:
    """``with OtherLoad() as load: ...`` then ``load.cores``: CPU cores other programs used."""

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval
        # Per process (pid, start time): (own CPU seconds, its waited-for children's).
        self._first: dict[tuple[int, float], tuple[float, float]] = {}
        self._last: dict[tuple[int, float], tuple[float, float]] = {}
        self._parent: dict[tuple[int, float], int] = {}
        self._alive: set[tuple[int, float]] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _sample(self, before: bool = False) -> None:
        """Sample every process of the tree (``before``: the sample as the block begins)."""
        me = psutil.Process()
        alive = set()
        for process in [me, *me.children(recursive=True)]:
            try:
                with process.oneshot():
                    key = (process.pid, process.create_time())
                    times = process.cpu_times()
                    self._parent[key] = process.ppid()
            except psutil.Error:  # it ended meanwhile: its last sample stands
                continue
            seconds = (times.user + times.system, times.children_user + times.children_system)
            # A process first seen after the block began was born in it and spent all its
            # CPU time there (a start time from psutil is only as exact as the boot time,
            # to a second, so it cannot tell).
            self._first.setdefault(key, seconds if before else (0.0, 0.0))
            self._last[key] = seconds
            alive.add(key)
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

    def __enter__(self) -> OtherLoad:
        self._wall = time.monotonic()
        self._busy = _machine_busy_seconds()
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
        wall = time.monotonic() - self._wall
        busy = _machine_busy_seconds() - self._busy
        ours = self._ours()
        self.wall_seconds = wall
        self.own_cores = ours / wall if wall > 0 else 0.0
        """cores this process and its descendants used, on average"""
        self.cores = max(busy - ours, 0.0) / wall if wall > 0 else 0.0
        """cores every other program used, on average"""


BUSY_CORES = 0.25
"""Cores of others' load past which a study is not judged.

Derived from what a study can absorb: a study at all N usable cores that shares them with
``c`` cores of other work loses up to c / N of its CPU, and a thread team waits for its
slowest thread, so one preempted thread stalls the whole team (the two-thread side of a
thread sweep ran 8-70x slower beside one other notebook). At 0.25 cores on a 2-core machine
the loss is at most an eighth, within the 10-20% that interleaved repeats already see from
drift; a browser tab's or another notebook's full core (1.0) is four times past it. An idle
machine of this kind reads 0.00-0.05 (``python -m hetero_tutorial doctor``)."""

BUSY_WORDS = "measured on a busy machine"
"""What every line of a busy study says (:meth:`Busyness.line`): a reader of such a line,
the ledger's summary among them, can tell it from other reasons for no verdict."""

NOT_JUDGED = "not judged (busy machine)"
"""The verdict word a table's cell gets for a figure of a busy study: neither side, and not
"no clear effect" either, which would say the machine was quiet and the spread straddled."""

OFF_REFERENCE = 3.0
"""How far a figure may sit from this CPU's own reference record (as a ratio either way)
while its repeats agree with each other before the study is called busy: a tight spread
3x from the same CPU's record is the mark of a machine slowed by others in a way the
load meter missed (another container's work shows up only as slower timings)."""

TIGHT_SPREAD = 0.5
"""A figure's spread (IQR over median) at or below which its repeats count as agreeing."""

GUARD_ENV_VAR = "HETERO_TUTORIAL_LOAD_GUARD"
"""Set to ``0`` to switch the guard off (the unit tests do: two test workers share two cores)."""


@dataclass(frozen=True)
class Busyness:
    """How busy the machine was during one study: others' load and off-reference figures."""

    study: str
    other_cores: float
    seconds: float
    off_reference: tuple[str, ...] = ()
    """evidence lines for figures :data:`OFF_REFERENCE` times off this CPU's reference"""

    @property
    def busy(self) -> bool:
        return self.other_cores > BUSY_CORES or bool(self.off_reference)

    def line(self) -> str:
        """The study's verdict line when it is busy: what was measured, and the evidence."""
        evidence = [f"others used {self.other_cores:.2f} cores over {self.seconds:.1f} s"]
        evidence += self.off_reference
        return (
            f"{self.study}: {BUSY_WORDS} ({'; '.join(evidence)}): not judged "
            f"(a study is judged only while others keep at most {BUSY_CORES} cores busy and "
            f"its figures sit within {OFF_REFERENCE:g}x of this CPU's reference)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "other_load_cores": round(self.other_cores, 3),
            "seconds": round(self.seconds, 2),
            "off_reference": list(self.off_reference),
            "busy": self.busy,
        }


MIN_SECONDS = 1.0
"""The shortest window others' load is read over. The kernel counts CPU time in ticks of
10 ms, machine-wide and per process, so a 30 ms study would read one stray tick as a third
of a core; a study shorter than this goes on reading the load after it ends, to a second."""

_readings: list[Busyness] = []
"""every finished study of this process, in order"""
_measuring = False
"""a study is running: verdicts wait for its reading"""
_recorded = 0
"""how many of the readings the newest record's provenance has covered"""


def enabled() -> bool:
    return os.environ.get(GUARD_ENV_VAR, "1") != "0"


@contextmanager
def study(name: str) -> Iterator[None]:
    """Run a timed study under the guard: others' load is measured while it runs, and until
    the next study begins, every verdict (:func:`withheld`) is withheld if it was busy.

    A study inside another (a bench's grid of studies) runs under the outer one's meter."""
    global _measuring
    if _measuring or not enabled():
        yield
        return
    _measuring = True
    try:
        with OtherLoad() as load:
            began = time.monotonic()
            yield
            time.sleep(max(0.0, MIN_SECONDS - (time.monotonic() - began)))
    finally:
        _measuring = False
    _readings.append(Busyness(name, load.cores, load.wall_seconds))


def guarded(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator: the function is a timed study (:func:`study`)."""

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            with study(name):
                return function(*args, **kwargs)

        return run

    return wrap


def compare_to_reference(label: str, measured: float, reference: float, spread: float) -> None:
    """Flag the newest study busy if ``measured`` sits :data:`OFF_REFERENCE` times or more
    from this CPU's ``reference`` while its ``spread`` (IQR over median) is tight."""
    newest = latest()
    if newest is None or reference <= 0 or measured <= 0 or spread > TIGHT_SPREAD:
        return
    ratio = measured / reference
    if max(ratio, 1 / ratio) >= OFF_REFERENCE:
        line = f"{label} {ratio:.3g}x this CPU's reference record, with a tight spread"
        _readings[-1] = dataclasses.replace(newest, off_reference=(*newest.off_reference, line))


def latest() -> Busyness | None:
    """The guard's reading of the newest study that finished in this process (None while
    a study runs)."""
    return _readings[-1] if _readings and not _measuring else None


def withheld() -> Busyness | None:
    """The newest study's reading if it was busy (its verdicts are withheld), else None."""
    newest = latest()
    return newest if newest is not None and newest.busy else None


def for_record() -> Busyness | None:
    """The reading a new record's provenance carries: the first busy study since the
    previous record (a record holds every figure measured since), else the newest study."""
    global _recorded
    since = _readings[_recorded:] or _readings[-1:]
    _recorded = len(_readings)
    busy = [reading for reading in since if reading.busy]
    return busy[0] if busy else since[-1] if since else None


def judged(scope: str = "study") -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator for a function that writes a verdict, rule or advice (a ``str`` or a list
    of lines): where the studies it reads ran on a busy machine, it returns the guard's
    line(s) instead. ``scope``: ``"study"`` reads the newest study (a sentence under its
    study); ``"all"`` every study of this process (a notebook's summary of findings)."""
    if scope not in ("study", "all"):
        raise ValueError(f"scope must be 'study' or 'all', not {scope!r}")

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        lines_out = str(function.__annotations__.get("return", "")).startswith("list")

        @functools.wraps(function)
        def write(*args: P.args, **kwargs: P.kwargs) -> R:
            busy = [withheld()] if scope == "study" else [r for r in _readings if r.busy]
            lines = list(dict.fromkeys(r.line() for r in busy if r is not None))  # each once
            if not lines:
                return function(*args, **kwargs)
            return lines if lines_out else " ".join(lines)  # type: ignore[return-value]

        return write

    return wrap


def busy_mark() -> str:
    """What a table's caption or a plot's title adds for figures from a busy study."""
    flagged = withheld()
    return (
        f" [busy machine: others used {flagged.other_cores:.2f} cores; not judged]"
        if flagged
        else ""
    )


def how_busy(seconds: float = 1.0) -> str:
    """How busy other programs keep the machine now, over ``seconds``: a notebook's and
    ``doctor``'s line before they measure."""
    with OtherLoad(interval=seconds / 4) as load:
        time.sleep(seconds)
    state = (
        "quiet enough to measure"
        if load.cores <= BUSY_CORES
        else "busy: the studies below will say so and withhold their verdicts; close other "
        "programs (or wait for other users) and run again for figures worth keeping"
    )
    return f"Others' load now: {load.cores:.2f} cores over {seconds:g} s ({state})."
