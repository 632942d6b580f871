"""One count of the cores this process may use, read by the machine's fingerprint, the
overlapped engine's default workers, the local Ray, the allocator's thread counts and
PyTorch's threads: the affinity mask, a cgroup CPU quota and ``HETERO_TUTORIAL_THREADS``,
whichever is smallest."""

import os

import pytest
import torch

from hetero_tutorial.allocator.pricing import thread_choices
from hetero_tutorial.core import machine
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.rl.overlapped import loop
from hetero_tutorial.studies.sweeps import thread_counts


@pytest.fixture(autouse=True)
def no_cap_of_this_machine(monkeypatch):
    """The tests below set each limit themselves: this machine's own quota or cap is not theirs."""
    monkeypatch.setattr(machine, "CGROUP_QUOTAS", ())
    monkeypatch.delenv("HETERO_TUTORIAL_THREADS", raising=False)


def test_usable_cores_follow_the_affinity_mask_everywhere(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert machine.usable_cores() == 3
    assert machine.fingerprint()["usable_cores"] == 3
    assert loop.default_workers() == 2  # the learner keeps one core
    assert thread_choices() == (1, 2, 3)


def test_without_an_affinity_mask_every_logical_core_counts(monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert machine.usable_cores() == 6
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: at least this one
    assert machine.usable_cores() == 1


def _cgroup_v2(tmp_path, text):
    path = tmp_path / "cpu.max"
    path.write_text(text)
    return [(path, None)]


def test_a_cgroup_quota_caps_the_cores(tmp_path):
    assert machine.usable_cores({}, affinity=8, quotas=_cgroup_v2(tmp_path, "150000 100000\n")) == 2
    assert machine.usable_cores({}, affinity=8, quotas=_cgroup_v2(tmp_path, "max 100000\n")) == 8
    quota, period = tmp_path / "cfs_quota_us", tmp_path / "cfs_period_us"  # cgroup v1
    quota.write_text("300000\n")
    period.write_text("100000\n")
    assert machine.usable_cores({}, affinity=8, quotas=[(quota, period)]) == 3
    quota.write_text("-1\n")
    assert machine.usable_cores({}, affinity=8, quotas=[(quota, period)]) == 8
    missing = [(tmp_path / "absent", None)]
    assert machine.usable_cores({}, affinity=8, quotas=missing) == 8


def test_the_learners_cap_is_the_smallest_limit_and_named(tmp_path):
    quotas = _cgroup_v2(tmp_path, "400000 100000")
    limits = machine.core_limits({"HETERO_TUTORIAL_THREADS": "2"}, affinity=8, quotas=quotas)
    assert limits == {"affinity": 8, "cgroup quota": 4, "HETERO_TUTORIAL_THREADS": 2}
    assert machine.usable_cores({"HETERO_TUTORIAL_THREADS": "16"}, affinity=8, quotas=quotas) == 4


def test_a_cap_that_is_not_a_count_says_what_to_set():
    with pytest.raises(UsageError, match="HETERO_TUTORIAL_THREADS='two' is not a number"):
        machine.usable_cores({"HETERO_TUTORIAL_THREADS": "two"}, affinity=2, quotas=[])
    with pytest.raises(UsageError, match="whole number of 1 or more"):
        machine.usable_cores({"HETERO_TUTORIAL_THREADS": "0"}, affinity=2, quotas=[])


def test_the_cap_reaches_the_allocator_the_engine_and_pytorch(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setenv("HETERO_TUTORIAL_THREADS", "2")
    assert thread_choices() == (1, 2)
    assert thread_counts((1, None)) == [1, 2]  # the width sweep's "all cores"
    assert loop.default_workers() == 1
    assert "2 of this machine's" in machine.cores_line()
    assert "capped by HETERO_TUTORIAL_THREADS" in machine.cores_line()
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(4)
        assert machine.cap_torch_threads() == 2
    finally:
        torch.set_num_threads(before)
