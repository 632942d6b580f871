"""The overlapped engine on Ray: the same learning as the process engine, a Ray of its
own that listens on the loopback address only and is gone after the run, and the faults.

Ray takes seconds to start, so the tests after the first share one local Ray (a module
fixture); the first starts and stops its own, as a learner's run does."""

import ipaddress
import sys
import time

import psutil
import pytest
import torch

ray = pytest.importorskip("ray", reason="Ray is the optional extra [ray] (make setup installs it)")

from test_overlapped import CONFIG, flat, run_children, shared_memory_files  # noqa: E402
from test_overlapped_faults import LONG, fail_at_rollout_2  # noqa: E402

from hetero_tutorial.core.placement import placement  # noqa: E402
from hetero_tutorial.rl.overlapped.loop import train_overlapped  # noqa: E402
from hetero_tutorial.rl.overlapped.ray_engine import local_ray  # noqa: E402
from hetero_tutorial.rl.overlapped.worker import WorkerFailed  # noqa: E402
from hetero_tutorial.rl.ppo.runs import train  # noqa: E402

# Ray's processes and shared memory are the machine's, not one test's: under pytest-xdist
# (make unit, --dist loadgroup) every test that starts a Ray runs on the same worker.
pytestmark = pytest.mark.xdist_group("ray")

# Ray's workers cannot import this test folder: send the hooks defined here by value.
ray.cloudpickle.register_pickle_by_value(sys.modules["test_overlapped_faults"])


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


def run_listeners() -> list[tuple[str, int, str]]:
    """(address, port, process name) of every listening socket of this process and its
    descendants: Ray's servers and the rollout workers."""
    me = psutil.Process()
    processes = {p.pid: p for p in [me, *me.children(recursive=True)]}
    found = []
    for conn in psutil.net_connections(kind="inet"):
        if conn.status == psutil.CONN_LISTEN and conn.pid in processes:
            found.append((conn.laddr.ip, conn.laddr.port, processes[conn.pid].name()))
    return found


def rollout_actors() -> list[psutil.Process]:
    return [p for p in run_children() if "RolloutActor" in p.name()]


def test_a_ray_run_starts_a_loopback_only_ray_learns_as_the_sequential_plan_and_stops_it():
    assert not ray.is_initialized()
    listeners = []

    def look(done: int, total: int) -> None:
        if done == 2:
            listeners.extend(run_listeners())

    sequential = train(CONFIG, placement("hybrid"), seed=2, eval_episodes=2)
    shm_before = shared_memory_files()
    result = train_overlapped(
        CONFIG, seed=2, workers=1, max_policy_lag=0, backend="ray", eval_episodes=2, progress=look
    )
    assert torch.equal(flat(result.run.policy), flat(sequential.policy))
    assert result.run.episodes == sequential.episodes
    assert listeners, "Ray's servers should have been seen listening"
    exposed = [entry for entry in listeners if not _loopback(entry[0])]
    assert not exposed, f"listening beyond the loopback address: {exposed}"
    assert not ray.is_initialized()
    deadline = time.monotonic() + 10
    while run_children() and time.monotonic() < deadline:  # Ray's processes exit as told
        time.sleep(0.2)
    assert not run_children(), "a process of Ray's outlived the run"
    assert shared_memory_files() <= shm_before, "Ray's object store outlived the run"


@pytest.fixture(scope="module")
def shared_ray():
    with local_ray(cpus=2):
        yield


def test_an_existing_ray_is_used_left_running_and_learns_as_the_process_engine(shared_ray):
    result = train_overlapped(CONFIG, seed=0, workers=1, max_policy_lag=1, backend="ray")
    processes = train_overlapped(CONFIG, seed=0, workers=1, max_policy_lag=1, backend="mp")
    assert torch.equal(flat(result.run.policy), flat(processes.run.policy))  # same decisions
    assert result.policy_lag_histogram == {0: 1, 1: CONFIG.num_iterations - 1}
    assert result.fields()["backend"] == "ray"
    assert ray.is_initialized()
    _assert_no_actor_left()


def test_a_ray_worker_that_raises_stops_the_run_naming_it_with_its_traceback(shared_ray):
    with pytest.raises(WorkerFailed, match="rollout worker 0") as failure:
        train_overlapped(
            LONG, workers=1, backend="ray", eval_episodes=0, worker_hook=fail_at_rollout_2
        )
    assert "a test hook's failure inside the worker" in str(failure.value)
    _assert_no_actor_left()


def test_a_ray_worker_killed_by_sigkill_is_detected_within_5_seconds(shared_ray):
    killed_at = []

    def kill_a_worker(done: int, total: int) -> None:
        if done == 3:
            (actor,) = rollout_actors()
            actor.kill()  # SIGKILL
            killed_at.append(time.monotonic())

    with pytest.raises(WorkerFailed, match="died"):
        train_overlapped(LONG, workers=1, backend="ray", eval_episodes=0, progress=kill_a_worker)
    assert time.monotonic() - killed_at[0] < 5.0
    _assert_no_actor_left()


def test_keyboard_interrupt_stops_the_ray_workers(shared_ray):
    def stop_button(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_overlapped(LONG, workers=1, backend="ray", eval_episodes=0, progress=stop_button)
    _assert_no_actor_left()


def _assert_no_actor_left() -> None:
    assert not rollout_actors(), "a rollout actor outlived its run"
