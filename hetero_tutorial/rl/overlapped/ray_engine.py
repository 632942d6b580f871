"""The Ray engine: an overlapped run's rollout workers as Ray actors, here or on a cluster.

Ray is for when one machine is not enough: its actors can live on any machine of a
cluster, and the learner's code does not change. Each actor holds a
:class:`~hetero_tutorial.rl.overlapped.worker.RolloutWorker` (the same rollout code as the
process engine's) and its own rollout storage; what Ray adds is only transport:

* **weights**: ``ray.put`` once per version (one flat array), passed by reference to
  every rollout request, so each version crosses to a machine once;
* **rollouts**: an actor's ``run`` returns its report and the rollout's arrays; the
  learner waits on the pending results with ``ray.wait`` and copies each one out. At
  most ``slots_per_worker`` requests are pending per actor: those are its slots.

Where Ray runs (``address``):

* ``None`` (default): if this process is already connected to a Ray, use it; otherwise
  start one on this machine with :func:`local_ray` and shut it down after the run. It
  listens on the loopback address only, so a laptop on a classroom network does not
  expose a cluster port. Everything of Ray's that listens (the GCS, the raylet's node
  and object managers, every worker process's gRPC server, the driver's included, the
  runtime-env and dashboard agents, the autoscaler's monitor) binds to the node's
  address, which :func:`start_local_ray` makes the loopback one; there is no dashboard;
  ``tests/test_overlapped_ray.py`` checks every listening socket of the run's processes;
* ``"auto"`` or ``"ray://host:port"``: join that cluster; only this run's actors are
  stopped afterwards, never the cluster. Start one with ``ray start --head`` on one
  machine and ``ray start --address=HEAD:6379`` on the others (notebook 06).
"""

from __future__ import annotations

import getpass
import logging
import os
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine import usable_cores
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

LOOPBACK = "127.0.0.1"
OBJECT_STORE_BYTES = 128 * 2**20
"""The local Ray's object store (shared memory): bounded, and ample for rollouts and weights."""
AUTH_MODE_VARIABLE = "RAY_AUTH_MODE"
"""Ray's switch for token authentication. Ray 2.60 turns it on for a new local Ray when it
is unset, and says so on stderr; the local Ray sets it to ``token`` itself (no warning, and
another user of a shared host cannot use its loopback ports without this user's token,
which Ray keeps in ``~/.ray/auth_token``, or reads from ``RAY_AUTH_TOKEN``)."""
_LOCAL_ONLY_VARIABLE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch for "this is a single-machine Ray": 0 makes it give its node the loopback
address, which every server it starts (GCS, raylet, workers, agents) then binds to."""


def import_ray() -> Any:
    """The ``ray`` module, or a clear error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(
            "backend='ray' needs Ray: `make setup` installs it, or "
            "`pip install -c constraints.txt -e '.[ray]'`"
        ) from None
    return ray


def user_temp_dir() -> Path:
    """The local Ray's temp folder, one per user: ``<tmp>/ray-<user>``.

    Ray's default, ``/tmp/ray``, belongs to whoever started Ray first on a machine; on a
    shared host (a classroom's JupyterHub) every other user's start then fails on its
    permissions. A folder per user id (the user name where there is no id) avoids that.
    """
    user = str(os.getuid()) if hasattr(os, "getuid") else getpass.getuser()
    return Path(tempfile.gettempdir()) / f"ray-{user}"


def _loopback_ip(address: str) -> bool:
    return address in ("localhost", "::1") or address.startswith("127.")


