"""CPU and GPU utilisation measured while runs go on (claim C6 quotes both).

CPU: the process's CPU time during a section divided by its wall time, as a
percentage of one core (so up to 100 x cores), from ``psutil``.
GPU: NVML's "percent of time a kernel was running", sampled every
``interval`` seconds on a background thread through ``torch.cuda.utilization``
(which maps PyTorch's device index through ``CUDA_VISIBLE_DEVICES`` to NVML's),
where NVML is available (NVIDIA GPUs with ``nvidia-ml-py``); None elsewhere.

Sections let runs that are interleaved (A, B, A, B, ...) each get their own
figures: ``with sampler.section("hybrid"): ...``. NVML's figure covers its own
last sample period (1/6 s to 1 s, by product), so a reading taken early in a
section partly describes the section before: with turns of about a second or
less, interleaved sections' GPU figures blur toward each other. The summary
gives the mean turn length so a reader can judge.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

import psutil
import torch


def _gpu_reader(device: torch.device | None) -> Callable[[], float] | None:
    """A function reading the GPU's utilisation percent now, or None where it cannot be read."""
    if device is None or device.type != "cuda":
        return None
    try:
        torch.cuda.utilization(device)
    except Exception:  # NVML missing, not permitted or not supported (e.g. MIG): not measured
        return None
    return lambda: float(torch.cuda.utilization(device))


class UtilisationSampler:
    """Use: ``with UtilisationSampler(gpu) as s``, ``with s.section(name)``, ``s.summary(name)``."""

    def __init__(self, gpu: torch.device | None = None, interval: float = 0.05) -> None:
        self.interval = interval
        self._process = psutil.Process()
        self._cores = psutil.cpu_count(logical=True) or 1
        self._read_gpu = _gpu_reader(gpu)
        self.gpu_error: str | None = None
        """why GPU sampling stopped early, if it did"""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample_gpu, daemon=True)
        self._label: str | None = None
        self.wall_seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)
        self.turns: dict[str, int] = defaultdict(int)
        self.gpu_percent: dict[str, list[float]] = defaultdict(list)

    def _sample_gpu(self) -> None:
        while not self._stop.wait(self.interval):
            label = self._label
            if label is None:
                continue
            try:
                self.gpu_percent[label].append(self._read_gpu())
            except Exception as error:  # e.g. the driver stops answering: keep what was sampled
                self.gpu_error = f"GPU sampling stopped: {error}"
                return

    def _cpu_time(self) -> float:
        times = self._process.cpu_times()
        return times.user + times.system

    @contextmanager
    def section(self, label: str) -> Iterator[None]:
        """Attribute the block's CPU time, wall time and GPU samples to ``label``."""
        cpu, wall = self._cpu_time(), time.perf_counter()
        self._label = label
        try:
            yield
        finally:
            self._label = None
            self.wall_seconds[label] += time.perf_counter() - wall
            self.turns[label] += 1
            self.cpu_seconds[label] += self._cpu_time() - cpu

    def __enter__(self) -> UtilisationSampler:
        if self._read_gpu is not None:
            self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def summary(self, label: str) -> dict[str, Any]:
        """Mean utilisations of one section's blocks (GPU None where NVML is not available)."""
        wall = self.wall_seconds[label]
        process_percent = 100 * self.cpu_seconds[label] / wall if wall else 0.0
        gpu = self.gpu_percent[label]
        return {
            "process_cpu_percent": process_percent,
            "machine_cpu_share": process_percent / (100 * self._cores),
            "cpu_cores": self._cores,
            "gpu_percent": sum(gpu) / len(gpu) if gpu else None,
            "gpu_samples": len(gpu),
            "gpu_error": self.gpu_error,
            "mean_turn_seconds": wall / self.turns[label] if self.turns[label] else None,
        }
