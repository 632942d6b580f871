"""The busy-machine guard: a study's verdicts are withheld where it had to wait for a CPU.

Every timed study that prints a verdict or an advice line runs under :func:`study` (or is
decorated :func:`guarded`). A :class:`~hetero_tutorial.core.contention.LoadMeter` reads,
while it runs, whether the study's own threads waited for a CPU that others held, whether
the hypervisor took its CPUs' time, and whether its container's quota held it back (the
thresholds and their derivation are in :mod:`hetero_tutorial.core.contention`). One of its
figures sitting :data:`OFF_REFERENCE` times from this CPU's reference record with a tight
spread (:func:`compare_to_reference`) marks it too. The reading (a :class:`Busyness`) is
the study's: the guard files it with what the study returned, so that

* a function that writes a verdict (decorated :func:`judged`) reads the readings of the
  figures it is given, and writes the guard's line instead where one was busy; given
  figures no study returned (a table derived from them), it reads the newest study's;
* a :class:`~hetero_tutorial.core.timing.Spread` declines to name a side inside such a
  writer exactly when the writer would, and elsewhere when the newest study was busy;
* a record's provenance (``machine_load``, which the ledger and the advice read) carries
  the first busy reading since the previous record.

A quiet study's verdict therefore stays when a later study of the same process is busy,
and a verdict is never drawn from a busy study, wherever it is written. :func:`withheld`
is the one gate all of them ask.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

import torch

from hetero_tutorial.core import contention
from hetero_tutorial.core.contention import LoadMeter

P = ParamSpec("P")
R = TypeVar("R")


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
    """The guard's reading of one study: the meter's readings and off-reference figures."""

    study: str
    seconds: float
    load: dict[str, Any] = field(default_factory=dict)
    """the meter's readings (:func:`~hetero_tutorial.core.contention.readings`)"""
    off_reference: tuple[str, ...] = ()
    """evidence lines for figures :data:`OFF_REFERENCE` times off this CPU's reference"""

    @property
    def causes(self) -> list[str]:
        """Why the study is not judged, one line per cause; empty where it is judged."""
        return [*contention.verdict_causes(self.load), *self.off_reference]

    @property
    def busy(self) -> bool:
        return bool(self.causes)

    @property
    def other_cores(self) -> float:
        """Cores others used anywhere on the machine while the study ran."""
        return float(self.load.get("other_cores") or 0.0)

    @property
    def method(self) -> str:
        return contention.method(self.load)

    def line(self) -> str:
        """The study's verdict line when it is busy: what was measured, and the evidence (the
        rule itself is the glossary's *not judged*, said once, not in every line)."""
        return (
            f"{self.study}: {BUSY_WORDS} ({'; '.join(self.causes)}; over {self.seconds:.1f} s, "
            f"read by {self.method}): not judged"
        )

    def quiet_line(self) -> str:
        """What the guard saw during a judged study, in a sentence."""
        wait = self.load.get("wait_share")
        seen = (
            f"its threads waited {wait:.3f} s for a CPU per second they ran"
            if wait is not None
            else f"others used {self.other_cores:.2f} cores"
        )
        if wait is not None and wait > contention.WAIT_SHARE and not self.busy:
            seen += " (for one another: its own threads and processes outnumbered the cores)"
        return (
            f"While {self.study} ran ({self.seconds:.1f} s), {seen}; others used "
            f"{self.other_cores:.2f} cores anywhere on the machine "
            f"({'busy: its verdicts are withheld' if self.busy else 'quiet enough to judge'}; "
            f"read by {self.method})."
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "seconds": round(self.seconds, 2),
            **self.load,
            "other_load_cores": round(self.other_cores, 3),
            "off_reference": list(self.off_reference),
            "busy": self.busy,
        }

    @classmethod
    def from_json(cls, found: dict[str, Any]) -> Busyness:
        """A record's reading back (records before the run-queue reading carry others' load
        only: they are read as the fallback reads it)."""
        load = {k: v for k, v in found.items() if k in contention.READING_KEYS}
        load.setdefault("other_cores", found.get("other_load_cores"))
        return cls(found["study"], found["seconds"], load, tuple(found.get("off_reference", ())))


