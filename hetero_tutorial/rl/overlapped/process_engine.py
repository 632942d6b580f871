"""The process engine: an overlapped run's rollout workers as processes, rollouts in shared memory.

What travels, and how:

* **rollouts**: each worker owns ``slots_per_worker`` preallocated rollout slots, each a
  :class:`~hetero_tutorial.rl.ppo.storage.RolloutStorage` whose tensors live in shared memory.
  The worker fills one while the learner copies another out; a rollout never goes
  through a pipe, only its small :class:`~hetero_tutorial.rl.overlapped.worker.RolloutReport`;
* **weights**: one flat tensor per version in shared memory, the last few versions kept
  (:class:`SharedWeights`), written by the learner after each update and read by a
  worker before each rollout (the version its request names), under one lock so a read
  never sees half an update;
* **requests and reports**: one pipe per worker. The learner waits on every pipe and on
  every worker's process sentinel at once, so a report and a death both wake it at
  once: a worker that is killed is noticed within the wait's timeout, never waited on.

Processes start with ``spawn`` (``forkserver`` works too), never ``fork``: forking a
process that runs threads (PyTorch's, a notebook's) can copy a lock that is held and
deadlock the child. Each worker runs one PyTorch thread unless told otherwise, and
ignores Ctrl-C: the learner decides when workers stop, and :meth:`ProcessEngine.close`
stops them all, politely first, then by signal.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
import traceback
from contextlib import suppress
from multiprocessing.connection import Connection, wait

import torch
import torch.multiprocessing as torch_mp

from hetero_tutorial.rl.envs.spec import EnvSpec
from hetero_tutorial.rl.overlapped.interrupts import interrupts_deferred
from hetero_tutorial.rl.overlapped.worker import (
    Hook,
    RolloutReport,
    RolloutRequest,
    RolloutWorker,
    WorkerFailed,
)
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.storage import RolloutStorage

STARTING_HINT = (
    "Its own error, if any, is printed above. A script that "
    'starts an overlapped run must do so under `if __name__ == "__main__":`: each worker '
    "process imports the script again (the spawn start method), and would start workers "
    "of its own."
)
GRACE_SECONDS = 2.0
"""How long a worker has to stop when asked, before it is terminated (then killed)."""


class SharedWeights:
    """The learner's last few weight versions in shared memory, each one flat float32 tensor.

    Version ``v`` lives in row ``v % len(data)`` beside its number, so a worker reads the
    version its request names even when the learner has published newer ones since:
    which weights act is then decided by the learner's schedule, not by how fast a
    process happened to wake up, and runs repeat exactly from a seed. A version already
    overwritten (a request that waited very long) falls back to the newest.
    """

    def __init__(self, size: int, versions: int, lock: object) -> None:
        self.data = torch.zeros(versions, size).share_memory_()
        self.versions = torch.full((versions,), -1, dtype=torch.int64).share_memory_()
        self.newest = torch.full((1,), -1, dtype=torch.int64).share_memory_()
        self.lock = lock

    def publish(self, weights: torch.Tensor, version: int) -> None:
        """Write ``weights`` (any device) as ``version``: one copy, under the lock."""
        staged = weights.detach().to("cpu")  # off the accelerator before taking the lock
        row = version % len(self.data)
        with self.lock:
            self.data[row].copy_(staged)
            self.versions[row] = version
            self.newest[0] = version

    def load(self, target: torch.Tensor, have: int, wanted: int) -> int:
        """Copy version ``wanted`` (or, if overwritten, the newest) into ``target``."""
        with self.lock:
            version = wanted if int(self.versions[wanted % len(self.data)]) == wanted else -1
            version = version if version >= 0 else int(self.newest[0])
            if version != have:
                target.copy_(self.data[version % len(self.data)])
        return version


def shared_storage(config: PPOConfig, spec: EnvSpec) -> RolloutStorage:
    """One rollout slot: a RolloutStorage whose tensors (and so its views) are in shared memory."""
    slot = RolloutStorage(config.num_steps, config.num_envs, spec, torch.device("cpu"), False)
    for tensor in slot.tensors:
        tensor.share_memory_()  # in place: the named views keep pointing into it
    return slot


def serve_rollouts(
    conn: Connection,
    slots: list[RolloutStorage],
    weights: SharedWeights,
    config: PPOConfig,
    seed: int,
    index: int,
    threads: int,
    hook: Hook | None,
) -> None:
    """A worker process's life: build the worker, then fill slots on request until told to stop.

    Any exception is sent to the learner with its traceback before the process exits.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the learner's to handle
    parent = multiprocessing.parent_process()
    try:
        torch.set_num_threads(threads)  # inside: a failure here reaches the learner too
        worker = RolloutWorker(config, seed, index, hook)
        conn.send(("ready", os.getpid()))
        while True:
            if not conn.poll(0.5):
                if parent is not None and not parent.is_alive():
                    return  # the learner is gone: nobody to report to
                continue
            request = conn.recv()
            if request is None:  # the learner's "stop"
                worker.close()
                return
            report = worker.run(request, slots[request.slot], weights.load)
            conn.send(("rollout", report))
    except (EOFError, BrokenPipeError):
        return  # the learner closed its end
    except BaseException:
        with suppress(OSError):  # the learner may be gone too
            conn.send(("error", traceback.format_exc()))


