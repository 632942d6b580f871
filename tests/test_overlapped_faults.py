"""An overlapped run stops cleanly, however a run ends: a worker that raises, a worker
killed by a signal, a stuck worker, Ctrl-C in the learner. No process outlives the run."""

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from test_overlapped import run_children, shared_memory_files

from hetero_tutorial.rl.overlapped.interrupts import interrupts_deferred
from hetero_tutorial.rl.overlapped.loop import train_overlapped
from hetero_tutorial.rl.overlapped.process_engine import ProcessEngine
from hetero_tutorial.rl.overlapped.worker import RolloutRequest, WorkerFailed
from hetero_tutorial.rl.ppo.config import PPOConfig

LONG = PPOConfig(env_id="CartPole-v1", total_steps=400 * 512)
"""A run far longer than any of these tests lets it go on."""


def fail_at_rollout_2(worker: int, rollout: int) -> None:
    if rollout == 2:
        raise RuntimeError("a test hook's failure inside the worker")


def stuck_at_rollout_1(worker: int, rollout: int) -> None:
    if rollout == 1:
        time.sleep(3600)


def _assert_nothing_left(shm_before: set[str]) -> None:
    assert not run_children(), "a worker outlived its run"
    assert shared_memory_files() <= shm_before, "a shared-memory segment outlived its run"


def test_a_worker_that_raises_stops_the_run_naming_it_with_its_traceback():
    shm_before = shared_memory_files()
    with pytest.raises(WorkerFailed, match="rollout worker 0") as failure:
        train_overlapped(LONG, workers=1, eval_episodes=0, worker_hook=fail_at_rollout_2)
    message = str(failure.value)
    assert "Traceback" in message and "a test hook's failure inside the worker" in message
    _assert_nothing_left(shm_before)


def _rollout_worker() -> multiprocessing.Process:
    (worker,) = [p for p in multiprocessing.active_children() if "rollout" in p.name]
    return worker


def test_a_worker_killed_by_sigkill_mid_run_is_detected_within_5_seconds():
    shm_before = shared_memory_files()
    running, killed_at = threading.Event(), []

    def kill_soon() -> None:  # from outside, at any moment of the run
        running.wait(30)
        time.sleep(0.3)
        os.kill(_rollout_worker().pid, signal.SIGKILL)
        killed_at.append(time.monotonic())

    killer = threading.Thread(target=kill_soon, daemon=True)
    killer.start()
    with pytest.raises(WorkerFailed, match="SIGKILL"):
        train_overlapped(LONG, workers=1, eval_episodes=0, progress=lambda d, t: running.set())
    assert time.monotonic() - killed_at[0] < 5.0
    killer.join()
    _assert_nothing_left(shm_before)


def test_a_dead_worker_is_named_when_the_learner_next_asks_it_for_a_rollout():
    def kill_and_wait(done: int, total: int) -> None:
        if done == 3:
            worker = _rollout_worker()
            os.kill(worker.pid, signal.SIGKILL)
            worker.join(5)  # certainly dead before the learner sends its next request

    with pytest.raises(WorkerFailed, match=r"rollout worker 0 .*SIGKILL"):
        train_overlapped(LONG, workers=1, eval_episodes=0, progress=kill_and_wait)
    assert not run_children()


class _Process:
    """Stands in for a worker process: its exit code, and a sentinel that never fires."""

    def __init__(self, exitcode: int | None, sentinel: int) -> None:
        self.exitcode, self.sentinel = exitcode, sentinel

    def join(self, timeout: float | None = None) -> None:
        pass


def test_a_worker_that_stopped_listening_is_reported_with_its_own_traceback():
    """Another worker's waiting report must not stand in for why this one stopped."""
    live, live_worker_end = multiprocessing.Pipe()
    dead, dead_worker_end = multiprocessing.Pipe()
    live_worker_end.send(("rollout", "worker 0's report, not yet read"))
    dead_worker_end.send(("error", "Traceback: worker 1's own failure"))
    dead_worker_end.close()  # it exited: the learner's request cannot reach it
    never_read, never_written = os.pipe()
    engine = ProcessEngine.__new__(ProcessEngine)  # the parts submit() uses, no processes
    engine.conns = [live, dead]
    engine.processes = [_Process(None, never_read), _Process(1, never_read)]
    engine.worker_pids, engine._starting = [100, 101], False
    try:
        with pytest.raises(WorkerFailed, match=r"(?s)worker 1 .*raised.*worker 1's own failure"):
            engine.submit(RolloutRequest(7, 1, 0, 0.0, 0.0, 0))
    finally:
        for conn in (live, live_worker_end, dead):
            conn.close()
        os.close(never_read)
        os.close(never_written)


def test_the_learner_does_not_wait_forever_for_a_stuck_worker():
    began = time.monotonic()
    with pytest.raises(WorkerFailed, match="no rollout arrived for 2 s"):
        train_overlapped(
            LONG, workers=1, eval_episodes=0, worker_hook=stuck_at_rollout_1, stall_timeout=2.0
        )
    assert time.monotonic() - began < 20  # 2 s stalled, then a grace period and a kill
    assert not run_children()


def test_keyboard_interrupt_in_the_learner_stops_every_worker():
    shm_before = shared_memory_files()

    def stop_button(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_overlapped(LONG, workers=2, eval_episodes=0, progress=stop_button)
    _assert_nothing_left(shm_before)


def test_sigint_as_a_notebooks_stop_button_sends_it_stops_every_worker():
    """SIGINT, what Jupyter's stop button sends the kernel, pressed until the run stops: a
    signal that lands while CPython runs a finalizer (multiprocessing's, torch's) is
    swallowed there ("Exception ignored in ..."), as a second press then stops it; presses
    while the workers are being stopped wait until they are (so none outlives the run)."""
    shm_before = shared_memory_files()
    started, stopped = threading.Event(), threading.Event()
    presses = []

    def press_until_stopped() -> None:
        started.wait(30)
        while not stopped.wait(0.3) and len(presses) < 5:
            presses.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

    # Python's own handler, as a notebook kernel has it: a test runner's worker process may
    # have inherited another (a background job's SIGINT is ignored).
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Thread(target=press_until_stopped, daemon=True)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            train_overlapped(LONG, workers=1, eval_episodes=0, progress=lambda d, t: started.set())
        assert presses and time.monotonic() - presses[0] < 10  # LONG would run far longer
    finally:
        stopped.set()
        timer.join()
        signal.signal(signal.SIGINT, handler)
    _assert_nothing_left(shm_before)


def test_a_script_without_a_main_guard_is_told_what_to_do(tmp_path):
    script = tmp_path / "no_guard.py"
    script.write_text(
        "from hetero_tutorial.rl.overlapped.loop import train_overlapped\n"
        "from hetero_tutorial.rl.ppo.config import PPOConfig\n"
        "train_overlapped(PPOConfig(total_steps=1024), workers=1, eval_episodes=0)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert 'if __name__ == "__main__":' in done.stderr and "while starting" in done.stderr


def test_ctrl_c_while_the_workers_are_stopped_waits_until_they_are():
    finished = []
    # The handler found (Python's default; ignored where a shell started the run in the
    # background) is the one put back.
    found = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt), interrupts_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.1)  # the handler has run: it held the interrupt back
        finished.append(True)
    assert finished == [True]
    assert signal.getsignal(signal.SIGINT) is found
