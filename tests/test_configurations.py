"""Plans that resolve to the same devices are one configuration: run once, said once."""

import torch

from hetero_tutorial.core.configurations import (
    devices_key,
    distinct_placements,
    group_same,
    same_devices_note,
)
from hetero_tutorial.core.placement import Placement, placement

CPU, META = torch.device("cpu"), torch.device("meta")


def test_presets_collapse_where_they_resolve_to_the_same_devices():
    names = ("all-accelerator", "hybrid", "all-cpu")
    cpu_only = [
        Placement(name, CPU, CPU, CPU, accelerator_missing=name != "all-cpu") for name in names
    ]
    (group,) = distinct_placements(cpu_only)
    assert [p.name for p in group] == ["all-accelerator", "hybrid", "all-cpu"]
    note = same_devices_note([group])
    assert note.startswith("all-accelerator, hybrid and all-cpu resolve to the same devices")
    assert "everything on cpu" in note and "measured once, as all-accelerator" in note


def test_designs_with_an_accelerator_stay_apart():
    names = ("all-accelerator", "hybrid", "all-cpu")
    designs = [placement(name, accelerator_device="meta") for name in names]
    groups = distinct_placements(designs)
    assert [len(g) for g in groups] == [1, 1, 1] and same_devices_note(groups) is None
    assert devices_key(designs[1]) == (
        ("rollout_device", "cpu"), ("storage_device", "cpu"), ("update_device", "meta"),
        ("env_device", "cpu"), ("batched_envs", "False"),
    )  # fmt: skip


def test_group_same_keeps_the_order_of_first_appearance():
    assert group_same([3, 1, 4, 1, 5, 9, 2, 6], key=lambda n: n % 3) == [
        [3, 9, 6],
        [1, 4, 1],
        [5, 2],
    ]
