"""torch.profiler: PyTorch's own operators, and on a GPU the copies and kernels on its timeline.

:func:`torch_profile` runs a few PPO iterations under ``torch.profiler`` and gives
the key-averages table and a Chrome trace.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch.profiler import ProfilerActivity, profile

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import torch_threads
from hetero_tutorial.profiling import stacks
from hetero_tutorial.profiling.pyspy import PROFILE_DIR
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.trainer import PHASES, PPOTrainer


@dataclass(frozen=True)
class TorchProfile:
    """torch.profiler's summary of a few training iterations, and its Chrome trace."""

    rows: list[dict[str, Any]]
    """one per event name: calls, CPU and device seconds, total and self"""
    trace_path: Path
    activities: tuple[str, ...]
    iterations: int

    def top(self, n: int = 12) -> list[dict[str, Any]]:
        """The operations with the most self time (device time when a device was profiled).

        The phase ranges are left out: they are spans of operations, not operations.
        """
        key = "self_device_s" if len(self.activities) > 1 else "self_cpu_s"
        operations = [row for row in self.rows if not row["annotation"]]
        return sorted(operations, key=lambda row: row[key], reverse=True)[:n]

    def phases(self) -> list[dict[str, Any]]:
        """The CPU-side rows of the ``record_function`` ranges that name the training phases.

        With a GPU profiled, each range also appears as a GPU-side annotation row;
        the CPU side is the one whose time the phase took.
        """
        return [row for row in self.rows if row["name"] in PHASES and row["device"] == "cpu"]

    def transfers(self) -> list[dict[str, Any]]:
        """The rows that match a transfer pattern: on a GPU, ``Memcpy HtoD``/``DtoH`` (never
        ``DtoD``, which stays on the device), waits, and pinning (``cudaHostAlloc``)."""
        return [row for row in self.rows if stacks.match(row["name"], "torch_event")]


@contextmanager
def native_stderr_silenced() -> Iterator[None]:
    """Send what C++ code writes to the process's stderr (file descriptor 2) to nowhere, for
    the block: PyTorch's profiler logs a line at every start and stop there, below Python's
    ``sys.stderr``, and a notebook would show it as an error stream."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _activities(placement: Placement) -> list[ProfilerActivity]:
    """CPU, plus the device's activity where torch.profiler can record one (CUDA, XPU)."""
    activities = [ProfilerActivity.CPU]
    types = {device.type for device in placement.devices}
    if "cuda" in types:
        activities.append(ProfilerActivity.CUDA)
    if "xpu" in types:
        activities.append(ProfilerActivity.XPU)
    return activities


def _event_row(event: Any) -> dict[str, Any]:
    return {
        "name": event.key,
        "calls": event.count,
        "cpu_s": event.cpu_time_total * 1e-6,
        "self_cpu_s": event.self_cpu_time_total * 1e-6,
        "device_s": event.device_time_total * 1e-6,
        "self_device_s": event.self_device_time_total * 1e-6,
        "device": event.device_type.name.lower(),  # "cpu", or "cuda" for a GPU-side event
        "annotation": bool(event.is_user_annotation),  # a record_function range, not an op
    }


@guarded("the torch.profiler run")
def torch_profile(
    config: PPOConfig,
    placement: Placement,
    *,
    iterations: int = 1,
    warmup: int = 1,
    seed: int = 0,
    threads: int | None = 1,
    name: str = "ppo",
    out_dir: Path = PROFILE_DIR,
) -> TorchProfile:
    """Run ``warmup`` then ``iterations`` PPO iterations, the latter under torch.profiler.

    The phases appear as ``record_function`` ranges named after them. Writes
    ``<name>.trace.json`` (open it at https://ui.perfetto.dev or chrome://tracing).
    Turning the events into a table costs seconds per iteration on a small CPU,
    so profile one or a few iterations.
    """
    if iterations < 1:
        raise UsageError(f"profile at least one iteration, got {iterations}")
    activities = _activities(placement)
    with torch_threads(threads):
        trainer = PPOTrainer(config, placement, seed)
        for _ in range(warmup):
            trainer.run_iteration()
        profiler = profile(activities=activities)
        with native_stderr_silenced():  # Kineto's "USDT: ... profiler_start" log line
            profiler.start()
        try:
            for _ in range(iterations):
                trainer.run_iteration()
        finally:
            with native_stderr_silenced():
                profiler.stop()
        trainer.envs.close()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    trace = out_dir / f"{name}.trace.json"
    profiler.export_chrome_trace(str(trace))
    rows = [_event_row(event) for event in profiler.key_averages()]
    names = tuple(activity.name for activity in activities)
    return TorchProfile(rows, trace, names, iterations)
