"""cProfile: every Python call of a training run in this process, for tables and snakeviz.

cProfile counts every Python call: :func:`cprofile_ppo` saves a ``.prof`` file
for snakeviz and gives a table of the costliest functions, and the time spent in
the built-in functions that move data between devices.
"""

from __future__ import annotations

import cProfile
import pstats
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.paths import display_path
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import torch_threads
from hetero_tutorial.profiling import browser, stacks
from hetero_tutorial.profiling.pyspy import PROFILE_DIR, _beside_python, _end_group
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.trainer import PPOTrainer

T = TypeVar("T")


@dataclass(frozen=True)
class CProfileResult:
    """One cProfile run: the saved ``.prof`` (for snakeviz) and its statistics."""

    path: Path
    stats: pstats.Stats
    phase_seconds: dict[str, float] = field(default_factory=dict)
    """the profiled trainer's own phase timer, which ran under cProfile too (seconds)"""

    @property
    def total_seconds(self) -> float:
        """Seconds spent in all profiled functions (cProfile's own overhead included)."""
        return self.stats.total_tt

    def top(self, n: int = 12, sort: str = "tottime") -> list[dict[str, Any]]:
        """The ``n`` functions with most ``tottime`` (own time) or ``cumtime`` (with callees)."""
        if sort not in ("tottime", "cumtime"):
            raise UsageError(f"sort by 'tottime' or 'cumtime', not {sort!r}")
        rows = [
            {
                "function": _function_label(*key),
                "calls": calls,
                "tottime": own,
                "cumtime": cumulative,
                "share": own / self.total_seconds,
            }
            for key, (_, calls, own, cumulative, _) in self.stats.stats.items()
        ]
        return sorted(rows, key=lambda row: row[sort], reverse=True)[:n]

    def transfer_seconds(self) -> dict[str, float]:
        """Own seconds of the built-in functions that match a transfer pattern, per operation."""
        found: dict[str, float] = {}
        for (_, _, function), (_, _, own, _, _) in self.stats.stats.items():
            pattern = stacks.match(function, "cprofile")
            if pattern is not None:
                found[pattern.operation] = found.get(pattern.operation, 0.0) + own
        return found

    @property
    def transfer_share(self) -> float:
        """Fraction of the profiled time spent inside transfer functions (0..1)."""
        return sum(self.transfer_seconds().values()) / self.total_seconds

    def phase_shares(self) -> dict[str, float]:
        """Each PPO phase's share of the iterations' time as cProfile counts it: the ``cumtime``
        of the function the phase calls (:data:`PHASE_FUNCTIONS`) over that of the iterations."""
        cumulative: dict[str, float] = {}
        for (file, _, function), (_, _, _, cum, _) in self.stats.stats.items():
            for name, (where, called) in {**PHASE_FUNCTIONS, "iteration": ITERATION}.items():
                if function == called and file.replace("\\", "/").endswith(where):
                    cumulative[name] = cumulative.get(name, 0.0) + cum
        total = cumulative.pop("iteration", 0.0)
        return {name: seconds / total for name, seconds in cumulative.items()} if total else {}


PHASE_FUNCTIONS = {
    "rollout": ("rl/ppo/collectors.py", "collect"),
    "advantages": ("rl/ppo/advantages.py", "compute_advantages"),
    "update": ("rl/ppo/learner.py", "update"),
}
"""The function each PPO phase calls, by file and name: cProfile knows functions, not phases."""
ITERATION = ("rl/ppo/trainer.py", "iteration")


def _function_label(file: str, line: int, function: str) -> str:
    """cProfile's name for a function, with the path cut to its last two parts like py-spy's."""
    if file == "~":  # a built-in (C) function: its name says it all
        return function
    return stacks.Frame(function, file, line).label


def cprofile_call(
    fn: Callable[[], T], name: str, out_dir: Path = PROFILE_DIR
) -> tuple[T, CProfileResult]:
    """Call ``fn()`` under cProfile; return its result and the profile, saved as ``<name>.prof``.

    cProfile adds a fixed cost to every Python call, so code made of many small
    calls looks slower than it is: compare shares between runs, not seconds with
    unprofiled timings.
    """
    profiler = cProfile.Profile()
    result = profiler.runcall(fn)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.prof"
    profiler.dump_stats(path)
    return result, CProfileResult(path, pstats.Stats(str(path)))


