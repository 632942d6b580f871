import pytest
import torch

from hetero_tutorial.core import devices, machine
from hetero_tutorial.core.devices import DeviceError, resolve_device
from hetero_tutorial.core.machine import fingerprint
from hetero_tutorial.core.placement import Placement, placement


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
    for name in ("all-accelerator", "hybrid", "all-device"):
        preset = placement(name)
        assert preset.devices == (cpu,) and preset.accelerator_missing
        assert "no accelerator" in preset.describe()
    assert not placement("all-cpu").accelerator_missing
    assert not placement("hybrid").pin_storage
    all_device = placement("all-device")  # on the CPU, its environments are still batched
    assert all_device.batched_envs and all_device.devices == (cpu,)
    assert "batched environments on cpu" in all_device.describe()


def test_presets_put_phases_where_the_design_says(monkeypatch):
    # Pretend a CUDA device exists; placements only name devices, nothing runs on them.
    monkeypatch.setattr(devices, "_type_is_available", lambda kind: kind in ("cpu", "cuda"))
    monkeypatch.setattr(devices, "_device_count", lambda kind: 1 if kind in ("cpu", "cuda") else 0)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")
    base = placement("all-accelerator")
    assert (base.rollout_device, base.storage_device, base.update_device) == (cuda, cuda, cuda)
    hybrid = placement("hybrid")
    assert (hybrid.rollout_device, hybrid.storage_device, hybrid.update_device) == (cpu, cpu, cuda)
    assert hybrid.pin_storage and not base.pin_storage
    assert hybrid.devices == (cpu, cuda)
    for preset in (base, hybrid, placement("all-cpu")):  # Gymnasium's environments, on the CPU
        assert preset.env_device == cpu and not preset.batched_envs
        assert preset.describe().startswith(f"{preset.name}: environments on cpu, rollout on")
    everything = placement("all-device")
    assert (
        everything.env_device,
        everything.rollout_device,
        everything.storage_device,
        everything.update_device,
    ) == (
        cuda,
        cuda,
        cuda,
        cuda,
    )
    assert everything.batched_envs and everything.devices == (cuda,)
    assert not everything.pin_storage and not everything.accelerator_missing
    assert "batched environments on cuda:0" in everything.describe()


def test_only_batched_environments_leave_the_cpu():
    meta, cpu = torch.device("meta"), torch.device("cpu")
    with pytest.raises(DeviceError, match="batched_envs=True"):
        Placement("gym-on-gpu", meta, meta, meta, env_device=meta)
    assert Placement("mine", cpu, cpu, meta, env_device=meta, batched_envs=True).devices == (
        meta,
        cpu,
    )


def test_unknown_placement_lists_the_presets():
    with pytest.raises(DeviceError, match="all-accelerator, hybrid, all-cpu, all-device"):
        placement("gpu-only")


def test_fingerprint_has_the_provenance_facts():
    facts = fingerprint()
    for key in ("cpu_model", "cpu_logical_cores", "memory_bytes", "python", "versions", "os"):
        assert facts[key]
    assert (
        facts["versions"]["torch"] == torch.__version__.split("+")[0] or facts["versions"]["torch"]
    )
    assert "accelerator" in facts


def test_the_fingerprint_tells_cpus_of_one_name_apart(monkeypatch, tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
        "model name\t: AMD EPYC\nstepping\t: 1\n\nprocessor\t: 1\ncpu family\t: 23\n"
    )
    monkeypatch.setattr(machine, "CPUINFO", cpuinfo)
    facts = fingerprint()
    isa = torch.backends.cpu.get_cpu_capability()
    assert facts["cpu_model"] == "AMD EPYC"
    assert facts["cpu_identity"] == {"vendor": "AuthenticAMD", "family": "25", "model": "17",
                                     "stepping": "1", "vector_isa": isa}  # fmt: skip
    facts["cpu_identity"]["vector_isa"] = "AVX512"
    assert machine.cpu_label(facts) == "AMD EPYC (family 25, model 17, AVX512)"
    assert machine.cpu_label({"cpu_model": "AMD EPYC"}) == "AMD EPYC"  # a record from before
    monkeypatch.setattr(machine, "CPUINFO", tmp_path / "none")  # macOS: no /proc/cpuinfo
    assert fingerprint()["cpu_identity"] == {"vector_isa": isa}
    arm = {"cpu_model": "arm", "cpu_identity": {"vector_isa": "DEFAULT"}}
    assert machine.cpu_label(arm) == "arm"  # PyTorch's plain kernels say nothing of the CPU


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
    assert hybrid.update_device == mps0 and hybrid.devices == (torch.device("cpu"), mps0)
    cpu = torch.device("cpu")  # all-accelerator's environments are Gymnasium's, on the CPU
    assert placement("all-accelerator", accelerator_device="mps:0").devices == (cpu, mps0)
    assert placement("all-device", accelerator_device="mps:0").devices == (mps0,)
    assert not hybrid.pin_storage  # pinning is for CUDA only
    assert devices.same_device("mps", mps0) and devices.same_device(mps0, "mps:0")
    assert not devices.same_device("cpu", mps0) and devices.same_device("cpu", "cpu")


def test_tf32_is_off_and_the_fingerprint_records_it():
    # The CPU computes in full FP32; PyTorch's default lets cuDNN use TF32 on a GPU.
    assert not torch.backends.cuda.matmul.allow_tf32
    assert not torch.backends.cudnn.allow_tf32
    flags = fingerprint()["float32"]
    assert flags == {"cuda_matmul_allow_tf32": False, "cudnn_allow_tf32": False}
