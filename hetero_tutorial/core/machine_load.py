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
about ``interval`` seconds of CPU per process that ends during the block.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

import psutil


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
        self._first: dict[tuple[int, float], float] = {}
        self._last: dict[tuple[int, float], float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        for process in [me, *me.children(recursive=True)]:
            try:
                with process.oneshot():
                    key = (process.pid, process.create_time())
                    times = process.cpu_times()
            except psutil.Error:  # it ended meanwhile: its last sample stands
                continue
            seconds = times.user + times.system
            # A process born during the block spent all its CPU time in it.
            self._first.setdefault(key, 0.0 if key[1] > self._began else seconds)
            self._last[key] = seconds

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> OtherLoad:
        self._began = time.time()
        self._wall = time.monotonic()
        self._busy = _machine_busy_seconds()
        self._sample()
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
        ours = sum(last - self._first[key] for key, last in self._last.items())
        self.wall_seconds = wall
        self.own_cores = ours / wall if wall > 0 else 0.0
        """cores this process and its descendants used, on average"""
        self.cores = max(busy - ours, 0.0) / wall if wall > 0 else 0.0
        """cores every other program used, on average"""