@guarded("the cProfile run")
def cprofile_ppo(
    config: PPOConfig,
    placement: Placement,
    *,
    seed: int = 0,
    threads: int | None = 1,
    name: str = "ppo",
    out_dir: Path = PROFILE_DIR,
) -> CProfileResult:
    """Train PPO to ``config.total_steps`` under cProfile, saved as ``<name>.prof``.

    The trainer is built before profiling starts, so the profile holds the
    training iterations only (building the first optimizer imports seconds of code).
    """
    with torch_threads(threads):
        trainer = PPOTrainer(config, placement, seed)
        _, result = cprofile_call(lambda: _train(trainer), name, out_dir)
    trainer.envs.close()
    return replace(result, phase_seconds=dict(trainer.timer.seconds))


def _train(trainer: PPOTrainer) -> None:
    while not trainer.done:
        trainer.run_iteration()


def snakeviz_command(path: Path) -> str:
    """The shell command that opens a ``.prof`` in snakeviz (a browser page served locally)."""
    return f"snakeviz {display_path(path)}"


SUNBURST = "#chart svg path"
"""What snakeviz's page draws once its sunburst is there."""


def snakeviz_picture(path: Path, out: Path | None = None, timeout: float = 60.0) -> Path | None:
    """A screenshot of snakeviz's sunburst of the ``.prof`` at ``path``, as a PNG beside it.

    snakeviz serves the page on the loopback address (``-s``: it opens no browser
    itself); headless Chromium (:mod:`hetero_tutorial.profiling.browser`) loads it and
    takes the picture. The server and the browser are stopped in a ``finally``, so
    neither outlives the picture, also on an error (a Ctrl-C waits, within ``timeout``,
    for the picture's thread to stop them). Returns None where no
    Chromium (or no snakeviz) is installed: :data:`browser.MISSING` says why.
    """
    executable, server = browser.chromium(), shutil.which("snakeviz") or _beside_python("snakeviz")
    if executable is None or server is None:
        return None
    out = Path(out) if out is not None else Path(path).with_suffix(".sunburst.png")
    # Playwright's sync API refuses a thread with a running event loop (a Jupyter kernel's):
    # the picture is taken in a thread of its own, which stops the server and the browser
    with ThreadPoolExecutor(1) as pool:
        pool.submit(_photograph, Path(path), out, executable, server, timeout).result()
    return out


def _photograph(path: Path, out: Path, executable: str, server: str, timeout: float) -> None:
    """Serve ``path`` with snakeviz, photograph its sunburst to ``out``, stop both."""
    with socket.socket() as probe:  # a free port; snakeviz tries its neighbours if taken
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [server, "-s", "-H", "127.0.0.1", "-p", str(port), str(Path(path).resolve())]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        url = _served_url(process, timeout)
        with browser.headless_chromium(executable) as chromium:
            # (snakeviz's worker tries a CDN first, which the browser cannot reach, then
            # loads its libraries from the server: the page needs nothing from outside)
            page = chromium.new_page(viewport={"width": 1100, "height": 760})
            page.goto(url, timeout=timeout * 1000)
            page.wait_for_selector("#chart svg rect, #chart svg path", timeout=timeout * 1000)
            page.select_option("#sv-style-select", "sunburst")  # its default is the icicle
            page.wait_for_selector(SUNBURST, state="attached", timeout=timeout * 1000)
            page.wait_for_timeout(500)  # the sunburst's drawing transition
            page.screenshot(path=str(out))
    finally:
        _end_group(process, grace=5.0)  # snakeviz's server: never left running


def _served_url(process: subprocess.Popen, timeout: float) -> str:
    """The page's address, read from snakeviz's first lines (a clear error if it exits)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith("http://127.0.0.1"):
            return line.strip()
        if not line and process.poll() is not None:
            raise UsageError(f"snakeviz stopped before serving (exit status {process.returncode})")
    raise UsageError(f"snakeviz served nothing within {timeout:.0f} s")