@contextmanager
def _single_machine() -> Iterator[None]:
    """While Ray starts, make it bind to the loopback address only (and restore the switch).

    Ray otherwise gives its node the machine's network address and binds to it (or to
    every interface). Its public ``_node_ip_address`` argument cannot say loopback: Ray
    turns a loopback address back into the network one. The switch is read at import
    time and at start-up, so it is set both in the environment (for Ray's processes)
    and in Ray's constants (for this one); the run checks the result (``local_ray``).
    Token authentication is asked for explicitly (:data:`AUTH_MODE_VARIABLE`), unless
    the environment already chooses.
    """
    from ray._private import ray_constants
    from ray._raylet import Config

    before_env = {name: os.environ.get(name) for name in (_LOCAL_ONLY_VARIABLE, AUTH_MODE_VARIABLE)}
    before = ray_constants.ENABLE_RAY_CLUSTER
    os.environ[_LOCAL_ONLY_VARIABLE] = "0"
    os.environ.setdefault(AUTH_MODE_VARIABLE, "token")  # a learner's own choice stands
    Config.initialize("")  # Ray's configuration re-reads the switch (as Ray does when it sets it)
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = before
        for name, value in before_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def start_local_ray(cpus: int | None = None, object_store_bytes: int = OBJECT_STORE_BYTES) -> float:
    """Start Ray on this machine, listening on the loopback address only; return its seconds.

    ``cpus``: the cores Ray may schedule on (default: the cores this process may use).
    No dashboard; a bounded object store; this user's own temp folder
    (:func:`user_temp_dir`). Stop it with ``ray.shutdown()``.
    """
    ray = import_ray()
    cpus = cpus if cpus is not None else usable_cores()
    began = time.perf_counter()
    try:
        with _single_machine():
            ray.init(
                num_cpus=cpus,
                include_dashboard=False,
                object_store_memory=object_store_bytes,
                _node_ip_address=LOOPBACK,
                _temp_dir=str(user_temp_dir()),
                logging_level=logging.WARNING,
            )
    except BaseException:  # Ctrl-C or a failure half-way: stop whatever of Ray had started
        ray.shutdown()
        raise
    node_ip = ray.util.get_node_ip_address()
    if not _loopback_ip(node_ip):
        ray.shutdown()
        raise UsageError(
            f"this Ray ({ray.__version__}) would listen on {node_ip}, not only on the loopback "
            "address; pin the version in constraints.txt, or start Ray yourself "
            "(`ray start --head --node-ip-address=127.0.0.1`) and pass address='auto'"
        )
    return time.perf_counter() - began


@contextmanager
def local_ray(cpus: int | None = None) -> Iterator[float]:
    """``with local_ray() as seconds:`` a loopback-only Ray for the block (runs inside reuse it)."""
    ray = import_ray()
    try:
        yield start_local_ray(cpus)
    finally:
        ray.shutdown()


class RolloutActor:
    """A Ray actor's body: a :class:`RolloutWorker` and the storage it fills."""

    def __init__(self, config: PPOConfig, seed: int, index: int, threads: int, hook: Hook | None):
        torch.set_num_threads(threads)
        self.worker = RolloutWorker(config, seed, index, hook)
        self.storage = self.worker.new_storage()

    def ready(self) -> tuple[int, str]:
        """(process id, Ray node id) of this actor."""
        import ray

        return os.getpid(), ray.get_runtime_context().get_node_id()

    def run(
        self, request: RolloutRequest, weights: np.ndarray
    ) -> tuple[RolloutReport, list[np.ndarray]]:
        """One rollout with the weights Ray delivered (the request's version); returns the
        report and the rollout."""

        def load(target: torch.Tensor, have: int, wanted: int) -> int:
            if have != wanted:
                np.copyto(target.numpy(), weights)
            return wanted

        report = self.worker.run(request, self.storage, load)
        return report, [tensor.numpy() for tensor in self.storage.tensors]  # Ray copies them


