"""CPU and GPU utilisation measured while runs go on (claim C6 quotes both).

CPU: the process's CPU time during a section divided by its wall time, as a
percentage of one core (so up to 100 x cores), from ``psutil``.
GPU: NVML's "percent of time a kernel was running", on NVIDIA GPUs with
``nvidia-ml-py``; None elsewhere. Two ways to read it, and the summary says which:

* ``"nvml samples"`` (preferred): ``nvmlDeviceGetSamples`` returns the utilisation
  samples the driver took itself, each with its own timestamp (microseconds of the
  wall clock). A background thread collects them, and each sample goes to the
  section whose wall-clock interval contains its timestamp.
* ``"nvml poll"`` (the fallback where sampling is not supported, e.g. under MIG):
  ``torch.cuda.utilization`` read every ``interval`` seconds. Each reading is
  NVML's average over its own last sample period (1/6 s to 1 s, by product), so a
  reading taken early in a section partly describes the section before: with
  turns of about a second or less, interleaved sections' GPU figures blur toward
  each other. The summary gives the mean turn length so a reader can judge.

Both map PyTorch's CUDA index through ``CUDA_VISIBLE_DEVICES`` to NVML's, as
``torch.cuda.utilization`` does. Sections let runs that are interleaved (A, B, A,
B, ...) each get their own figures: ``with sampler.section("hybrid"): ...``.
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

SAMPLES_READ_INTERVAL = 0.5
"""Seconds between reads of NVML's sample buffer (it holds the last several seconds)."""
_NVML_VALUE_FIELDS = ("dVal", "uiVal", "ulVal", "ullVal", "sllVal", "siVal", "usVal")
"""The field of an ``nvmlValue_t`` union to read, by NVML's value type 0..6."""


def _gpu_reader(device: torch.device | None) -> Callable[[], float] | None:
    """A function reading the GPU's utilisation percent now, or None where it cannot be read."""
    if device is None or device.type != "cuda":
        return None
    try:
        torch.cuda.utilization(device)
    except Exception:  # NVML missing, not permitted or not supported (e.g. MIG): not measured
        return None
    return lambda: float(torch.cuda.utilization(device))


class NvmlSamples:
    """The GPU utilisation samples NVML timestamped itself, read as they accumulate."""

    def __init__(self, device: torch.device) -> None:
        import pynvml  # nvidia-ml-py, as torch.cuda.utilization uses it

        self._nvml = pynvml
        pynvml.nvmlInit()
        index = torch.cuda._get_nvml_device_index(device)  # through CUDA_VISIBLE_DEVICES
        self._handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        self.last_timestamp = 0
        """NVML's timestamp (microseconds) of the newest sample read so far"""
        self._backlog: list[tuple[float, float]] = []
        # raises where this GPU cannot give samples (the caller falls back); the next read
        # hands these over too (sections drop those older than themselves)
        self._backlog = self.read()

    def read(self) -> list[tuple[float, float]]:
        """The samples taken since the last read: ``(wall-clock seconds, percent)`` each."""
        nvml = self._nvml
        try:
            value_type, samples = nvml.nvmlDeviceGetSamples(
                self._handle, nvml.NVML_GPU_UTILIZATION_SAMPLES, self.last_timestamp
            )
        except nvml.NVMLError as error:
            if getattr(error, "value", None) != nvml.NVML_ERROR_NOT_FOUND:
                raise
            samples = []  # NOT_FOUND: no sample newer than the last one read
            value_type = 0
        field = _NVML_VALUE_FIELDS[value_type]
        fresh = [s for s in samples if s.timeStamp > self.last_timestamp]
        if fresh:
            self.last_timestamp = max(s.timeStamp for s in fresh)
        backlog, self._backlog = self._backlog, []
        return backlog + [(s.timeStamp / 1e6, float(getattr(s.sampleValue, field))) for s in fresh]


