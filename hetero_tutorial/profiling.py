"""Profiling: py-spy flame graphs, cProfile tables and torch.profiler summaries.

This module starts with the check every profiling path needs first: can py-spy
run on this machine at all?
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PySpyStatus:
    """Whether py-spy can profile here, and a sentence saying why not when it cannot."""

    available: bool
    message: str
    executable: str | None = None


def py_spy_status(timeout: float = 30.0) -> PySpyStatus:
    """Try py-spy for real: record a half-second Python busy loop it launches itself.

    Launching the target (``py-spy record -- python ...``) needs no root and no
    ptrace permission to attach, which is why the series always profiles that way.
    """
    executable = shutil.which("py-spy") or _beside_python("py-spy")
    if executable is None:
        return PySpyStatus(
            False, "py-spy is not installed: `pip install py-spy` (the cProfile path still works)."
        )
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
            "--output",
            str(output),
            "--",
            sys.executable,
            "-c",
            busy,
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
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


def _beside_python(name: str) -> str | None:
    candidate = Path(sys.executable).with_name(name)
    return str(candidate) if candidate.exists() else None
