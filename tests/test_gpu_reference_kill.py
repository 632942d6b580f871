"""A GPU reference run killed mid-step still returns every step it finished: run after the
parallel suite, alone (see the Makefile), because its dry step is timed against its budget
and a second pytest worker beside it has made that step miss its record."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tarfile
import time

from test_gpu_reference import ROOT, SCRIPT, _alive, _check_device_limits


def test_a_killed_run_still_returns_every_step_finished_before(tmp_path):
    out, work = tmp_path / "out", tmp_path / "work"
    runner = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--dry-run", "--only", "profile-native", "overlap",
         "--out", str(out), "--work", str(work)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    summary, finished = out / "summary.json", []
    try:
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline and runner.poll() is None:
            rows = json.loads(summary.read_text()) if summary.is_file() else []
            finished = [row["step"] for row in rows]
            if "profile-native" in finished:
                break
            time.sleep(0.5)
        time.sleep(3)  # the next step has started
        import psutil

        running = psutil.Process(runner.pid).children(recursive=True)
        runner.send_signal(signal.SIGKILL)  # no handler runs: only what was written counts
        runner.wait()
    finally:
        if runner.poll() is None:
            runner.kill()
    assert finished[:2] == ["setup", "profile-native"], finished
    _check_device_limits(out)
    with tarfile.open(out / "gpu_reference.partall.tar.gz") as tar:
        names = tar.getnames()
    assert "records/bench.profile.profile-native.json" in names
    assert any(name.startswith("profiles/") and name.endswith("-native.svg") for name in names)
    gone = time.monotonic() + 10
    while time.monotonic() < gone and _alive(running):
        time.sleep(0.2)
    assert not _alive(running)