class RayEngine:
    """Rollout workers as Ray actors; the same interface as the process engine."""

    name = "ray"

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
        address: str | None = None,
        start_timeout: float = 180.0,
    ) -> None:
        began = time.perf_counter()
        self.ray = ray = import_ray()
        self.owns_ray = self.connected = False
        self.actors: list[Any] = []
        self.worker_pids: list[int] = []
        self.local_pids: list[int] = []
        """the actors' process ids on this machine (close() waits for them to exit)"""
        self.pending: dict[Any, RolloutRequest] = {}
        self.arrays: dict[int, list[np.ndarray]] = {}
        self.weights_ref: Any = None
        self.version = -1
        try:
            if not ray.is_initialized():
                if address is None:
                    self.owns_ray = True  # first: close() then stops a Ray that half-started
                    start_local_ray(max(workers, usable_cores()))
                else:
                    import hetero_tutorial

                    # The package travels to the cluster's machines with the job.
                    runtime_env = {"py_modules": [hetero_tutorial]}
                    ray.init(
                        address=address, runtime_env=runtime_env, logging_level=logging.WARNING
                    )
                    self.connected = True
            actor = ray.remote(num_cpus=1, max_restarts=0)(RolloutActor)
            self.actors = [actor.remote(config, seed, i, threads, hook) for i in range(workers)]
            pids = [a.ready.remote() for a in self.actors]
            here = ray.get_runtime_context().get_node_id()
            for index, ref in enumerate(pids):
                pid, node = self._get(ref, index, start_timeout)
                self.worker_pids.append(pid)
                if node == here:
                    self.local_pids.append(pid)
        except BaseException:
            self.close()
            raise
        self.startup_seconds = time.perf_counter() - began
        """seconds to start Ray (where this run started it) and every actor"""

    def _get(self, ref: Any, index: int, timeout: float | None = None) -> Any:
        """``ray.get``, with a worker's failure or death turned into :class:`WorkerFailed`."""
        errors = self.ray.exceptions
        try:
            return self.ray.get(ref, timeout=timeout)
        except errors.RayActorError as error:
            raise WorkerFailed(
                f"rollout worker {index} (a Ray actor) died; the run is stopped and its other "
                f"workers with it. Ray says: {error}"
            ) from None
        except errors.RayTaskError as error:
            raise WorkerFailed(
                f"rollout worker {index} (a Ray actor) raised an error; its traceback:\n\n{error}"
            ) from None
        except errors.GetTimeoutError:
            raise WorkerFailed(
                f"rollout worker {index} (a Ray actor) did not start within {timeout:.0f} s; "
                "does the cluster have a free CPU for every worker?"
            ) from None

    def publish(self, weights: torch.Tensor, version: int) -> None:
        self.weights_ref = self.ray.put(weights.detach().cpu().numpy())  # one copy per version
        self.version = version

    def submit(self, request: RolloutRequest) -> None:
        if request.version != self.version:
            raise RuntimeError(f"asked for weights {request.version}; the newest is {self.version}")
        actor = self.actors[request.worker]
        self.pending[actor.run.remote(request, self.weights_ref)] = request

    def next_report(self, timeout: float) -> RolloutReport | None:
        """The next filled rollout's report, or None if none came within ``timeout`` seconds."""
        ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=timeout)
        if not ready:
            return None
        request = self.pending.pop(ready[0])
        report, arrays = self._get(ready[0], request.worker)
        self.arrays[report.index] = arrays
        return report

    def discard(self, report: RolloutReport) -> None:
        """Forget a dropped rollout, so Ray can free it."""
        self.arrays.pop(report.index, None)

    def read(self, report: RolloutReport, into: RolloutStorage) -> None:
        """Copy the rollout Ray delivered into the learner's storage (on any device), then
        let Ray free it."""
        with warnings.catch_warnings():  # Ray's arrays are read-only; they are only read here
            warnings.filterwarnings("ignore", "The given NumPy array is not writable")
            for target, source in zip(into.tensors, self.arrays.pop(report.index), strict=True):
                target.copy_(torch.from_numpy(source))

    def close(self) -> None:
        """Stop this run's actors; shut Ray down only if this run started it (a Ctrl-C
        meanwhile is raised once they are stopped)."""
        with interrupts_deferred():
            self._stop_actors()

    def _stop_actors(self) -> None:
        ray = self.ray
        for actor in self.actors:
            with suppress(Exception):  # already gone
                ray.kill(actor, no_restart=True)
        # ray.kill only asks; wait until this machine's actors have exited, so that none
        # outlives the run (nor uses CPU in the next one's measurements).
        processes = []
        for pid in self.local_pids:
            with suppress(psutil.Error):
                processes.append(psutil.Process(pid))
        psutil.wait_procs(processes, timeout=10)
        self.actors, self.pending, self.arrays, self.local_pids = [], {}, {}, []
        if self.owns_ray or self.connected:
            ray.shutdown()  # started here: stops it; joined: only disconnects
            self.owns_ray = self.connected = False
