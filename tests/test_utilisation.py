import sys
import time
from types import SimpleNamespace

import torch

from hetero_tutorial.core.utilisation import UtilisationSampler


def test_cpu_use_is_attributed_to_each_section_and_gpu_is_none_without_one():
    with UtilisationSampler(torch.device("cpu")) as sampler:
        for _ in range(2):
            with sampler.section("busy"):
                end = time.perf_counter() + 0.05
                while time.perf_counter() < end:
                    pass
            with sampler.section("idle"):
                time.sleep(0.05)
    busy, idle = sampler.summary("busy"), sampler.summary("idle")
    assert busy["process_cpu_percent"] > 20 > idle["process_cpu_percent"]
    assert busy["gpu_percent"] is None and busy["gpu_samples"] == 0
    assert 0.04 < busy["mean_turn_seconds"] < 0.5


def test_gpu_readings_go_to_the_running_section_and_a_failing_reader_stops_cleanly():
    readings = iter([40.0, 60.0])

    def read_gpu() -> float:
        value = next(readings, None)
        if value is None:
            raise RuntimeError("NVML gone")
        return value

    sampler = UtilisationSampler(interval=0.01)
    sampler._read_gpu = read_gpu  # stands in for NVML on a machine without a GPU
    with sampler, sampler.section("hybrid"):
        time.sleep(0.3)
    summary = sampler.summary("hybrid")
    assert summary["gpu_samples"] == 2 and summary["gpu_percent"] == 50.0
    assert summary["gpu_error"] == "GPU sampling stopped: NVML gone"


class FakeNvml:
    """nvidia-ml-py's calls the sampler makes, answering with prepared timestamped samples."""

    NVML_GPU_UTILIZATION_SAMPLES = 1
    NVML_ERROR_NOT_FOUND = 6
    NVML_ERROR_NOT_SUPPORTED = 3

    class NVMLError(Exception):
        def __init__(self, value):
            super().__init__(f"NVML error {value}")
            self.value = value

    def __init__(self, samples, supported=True):
        self.samples = samples  # (seconds since the epoch, percent)
        self.supported = supported
        self.handles, self.asked_since = [], []

    def nvmlInit(self):
        pass

    def nvmlDeviceGetHandleByIndex(self, index):
        self.handles.append(index)
        return f"handle {index}"

    def nvmlDeviceGetSamples(self, handle, sampling_type, last_seen):
        assert sampling_type == self.NVML_GPU_UTILIZATION_SAMPLES
        if not self.supported:
            raise self.NVMLError(self.NVML_ERROR_NOT_SUPPORTED)
        self.asked_since.append(last_seen)
        fresh = [
            SimpleNamespace(timeStamp=round(t * 1e6), sampleValue=SimpleNamespace(uiVal=p))
            for t, p in self.samples
            if round(t * 1e6) > last_seen
        ]
        if not fresh:
            raise self.NVMLError(self.NVML_ERROR_NOT_FOUND)
        return 1, fresh  # 1: NVML_VALUE_TYPE_UNSIGNED_INT


class Clock:
    """The wall clock the sections read: moved by hand."""

    now = 1_000.0

    def __call__(self):
        return self.now


def test_nvml_samples_go_to_the_section_their_timestamp_falls_in(monkeypatch):
    # Turns of 0.4 s, shorter than NVML's averaging window: a poller would blur them.
    samples = [(999.9, 99), (1000.05, 80), (1000.2, 80), (1000.35, 80), (1000.5, 20),
               (1000.7, 20), (1000.9, 60), (1001.1, 60), (1001.5, 99)]  # fmt: skip
    nvml = FakeNvml(samples)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")  # torch's cuda:1 is NVML's device 1
    clock = Clock()
    sampler = UtilisationSampler(torch.device("cuda", 1), wall_clock=clock)
    with sampler:
        for label in ("hybrid", "baseline", "hybrid"):
            with sampler.section(label):
                clock.now += 0.4
    hybrid, baseline = sampler.summary("hybrid"), sampler.summary("baseline")
    assert nvml.handles == [1] and nvml.asked_since[0] == 0
    assert hybrid["gpu_method"] == "nvml samples" and hybrid["gpu_samples"] == 5
    assert hybrid["gpu_percent"] == 72.0  # (3 x 80 + 2 x 60) / 5; samples outside: dropped
    assert baseline["gpu_percent"] == 20.0 and baseline["gpu_samples"] == 2
    assert max(nvml.asked_since) == round(1001.5e6)  # each read asks only for newer samples
    assert UtilisationSampler(torch.device("cuda", 0)).gpu_method == "nvml samples"
    assert nvml.handles[-1] == 3


def test_without_nvml_samples_the_poller_is_the_fallback_and_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml([], supported=False))
    monkeypatch.setattr(torch.cuda, "utilization", lambda device: 42)
    sampler = UtilisationSampler(torch.device("cuda", 0), interval=0.01)
    with sampler, sampler.section("hybrid"):
        time.sleep(0.1)
    summary = sampler.summary("hybrid")
    assert summary["gpu_method"] == "nvml poll" and summary["gpu_percent"] == 42.0
    assert UtilisationSampler(torch.device("cpu")).summary("x")["gpu_method"] is None


def test_samples_on_another_clock_are_reported_not_silently_dropped(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml([(5.0, 50), (5.1, 50)]))
    sampler = UtilisationSampler(torch.device("cuda", 0), wall_clock=Clock())
    with sampler, sampler.section("hybrid"):
        pass
    summary = sampler.summary("hybrid")
    assert summary["gpu_percent"] is None and "another clock" in summary["gpu_error"]
