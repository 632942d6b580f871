"""The README's cluster recipe, run as written on one machine: a head and a second node on the
loopback address, one CPU each, joined with the head's token; then ``bench overlap`` with two
Ray workers, which needs both nodes. Everything the recipe started is stopped afterwards, also
when a step fails. And the local Ray of two users on one host: each in its own temp folder.

Only this test's Ray processes are stopped (found by its own temp folder), never with ``ray
stop``, which would stop every Ray of this user on the machine.
"""

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest

pytest.importorskip("ray", reason="Ray is the optional extra [ray] (make setup installs it)")

from hetero_tutorial.rl.overlapped import ray_engine

# Ray's processes and shared memory are the machine's, not one test's: under pytest-xdist
# (make unit, --dist loadgroup) every test that starts a Ray runs on the same worker.
pytestmark = pytest.mark.xdist_group("ray")

RAY = str(Path(sys.executable).with_name("ray"))
OVERLAP = ["bench", "overlap", "--env", "CartPole-v1", "--steps", "1024", "--seeds", "0"]
OVERLAP += ["--max-policy-lag", "1", "--eval-episodes", "1", "--backend", "ray"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _processes_of(folder: str) -> list[psutil.Process]:
    """Every process whose command line names ``folder`` (this test's Ray), and their children."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if any(folder in part for part in process.info["cmdline"] or ()):
            found.append(process)
            found += process.children(recursive=True)
    return found


def _stop(folder: str) -> None:
    """SIGTERM, then SIGKILL for what is left after 3 s: some of Ray's processes outwait any
    grace (15 s cost this test 15 s on every run), and the test checks none survives."""
    processes = _processes_of(folder)
    for process in processes:
        process.terminate()
    _, alive = psutil.wait_procs(processes, timeout=3)
    for process in alive:
        process.kill()
    psutil.wait_procs(alive, timeout=5)


@pytest.mark.slow
def test_the_cluster_recipe_joins_a_second_node_with_the_token_and_leaves_nothing_running():
    folder = tempfile.mkdtemp(prefix="rc", dir="/tmp")  # short: Ray's socket paths must fit
    port = _free_port()
    # The token, as a worker machine gets it (RAY_AUTH_TOKEN, or the head's ~/.ray/auth_token
    # copied there): private to this test, so no token file of this user is touched.
    env = os.environ | {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
    head = [RAY, "start", "--head", f"--port={port}", f"--temp-dir={folder}", *common]
    head += ["--include-dashboard=false"]
    worker = [RAY, "start", f"--address=127.0.0.1:{port}", *common]
    try:
        subprocess.run(head, env=env, check=True, capture_output=True, timeout=180)
        subprocess.run(worker, env=env, check=True, capture_output=True, timeout=180)
        bench = [sys.executable, "-m", "hetero_tutorial", *OVERLAP, "--workers", "2"]
        bench += ["--address", f"127.0.0.1:{port}"]
        run = subprocess.run(bench, env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        assert "ray, 2 workers, lag 1" in run.stdout
    finally:
        _stop(folder)
        left = _processes_of(folder)
        shutil.rmtree(folder, ignore_errors=True)
    assert not left, f"still running after the test: {left}"


@pytest.mark.slow
def test_two_users_local_rays_start_each_in_its_own_temp_folder(monkeypatch, request):
    """Ray's default /tmp/ray belongs to whoever started Ray first on a host; the local Ray
    uses a folder per user, so a second user's start does not meet the first one's."""
    # Ray's socket paths must stay under 108 bytes: a short folder of this test's own, not tmp_path.
    short = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(short, ignore_errors=True))
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    folders = []
    for uid in (4001, 4002):  # two users of one shared host
        monkeypatch.setattr(os, "getuid", lambda uid=uid: uid)
        folders.append(ray_engine.user_temp_dir())
        with ray_engine.local_ray(cpus=1):  # as a learner's run starts it
            assert ray_engine.import_ray().is_initialized()
    assert folders == [short / "ray-4001", short / "ray-4002"]
    for folder in folders:
        assert any(folder.glob("session_*")), f"Ray did not start in {folder}"


def test_the_local_ray_asks_for_token_authentication_unless_the_learner_chose(monkeypatch):
    pytest.importorskip("ray._raylet")
    monkeypatch.delenv(ray_engine.AUTH_MODE_VARIABLE, raising=False)
    with ray_engine._single_machine():
        assert os.environ[ray_engine.AUTH_MODE_VARIABLE] == "token"
    assert ray_engine.AUTH_MODE_VARIABLE not in os.environ
    monkeypatch.setenv(ray_engine.AUTH_MODE_VARIABLE, "disabled")
    with ray_engine._single_machine():
        assert os.environ[ray_engine.AUTH_MODE_VARIABLE] == "disabled"