MIN_SECONDS = 1.0
"""The shortest window a study is read over. The kernel counts CPU time in ticks of 10 ms,
machine-wide and per process, so a 30 ms study would read one stray tick as a third of a
core; a study shorter than this goes on being read after it ends, to a second."""

_readings: list[Busyness] = []
"""every finished study of this process, in order"""
_measuring = False
"""a study is running: verdicts wait for its reading"""
_recorded = 0
"""how many of the readings the newest record's provenance has covered"""
_filed: dict[int, tuple[object, tuple[int, ...]]] = {}
"""what studies returned, by ``id``: (the object, kept alive so its id stays its own, and
the indices of its studies' readings)"""
FILED_MAX = 512
"""how many returned objects are kept filed (the oldest go first)"""
_judging: contextvars.ContextVar[tuple[Busyness, ...] | None] = contextvars.ContextVar(
    "judging", default=None
)
"""the readings of the figures a :func:`judged` writer was given, while it writes"""


def enabled() -> bool:
    return os.environ.get(GUARD_ENV_VAR, "1") != "0"


@dataclass
class Study:
    """What :func:`study` yields: its reading once it has ended (None until then, and
    where the guard is off or the study runs inside another)."""

    name: str
    reading: Busyness | None = None
    index: int | None = None

    def file(self, figures: object) -> object:
        """File ``figures`` (what the study returns) with this study's reading: a
        :func:`judged` writer given them, or their rows, reads it. Returns ``figures``."""
        if self.index is not None:
            _file(figures, (self.index,))
        return figures


def _file(figures: object, indices: tuple[int, ...]) -> None:
    for part in _parts(figures, depth=2):
        _filed[id(part)] = (part, indices)
    while len(_filed) > FILED_MAX:
        del _filed[next(iter(_filed))]


def derived(source: object, figures: R) -> R:
    """File ``figures``, computed from ``source``, with the readings ``source`` carries
    (a table of effects derived from a study's rows keeps the study's reading)."""
    indices = _indices(source)
    if indices:
        _file(figures, tuple(sorted(indices)))
    return figures


def _parts(figures: object, depth: int) -> Iterator[object]:
    """``figures`` and what it holds, ``depth`` levels down: the containers among them, but
    for tuples of plain numbers (an episode's (step, return): they would only fill the
    registry, and no writer is given one alone)."""
    if isinstance(figures, (str, bytes, int, float, bool, type(None), torch.Tensor)):
        return
    if isinstance(figures, tuple) and all(isinstance(x, (int, float)) for x in figures):
        return
    yield figures
    if depth == 0:
        return
    if isinstance(figures, dict):
        inner = list(figures.values())
    elif isinstance(figures, (list, tuple)):
        inner = list(figures)
    elif dataclasses.is_dataclass(figures) and not isinstance(figures, type):
        inner = [getattr(figures, f.name) for f in dataclasses.fields(figures)]
    else:
        return
    for part in inner:
        yield from _parts(part, depth - 1)


@contextmanager
def study(name: str) -> Iterator[Study]:
    """Run a timed study under the guard: its threads' waits are read while it runs, and
    what it returns is filed with that reading (:meth:`Study.file`).

    A study inside another (a bench's grid of studies) runs under the outer one's meter."""
    global _measuring
    handle = Study(name)
    if _measuring or not enabled():
        yield handle
        return
    _measuring = True
    try:
        with LoadMeter() as load:
            began = time.monotonic()
            yield handle
            time.sleep(max(0.0, MIN_SECONDS - (time.monotonic() - began)))
    finally:
        _measuring = False
    handle.reading = Busyness(name, load.wall_seconds, contention.readings(load))
    handle.index = len(_readings)
    _readings.append(handle.reading)


