"""py-spy runs end with everything they launched: a timeout leaves no profiled program behind."""

import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.profiling import pyspy

# Stands in for py-spy: like `py-spy record -- target`, it launches the target as its
# child, then waits; the child (a long sleep) writes its pid where the test can read it.
FAKE_PY_SPY = textwrap.dedent(
    """\
    #!{python}
    import subprocess, sys, time
    target = sys.argv[sys.argv.index("--") + 1 :]
    child = subprocess.Popen(target)
    with open({pid_file!r}, "w") as out:
        out.write(str(child.pid))
    time.sleep(120)
    """
)


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting to be reaped counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_a_timed_out_recording_ends_the_program_py_spy_launched(monkeypatch, tmp_path):
    pid_file = tmp_path / "child.pid"
    fake = tmp_path / "py-spy"
    fake.write_text(FAKE_PY_SPY.format(python=sys.executable, pid_file=str(pid_file)))
    fake.chmod(0o755)
    monkeypatch.setattr(pyspy, "py_spy_executable", lambda: str(fake))
    target = [sys.executable, "-c", "import time; time.sleep(120)"]
    try:
        with pytest.raises(UsageError, match="profile fewer steps"):
            pyspy.record_py_spy(target, tmp_path / "raw.txt", timeout=3.0)
        child = int(pid_file.read_text())
        deadline = time.monotonic() + 5.0
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child), "the profiled program outlived its py-spy run"
    finally:
        if pid_file.exists() and _alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
