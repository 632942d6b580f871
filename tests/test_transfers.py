import pytest
import torch

from hetero_tutorial.core import transfers
from hetero_tutorial.core.transfers import (
    DEVICE_TO_DEVICE,
    DEVICE_TO_HOST,
    HOST_TO_DEVICE,
    CopyCounter,
    _direction,
)

# The meta device has no data but is a real non-CPU device to the dispatcher, so copies
# to it go through the same operators as copies to an accelerator.


def test_counts_known_copies_exactly_with_bytes_and_phase():
    x = torch.ones(10, 4)  # 160 bytes of float32
    with CopyCounter() as counter:
        with counter.phase("rollout"):
            on_device = x.to("meta")
            x.to("meta", non_blocking=True)
        with counter.phase("update"):
            target = torch.empty(10, 4, device="meta")
            target.copy_(x)
            x.to(torch.float64)  # a dtype change on the CPU is not a host<->device copy
            torch.as_tensor([1.0, 2.0])  # nor is building a tensor on the host
    rollout = counter.total(phase="rollout")
    assert (rollout.count, rollout.bytes, rollout.non_blocking) == (2, 320, 1)
    assert counter.total(phase="update").as_dict() == {"count": 1, "bytes": 160, "non_blocking": 0}
    assert counter.total(direction=HOST_TO_DEVICE).count == 3
    assert counter.total(direction=DEVICE_TO_HOST).count == 0
    assert on_device.device.type == "meta"
    assert list(counter.by_phase()) == ["rollout", "update"]


def test_directions_between_device_types():
    # Copies out of the meta device cannot run (it holds no data), so the direction
    # rule is checked directly; on an accelerator machine the GPU tests cover it live.
    cpu, gpu, gpu1 = torch.device("cpu"), torch.device("cuda", 0), torch.device("cuda", 1)
    assert _direction(cpu, gpu) == HOST_TO_DEVICE
    assert _direction(gpu, cpu) == DEVICE_TO_HOST
    assert _direction(gpu, gpu1) == DEVICE_TO_DEVICE
    assert _direction(gpu, gpu) is None and _direction(cpu, cpu) is None


def test_nothing_counted_outside_the_block():
    with CopyCounter() as counter:
        pass
    torch.ones(2).to("meta")
    assert counter.total().count == 0


def test_copy_costs_time_only_pageable_copies_off_cuda():
    # Pinned memory and non_blocking are CUDA's; the meta device stands in for MPS or XPU
    # (pinning here would need CUDA, so the old code failed before timing anything).
    rows = transfers.copy_costs([64, 256], "meta", repeats=2)
    assert [(row["size_bytes"], row["mode"]) for row in rows] == [
        (64, "pageable"),
        (256, "pageable"),
    ]
    assert all("pageable copies only" in row["note"] for row in rows)


@pytest.mark.accelerator
@pytest.mark.skipif(not torch.cuda.is_available(), reason="pinned memory is CUDA's")
def test_pinning_on_the_fly_reuses_pytorchs_cached_pinned_block():
    rows = transfers.copy_costs([1 << 20], "cuda", repeats=5)
    (fly,) = [row for row in rows if row["mode"] == "pin on the fly"]
    if fly["new_pinned_blocks"] is None:
        pytest.skip("this PyTorch does not count its pinned blocks")
    assert fly["calls"] == transfers.COPY_WARMUP + 5
    assert fly["new_pinned_blocks"] < fly["calls"]  # reused, not allocated at every call
    assert all(row["new_pinned_blocks"] is None for row in rows if row is not fly)


def test_copies_under_inference_mode_are_counted():
    # Inside torch.inference_mode (where the rollout acts) the dispatcher shows aten.to's
    # overloads and aten.item, not aten._to_copy: a counter that missed them saw no rollout
    # copies at all on an accelerator.
    x, on_meta = torch.ones(3), torch.ones(2, device="meta")
    with torch.inference_mode(), CopyCounter() as counter:
        x.to("meta")  # to.dtype_layout
        x.to(on_meta)  # to.other
        x.to("meta", torch.float64, non_blocking=True)  # to.device
        x.to(torch.float64)  # a dtype change on the host: no copy
        torch.ones(()).item()  # a host tensor's value: no copy
    assert counter.total(direction=HOST_TO_DEVICE).as_dict() == {
        "count": 3, "bytes": 36, "non_blocking": 1
    }  # fmt: skip


def test_the_meta_counter_answers_copies_out_of_meta_with_zeros():
    on_meta = torch.ones(4, 2, device="meta")
    host = torch.full((4, 2), 7.0)
    with torch.inference_mode(), transfers.MetaCopyCounter() as counter:
        with counter.phase("rollout"):
            back = on_meta.cpu()
            value = on_meta.sum().item()
        with counter.phase("weight_sync"):
            host.copy_(on_meta)
        with counter.phase("update"):
            on_meta.to(torch.float64)  # stays on meta: runs, counted as nothing
            torch.ones(2).to("meta")
    assert back.device.type == "cpu" and back.shape == (4, 2) and not back.any()
    assert value == 0.0 and not host.any()
    assert counter.by_phase() == {
        "rollout": {"count": 2, "bytes": 36, "non_blocking": 0},
        "weight_sync": {"count": 1, "bytes": 32, "non_blocking": 0},
        "update": {"count": 1, "bytes": 8, "non_blocking": 0},
    }
    assert counter.total(direction=DEVICE_TO_HOST).count == 3