def guarded(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator: the function is a timed study (:func:`study`), and what it returns is
    filed with the study's reading."""

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            with study(name) as handle:
                figures = function(*args, **kwargs)
            handle.file(figures)
            return figures

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


def _indices(*figures: object) -> set[int]:
    return {
        index
        for figure in figures
        for part in _parts(figure, depth=3)
        if id(part) in _filed and _filed[id(part)][0] is part
        for index in _filed[id(part)][1]
    }


def readings_of(*figures: object) -> list[Busyness]:
    """The readings of the studies that returned ``figures`` (or the rows in them)."""
    indices = _indices(*figures)
    return [_readings[i] for i in sorted(indices) if i < len(_readings)]


def withheld(*figures: object) -> Busyness | None:
    """The gate: the busy reading that withholds a verdict on ``figures``, else None.

    The readings of the studies that returned ``figures``; with none given or found, those
    of the figures the :func:`judged` writer now writing was given; else the newest study's."""
    found = readings_of(*figures) if figures else []
    if not found:
        judging = _judging.get()
        found = list(judging) if judging is not None else [r for r in [latest()] if r]
    return next((reading for reading in found if reading.busy), None)


def for_record() -> list[Busyness]:
    """The readings a new record's provenance carries: every busy study since the previous
    record (a record holds every figure measured since), else the newest study alone."""
    global _recorded
    since = _readings[_recorded:] or _readings[-1:]
    _recorded = len(_readings)
    busy = [reading for reading in since if reading.busy]
    return busy or since[-1:]


def judged(scope: str = "study") -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator for a function that writes a verdict, rule or advice (a ``str`` or a list
    of lines): where the studies whose figures it is given ran busy, it returns the guard's
    line(s) instead. Given figures no study returned, ``scope`` says which studies it
    reads: ``"study"`` the newest (a sentence under its study), ``"all"`` every study of
    this process (a notebook's summary of findings)."""
    if scope not in ("study", "all"):
        raise ValueError(f"scope must be 'study' or 'all', not {scope!r}")

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        lines_out = str(function.__annotations__.get("return", "")).startswith("list")

        @functools.wraps(function)
        def write(*args: P.args, **kwargs: P.kwargs) -> R:
            found = readings_of(*args, *kwargs.values())
            if not found:
                found = [r for r in [latest()] if r] if scope == "study" else list(_readings)
            lines = list(dict.fromkeys(_once(r) for r in found if r.busy))
            if lines:
                return lines if lines_out else "; ".join(lines)  # type: ignore[return-value]
            token = _judging.set(tuple(found))
            try:
                return function(*args, **kwargs)
            finally:
                _judging.reset(token)

        return write

    return wrap


_said: set[int] = set()
"""The busy readings whose evidence a verdict line has printed in this process."""


def _once(reading: Busyness) -> str:
    """A busy reading's line in full the first time a verdict prints it, then in a few words:
    one notebook's later verdicts on the same study repeat no evidence."""
    if id(reading) in _said:
        return f"{reading.study}: not judged (busy, as said above)"
    _said.add(id(reading))
    return reading.line()


def busy_mark() -> str:
    """What a table's caption or a plot's title adds for figures from a busy study."""
    return " [busy machine: not judged]" if withheld() else ""


def how_busy(seconds: float = 1.0) -> str:
    """Whether a study would wait for a CPU now: a matrix-product loop on this process's
    threads for ``seconds``, read as a study is. A notebook's and ``doctor``'s line before
    they measure."""
    a = torch.randn(256, 256)
    with LoadMeter(interval=seconds / 4) as load:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            torch.tanh(a @ a)
    reading = Busyness("a probe", load.wall_seconds, contention.readings(load))
    causes = reading.causes
    own_quota = (reading.load.get("throttled_share") or 0.0) > contention.THROTTLED_SHARE
    advice = "" if own_quota else "; close other programs (or wait for other users) and run again"
    state = (
        "quiet enough to judge"
        if not causes
        else f"contended: {'; '.join(causes)}. The studies below will say so and withhold "
        f"their verdicts{advice}"
    )
    wait = reading.load.get("wait_share")
    seen = (
        f"a probe's threads waited {wait:.3f} s for a CPU per second they ran"
        if wait is not None
        else "no run-queue wait on this platform"
    )
    if not causes:
        return f"Now: quiet enough to judge ({seen}; others used {reading.other_cores:.2f} cores)."
    return (
        f"Now: {seen}; others used {reading.other_cores:.2f} cores anywhere on the machine "
        f"(read by {reading.method}; {state})."
    )
