"""How busy other programs kept the machine while a measurement ran.

On a shared machine (a classroom's, CI's, a developer box with other people's jobs) a
design that needs two free cores suffers from one other busy program far more than a
design that needs one. A measurement should therefore say how much CPU others used
while it ran. :class:`OtherLoad` measures it as the machine's busy CPU time, from the
kernel's counters (``psutil.cpu_times``), minus that of this process and everything it
started (its live descendants, and those that ended, whose CPU time the kernel adds to
the parent that waited for them), divided by the wall time: in cores.
"""

from __future__ import annotations

import time
from types import TracebackType

import psutil


def _machine_busy_seconds() -> float:
    times = psutil.cpu_times()
    idle = times.idle + getattr(times, "iowait", 0.0)
    steal = getattr(times, "steal", 0.0)  # the hypervisor's, not this machine's programs'
    return (
        sum(times) - idle - steal - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
    )


def _tree_seconds() -> float:
    """CPU seconds of this process, its live descendants, and the descendants they reaped."""
    me = psutil.Process()
    total = 0.0
    for process in [me, *me.children(recursive=True)]:
        try:
            t = process.cpu_times()
        except psutil.Error:  # it ended meanwhile: its parent's children_* times have it
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


class OtherLoad:
    """``with OtherLoad() as load: ...`` then ``load.cores``: CPU cores other programs used."""

    def __enter__(self) -> OtherLoad:
        self._wall = time.monotonic()
        self._busy = _machine_busy_seconds()
        self._ours = _tree_seconds()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        wall = time.monotonic() - self._wall
        busy = _machine_busy_seconds() - self._busy
        ours = _tree_seconds() - self._ours
        self.wall_seconds = wall
        self.own_cores = ours / wall if wall > 0 else 0.0
        """cores this process and its descendants used, on average"""
        self.cores = max(busy - ours, 0.0) / wall if wall > 0 else 0.0
        """cores every other program used, on average"""
