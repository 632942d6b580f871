"""What moves rollouts and weights between the learner and its workers: the :class:`Engine`.

An overlapped run's learner loop (:mod:`~hetero_tutorial.rl.overlapped.loop`) talks to its
rollout workers through one interface, whichever engine carries the traffic:

* ``"mp"``: :class:`~hetero_tutorial.rl.overlapped.process_engine.ProcessEngine`, worker
  processes on this machine, rollouts and weights in shared memory;
* ``"ray"``: :class:`~hetero_tutorial.rl.overlapped.ray_engine.RayEngine`, the same workers
  as Ray actors, on this machine or on a cluster.

Both run the same :class:`~hetero_tutorial.rl.overlapped.worker.RolloutWorker`; an engine
only moves requests, reports, rollouts and weights.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.rl.overlapped.worker import RolloutReport, RolloutRequest
from hetero_tutorial.rl.ppo.storage import RolloutStorage

BACKENDS = ("mp", "ray")
"""The engines, by the name ``train_overlapped(backend=...)`` takes."""
START_METHODS = ("spawn", "forkserver")
"""How worker processes may start: never ``fork`` (see process_engine.py)."""


class Engine(Protocol):
    """The learner's side of the traffic with its rollout workers."""

    name: str
    """the backend's name, one of :data:`BACKENDS`"""
    startup_seconds: float
    """seconds to start the workers (and Ray, where the engine started it)"""
    worker_pids: list[int]

    def publish(self, weights: torch.Tensor, version: int) -> None:
        """Make ``weights`` (any device) available to the workers as ``version``."""
        ...

    def submit(self, request: RolloutRequest) -> None:
        """Send a rollout request to the worker it names."""
        ...

    def next_report(self, timeout: float) -> RolloutReport | None:
        """The next filled rollout's report, or None if none came within ``timeout`` seconds;
        raises :class:`~hetero_tutorial.rl.overlapped.worker.WorkerFailed` if a worker failed."""
        ...

    def read(self, report: RolloutReport, into: RolloutStorage) -> None:
        """Copy the reported rollout into the learner's storage (which frees its slot)."""
        ...

    def discard(self, report: RolloutReport) -> None:
        """Forget a rollout the schedule dropped."""
        ...

    def close(self) -> None:
        """Stop every worker, however the run ended."""
        ...


def make_engine(backend: str, address: str | None, **options: Any) -> Engine:
    """The engine of ``backend``, started (``options``: those of its constructor)."""
    if backend == "mp":
        if address is not None:
            raise UsageError("address= joins a Ray cluster; use it with backend='ray'")
        from hetero_tutorial.rl.overlapped.process_engine import ProcessEngine

        return ProcessEngine(**options)
    from hetero_tutorial.rl.overlapped.ray_engine import RayEngine

    options.pop("start_method")
    return RayEngine(address=address, **options)
