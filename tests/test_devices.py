import pytest
import torch

from hetero_tutorial.core import devices
from hetero_tutorial.core.devices import DeviceError, resolve_device
from hetero_tutorial.core.machine import fingerprint
from hetero_tutorial.core.placement import placement


def test_cpu_is_always_available():
    assert devices.available_devices()[0] == "cpu"
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(" CPU ") == torch.device("cpu")


@pytest.mark.parametrize("spec", ["gpu", "cuda:x", "tpu", "", "banana:0"])
def test_unknown_device_string_names_what_is_available(spec):
    with pytest.raises(DeviceError, match="Available"):
        resolve_device(spec)


def test_missing_accelerator_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(devices, "_type_is_available", lambda kind: kind == "cpu")
    for spec in ("cuda", "cuda:0", "mps", "xpu"):
        with pytest.raises(DeviceError, match=r"not present.*Available: cpu"):
            resolve_device(spec)
    with pytest.raises(DeviceError, match="has none"):
        resolve_device("accelerator")
    with pytest.raises(DeviceError):
        placement("hybrid", accelerator_device="cuda")


def test_presets_fall_back_to_cpu_and_say_so(monkeypatch):
    monkeypatch.setattr(devices, "_type_is_available", lambda kind: kind == "cpu")
    cpu = torch.device("cpu")
    for name in ("all-accelerator", "hybrid"):
        plan = placement(name)
        assert (plan.rollout, plan.storage, plan.update) == (cpu, cpu, cpu)
        assert plan.accelerator_missing
        assert "no accelerator" in plan.describe()
    assert not placement("all-cpu").accelerator_missing
    assert not placement("hybrid").pin_storage


def test_presets_put_phases_where_the_design_says(monkeypatch):
    # Pretend a CUDA device exists; placements only name devices, nothing runs on them.
    monkeypatch.setattr(devices, "_type_is_available", lambda kind: kind in ("cpu", "cuda"))
    monkeypatch.setattr(devices, "_device_count", lambda kind: 1 if kind in ("cpu", "cuda") else 0)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")
    base = placement("all-accelerator")
    assert (base.rollout, base.storage, base.update) == (cuda, cuda, cuda)
    hybrid = placement("hybrid")
    assert (hybrid.rollout, hybrid.storage, hybrid.update) == (cpu, cpu, cuda)
    assert hybrid.pin_storage and not base.pin_storage
    assert hybrid.devices == (cpu, cuda)


def test_unknown_placement_lists_the_presets():
    with pytest.raises(DeviceError, match="all-accelerator, hybrid, all-cpu"):
        placement("gpu-only")


def test_fingerprint_has_the_provenance_facts():
    facts = fingerprint()
    for key in ("cpu_model", "cpu_logical_cores", "memory_bytes", "python", "versions", "os"):
        assert facts[key]
    assert (
        facts["versions"]["torch"] == torch.__version__.split("+")[0] or facts["versions"]["torch"]
    )
    assert "accelerator" in facts


def test_synchronize_accepts_cpu_and_none():
    devices.synchronize("cpu")
    devices.synchronize(None)


def test_mps_and_mps0_are_one_device_wherever_devices_are_grouped(monkeypatch):
    # An MPS tensor reports "mps:0"; torch.device("mps") does not equal it unless normalised.
    monkeypatch.setattr(devices, "_type_is_available", lambda kind: kind in ("cpu", "mps"))
    mps0 = torch.device("mps", 0)
    assert devices.with_index("mps") == devices.with_index("mps:0") == mps0
    assert devices.accelerator() == mps0 and resolve_device("mps") == mps0
    hybrid = placement("hybrid", accelerator_device="mps")
    assert hybrid.update == mps0 and hybrid.devices == (torch.device("cpu"), mps0)
    assert placement("all-accelerator", accelerator_device="mps:0").devices == (mps0,)
    assert not hybrid.pin_storage  # pinning is for CUDA only


def test_tf32_is_off_and_the_fingerprint_records_it():
    # The CPU computes in full FP32; PyTorch's default lets cuDNN use TF32 on a GPU.
    assert not torch.backends.cuda.matmul.allow_tf32
    assert not torch.backends.cudnn.allow_tf32
    flags = fingerprint()["float32"]
    assert flags == {"cuda_matmul_allow_tf32": False, "cudnn_allow_tf32": False}