def _nvml_samples(device: torch.device | None) -> NvmlSamples | None:
    """NVML's timestamped samples for ``device``, or None where they cannot be read."""
    if device is None or device.type != "cuda":
        return None
    try:
        return NvmlSamples(device)
    except Exception:  # no nvidia-ml-py, no driver, or sampling not supported: fall back
        return None


class UtilisationSampler:
    """Use: ``with UtilisationSampler(gpu) as s``, ``with s.section(name)``, ``s.summary(name)``.

    ``wall_clock`` (seconds since the epoch, the clock of NVML's timestamps) is
    injectable so that tests can place sections and samples in time.
    """

    def __init__(
        self,
        gpu: torch.device | None = None,
        interval: float = 0.05,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.interval = interval
        self._wall_clock = wall_clock
        self._process = psutil.Process()
        self._cores = psutil.cpu_count(logical=True) or 1
        self._samples = _nvml_samples(gpu)
        self._read_gpu = _gpu_reader(gpu) if self._samples is None else None
        self.gpu_error: str | None = None
        """why GPU sampling stopped early, if it did"""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample_gpu, daemon=True)
        self._label: str | None = None
        self.wall_seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)
        self.turns: dict[str, int] = defaultdict(int)
        self.gpu_percent: dict[str, list[float]] = defaultdict(list)
        """polled readings per section (the fallback method)"""
        self.intervals: dict[str, list[tuple[float, float]]] = defaultdict(list)
        """wall-clock (start, end) of each of a section's blocks"""
        self.timestamped: list[tuple[float, float]] = []
        """NVML's own samples: (wall-clock seconds, percent)"""

    @property
    def gpu_method(self) -> str | None:
        """How GPU utilisation is read here: "nvml samples", "nvml poll", or None."""
        if self._samples is not None:
            return "nvml samples"
        return "nvml poll" if self._read_gpu is not None else None

    def _collect(self) -> None:
        self.timestamped.extend(self._samples.read())

    def _sample_gpu(self) -> None:
        wait = SAMPLES_READ_INTERVAL if self._samples is not None else self.interval
        while not self._stop.wait(wait):
            try:
                if self._samples is not None:
                    self._collect()
                elif (label := self._label) is not None:
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
        cpu, wall, start = self._cpu_time(), time.perf_counter(), self._wall_clock()
        self._label = label
        try:
            yield
        finally:
            self._label = None
            self.intervals[label].append((start, self._wall_clock()))
            self.wall_seconds[label] += time.perf_counter() - wall
            self.turns[label] += 1
            self.cpu_seconds[label] += self._cpu_time() - cpu

    def __enter__(self) -> UtilisationSampler:
        if self.gpu_method is not None:
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
        if self._samples is not None and self.gpu_error is None:
            try:
                self._collect()  # the samples of the last half second
            except Exception as error:
                self.gpu_error = f"GPU sampling stopped: {error}"

    def _gpu_values(self, label: str) -> list[float]:
        if self._samples is None:
            return self.gpu_percent[label]
        spans = self.intervals[label]
        return [p for t, p in self.timestamped if any(a <= t < b for a, b in spans)]

    def summary(self, label: str) -> dict[str, Any]:
        """Mean utilisations of one section's blocks (GPU None where NVML is not available)."""
        wall = self.wall_seconds[label]
        process_percent = 100 * self.cpu_seconds[label] / wall if wall else 0.0
        gpu, error = self._gpu_values(label), self.gpu_error
        if self.timestamped and not any(map(self._gpu_values, list(self.intervals))):
            error = error or "no NVML sample's timestamp fell inside a section: another clock?"
        return {
            "process_cpu_percent": process_percent,
            "machine_cpu_share": process_percent / (100 * self._cores),
            "cpu_cores": self._cores,
            "gpu_percent": sum(gpu) / len(gpu) if gpu else None,
            "gpu_samples": len(gpu),
            "gpu_method": self.gpu_method,
            "gpu_error": error,
            "mean_turn_seconds": wall / self.turns[label] if self.turns[label] else None,
        }