def _death(process: multiprocessing.Process) -> str:
    code = process.exitcode
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        hint = " (SIGKILL: killed from outside, or by the kernel for lack of memory)"
        return f"was killed by signal {name}{hint if name == 'SIGKILL' else ''}"
    return f"exited with code {code} without reporting an error"


class ProcessEngine:
    """Rollout workers as local processes; the learner talks to them through this object."""

    name = "mp"

    def __init__(
        self,
        config: PPOConfig,
        spec: EnvSpec,
        seed: int,
        workers: int,
        slots_per_worker: int,
        weights_size: int,
        *,
        threads: int = 1,
        hook: Hook | None = None,
        start_method: str = "spawn",
        start_timeout: float = 120.0,
    ) -> None:
        began = time.perf_counter()
        ctx = torch_mp.get_context(start_method)
        # Enough versions that one worker's queued requests always find theirs.
        self.weights = SharedWeights(weights_size, slots_per_worker + 2, ctx.Lock())
        self.slots = [
            [shared_storage(config, spec) for _ in range(slots_per_worker)] for _ in range(workers)
        ]
        self.conns: list[Connection] = []
        self.processes: list[multiprocessing.Process] = []
        self.worker_pids: list[int] = []
        self._starting = True
        try:
            for index in range(workers):
                mine, theirs = ctx.Pipe()
                args = (theirs, self.slots[index], self.weights, config, seed, index, threads, hook)
                process = ctx.Process(
                    target=serve_rollouts, args=args, name=f"rollout-worker-{index}", daemon=True
                )
                process.start()
                theirs.close()  # the worker holds its end; closing ours lets EOF reach us
                self.conns.append(mine)
                self.processes.append(process)
            self.worker_pids = [process.pid for process in self.processes]
            ready = 0
            deadline = time.monotonic() + start_timeout
            while ready < workers:
                try:
                    message = self._receive(deadline - time.monotonic())
                except WorkerFailed as failure:
                    raise WorkerFailed(f"{failure} {STARTING_HINT}") from None
                if message is None:
                    raise WorkerFailed(
                        f"the rollout workers did not start within {start_timeout:.0f} s; "
                        "is the machine overloaded? Try fewer workers."
                    )
                ready += 1
        except BaseException:
            self.close()
            raise
        self._starting = False
        self.startup_seconds = time.perf_counter() - began
        """seconds from creating the slots to every worker being ready"""

    def publish(self, weights: torch.Tensor, version: int) -> None:
        self.weights.publish(weights, version)

    def submit(self, request: RolloutRequest) -> None:
        try:
            self.conns[request.worker].send(request)
        except OSError:  # its end is closed: the worker died; say how
            raise self._why_stopped(request.worker) from None

    def _why_stopped(self, index: int) -> WorkerFailed:
        """Why worker ``index`` stopped listening: the traceback it sent, else how it died.

        Waits on that worker's own pipe and process only (``GRACE_SECONDS`` at most):
        another worker's report must not stand in for this one's death.
        """
        conn, process = self.conns[index], self.processes[index]
        deadline = time.monotonic() + GRACE_SECONDS
        with suppress(EOFError, OSError):  # read what it sent before its end closed
            while conn.poll(max(deadline - time.monotonic(), 0.0)):
                kind, payload = conn.recv()
                if kind == "error":
                    return self._raised(index, payload)
        process.join(max(deadline - time.monotonic(), 0.0))
        if process.exitcode is not None:
            return self._died(index, process)
        return WorkerFailed(f"rollout worker {index} stopped listening")

    def _raised(self, index: int, traceback_text: str) -> WorkerFailed:
        return WorkerFailed(
            f"rollout worker {index} (pid {self.worker_pids[index]}) raised an error; "
            f"its traceback:\n\n{traceback_text}"
        )

    def _died(self, index: int, process: multiprocessing.Process) -> WorkerFailed:
        when = "while starting" if self._starting else "mid-run"
        return WorkerFailed(
            f"rollout worker {index} (pid {self.worker_pids[index]}) {_death(process)} "
            f"{when}; the run is stopped and its other workers with it."
        )

    def next_report(self, timeout: float) -> RolloutReport | None:
        """The next filled rollout's report, or None if none came within ``timeout`` seconds.

        Raises :class:`WorkerFailed` if a worker reported an error or died.
        """
        return self._receive(timeout)

    def _receive(self, timeout: float) -> RolloutReport | str | None:
        """Wait for any worker's next message: a report, "ready", an error or a death."""
        sentinels = {process.sentinel: i for i, process in enumerate(self.processes)}
        ready = wait([*self.conns, *sentinels], max(timeout, 0.0))
        for conn in ready:  # messages first: a worker that failed sent why before it exited
            if conn in sentinels:
                continue
            index = self.conns.index(conn)
            try:
                kind, payload = conn.recv()
            except (EOFError, OSError):  # closed, or reset by a killed peer
                process = self.processes[index]
                process.join(1.0)  # it is ending; the check below says how
                break
            if kind == "error":
                raise self._raised(index, payload)
            return payload if kind == "rollout" else kind
        for index, process in enumerate(self.processes):
            if process.exitcode is not None or (process.sentinel in ready):
                process.join(1.0)
                raise self._died(index, process)
        return None

    def discard(self, report: RolloutReport) -> None:
        """Forget a dropped rollout (its slot is simply refilled)."""

    def read(self, report: RolloutReport, into: RolloutStorage) -> None:
        """Copy the rollout out of its slot into the learner's storage: one copy per tensor."""
        for target, source in zip(
            into.tensors, self.slots[report.worker][report.slot].tensors, strict=True
        ):
            target.copy_(source)

    def close(self) -> None:
        """Stop every worker: ask, wait ``GRACE_SECONDS``, terminate, kill; always join (a
        Ctrl-C meanwhile is raised once they are stopped)."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        with interrupts_deferred():
            self._stop_workers()

    def _stop_workers(self) -> None:
        for conn in self.conns:
            with suppress(OSError, ValueError):  # that worker is gone already
                conn.send(None)
        deadline = time.monotonic() + GRACE_SECONDS
        for process in self.processes:
            process.join(max(deadline - time.monotonic(), 0.0))
        for stop in ("terminate", "kill"):
            alive = [process for process in self.processes if process.is_alive()]
            for process in alive:
                getattr(process, stop)()
            for process in alive:
                process.join(1.0)
        for conn in self.conns:
            conn.close()
        for process in self.processes:
            if process.exitcode is not None:
                process.close()  # frees its sentinel; a process that would not die stays listed
        # Dropping the last references frees the shared memory and unlinks the lock's named
        # semaphore now, even while a traceback still holds this engine.
        self.conns, self.slots, self.weights = [], [], None
