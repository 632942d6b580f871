"""Every thread-count result of notebooks 03 and 05 in one shape, as notebook 08's advice reads
them: the faster count per width and whether the paired iterations put it past the noise."""

from hetero_tutorial.core import results
from hetero_tutorial.studies.threads import thread_results


def _sweep_row(width: int, threads: int, seconds: list[float]) -> dict:
    return {
        "width": width, "threads": threads, "placement": "all-accelerator",
        "stands_for": ["all-accelerator", "hybrid", "all-cpu"], "iteration_seconds": seconds,
        "phase_seconds": {"rollout": [s / 2 for s in seconds], "update": [s / 2 for s in seconds]},
    }  # fmt: skip


def test_the_width_sweep_gives_the_faster_count_per_width_and_role():
    sweep = [
        _sweep_row(64, 1, [1.0, 1.1, 1.0]),
        _sweep_row(64, 2, [2.0, 2.1, 2.2]),  # one thread faster, every pair
        _sweep_row(1024, 1, [3.0, 3.0, 3.0]),
        _sweep_row(1024, 2, [2.9, 3.1, 3.0]),  # within the noise
    ]
    found = {(r["width"], r["role"]): r for r in thread_results(sweep)}
    assert set(found) == {
        (w, role) for w in (64, 1024) for role in ("rollout", "update", "iteration")
    }
    narrow = found[64, "iteration"]
    assert narrow["source"] == "03 width sweep" and narrow["network"] == "mlp-64"
    assert (narrow["faster"], narrow["slower"], narrow["past_noise"]) == (1, 2, True)
    assert narrow["ratio"] > 1 and narrow["low"] > 1
    assert found[1024, "iteration"]["past_noise"] is False


def test_the_allocators_recorded_wrong_thread_choice_is_read_past_the_noise():
    (record,) = results.load_references("bench.allocator")  # the 2-core machine's
    found = {r["network"]: r for r in thread_results(allocator_rows=record.data["rows"])}
    assert {r["source"] for r in found.values()} == {"05 allocator check"}
    mlp128 = found["mlp-128"]  # the record: the allocator chose 1 thread, 2 were 6% faster
    assert (mlp128["chosen"], mlp128["faster"], mlp128["past_noise"]) == (1, 2, True)
    assert 1.0 < mlp128["ratio"] < 1.1 and mlp128["width"] == 128
    assert found["cnn-512"]["width"] is None
    assert all(r["role"] == "iteration" for r in found.values())


def test_nothing_measured_gives_nothing():
    assert thread_results() == []
    assert thread_results([_sweep_row(64, 1, [1.0])]) == []  # one thread count: no pair
