import time

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
