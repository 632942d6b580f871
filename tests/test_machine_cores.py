"""One count of the cores this process may use, read by the machine's fingerprint, the
overlapped engine's default workers, the local Ray and the allocator's thread counts."""

import os

from hetero_tutorial.allocator.pricing import thread_choices
from hetero_tutorial.core import machine
from hetero_tutorial.rl.overlapped import loop


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
