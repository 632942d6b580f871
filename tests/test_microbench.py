import pytest
import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.notebook.solutions.devices_and_timing import best_batch_per_width
from hetero_tutorial.studies import crossover as microbench


def _row(device, width, batch, seconds, iqr=0.1):
    """A grid cell: ``seconds`` per sample, its calls' IQR ``iqr`` times their median."""
    return {"device": device, "width": width, "batch_size": batch, "seconds_per_sample": seconds,
            "seconds_per_call": seconds * batch, "iqr_s": iqr * seconds * batch}  # fmt: skip


def test_crossover_is_the_first_width_where_the_accelerator_wins():
    rows = [
        _row("cpu", 64, 1, 1.0), _row("cuda:0", 64, 1, 2.0),
        _row("cpu", 256, 1, 3.0), _row("cuda:0", 256, 1, 4.0),
        _row("cpu", 64, 512, 1.0), _row("cuda:0", 64, 512, 1.5),
        _row("cpu", 256, 512, 3.0), _row("cuda:0", 256, 512, 0.5),
    ]  # fmt: skip
    assert microbench.crossover_widths(rows) == {1: None, 512: 256}
    assert microbench.crossover_widths([r for r in rows if r["device"] == "cpu"]) == {}


def test_a_cell_inside_the_medians_noise_is_no_accelerator_win():
    # 0.9x by median, but each median +-25% (IQR half its median): no winner at width 64
    rows = [
        _row("cpu", 64, 256, 1.0, iqr=0.5), _row("cuda:0", 64, 256, 0.9, iqr=0.5),
        _row("cpu", 256, 256, 3.0), _row("cuda:0", 256, 256, 1.0),
    ]  # fmt: skip
    assert microbench.crossover_cells(rows) == {256: {64: None, 256: True}}
    assert microbench.crossover_widths(rows) == {256: 256}
    said = microbench.crossover_sentence(rows)
    assert "from width 256" in said and "no winner): batch 256: width 64" in said


def test_batches_that_pay_is_the_smallest_batch_near_the_cheapest_per_width():
    rows = [_row("cpu", 8, b, s) for b, s in ((1, 4.0), (16, 1.05), (256, 1.0))]
    rows += [_row("cpu", 64, b, s) for b, s in ((1, 2.0), (16, 1.5), (256, 1.0))]
    rows += [_row("cuda:0", 8, 1, 0.1)]  # another device: not read
    found = microbench.batches_that_pay(rows)
    assert [(b["width"], b["batch_size"]) for b in found] == [(8, 16), (64, 256)]
    assert found[0]["smallest_over_cheapest"] == 4.0
    said = microbench.batching_sentence(rows)
    assert "width 8: batch 16 (batch 1 costs 4x" in said
    assert "width 64: batch 256, the largest measured, so still falling" in said


def test_ratios_are_cpu_over_accelerator_and_skip_the_environment():
    costs = {"cpu": {"median_s": 2.0}, "cuda:0": {"median_s": 1.0}, "env_only": {"median_s": 0.1}}
    assert microbench.ratios(costs) == {"cuda:0": 2.0}


def test_forward_grid_measures_every_cell_on_every_device():
    rows = microbench.forward_grid([8, 16], [1, 4], ["cpu"], repeats=2, warmup=1)
    assert [(r["width"], r["batch_size"]) for r in rows] == [(8, 1), (8, 4), (16, 1), (16, 4)]
    for row in rows:
        assert row["seconds_per_sample"] == pytest.approx(
            row["seconds_per_call"] / row["batch_size"]
        )
        assert row["seconds_per_call"] > 0


def test_policy_step_and_value_update_report_medians():
    steps = microbench.policy_step_costs(["cpu"], hidden=16, repeats=2, steps_per_repeat=5)
    assert set(steps) == {"cpu", "env_only"}
    assert steps["cpu"]["median_s"] > steps["env_only"]["median_s"] > 0
    updates = microbench.value_update_costs(["cpu"], hidden=16, batch_size=8, repeats=2)
    assert updates["cpu"]["repeats"] == 2


def test_naive_vs_honest_reports_three_timers():
    timers = microbench.naive_vs_honest("cpu", width=32, batch_size=8, calls=5)
    assert set(timers) == {"first_call_s", "naive_s", "honest_s", "width", "batch_size"}
    assert all(timers[name] > 0 for name in ("first_call_s", "naive_s", "honest_s"))
    assert (timers["width"], timers["batch_size"]) == (32, 8)


@pytest.mark.parametrize(
    ("widths", "batches", "timed"), [([8, 32], [1, 4], (32, 4)), ([64, 2048], [4096], (1024, 1024))]
)
def test_the_timers_time_the_grids_largest_cell_at_most_1024(monkeypatch, widths, batches, timed):
    seen = []
    monkeypatch.setattr(microbench, "naive_vs_honest", lambda d, w, b: seen.append((w, b)) or {})
    monkeypatch.setattr(microbench, "forward_grid", lambda *a, **k: [])
    for name in ("policy_step_costs", "value_update_costs", "summarize"):
        monkeypatch.setattr(microbench, name, lambda *a, **k: {})
    microbench.building_blocks(widths, batches, devices=["cpu"])
    assert seen == [timed]


def test_no_devices_is_a_clear_error():
    with pytest.raises(UsageError, match="at least one device"):
        microbench.forward_grid([8], [1], [])


def test_summary_record_fields():
    summary = microbench.summarize(
        [torch.device("cpu")],
        grid=[_row("cpu", 8, 1, 1.0)],
        policy_step={"cpu": {"median_s": 1.0}},
        value_update={"cpu": {"median_s": 1.0}},
        timers={},
    )
    assert summary["devices"] == ["cpu"]
    assert summary["crossover_width_by_batch"] == {}


def test_solution_best_batch_per_width():
    rows = [_row("cpu", 32, 1, 5.0), _row("cpu", 32, 64, 1.0), _row("cpu", 32, 256, 2.0),
            _row("cuda:0", 32, 256, 0.1), _row("cpu", 64, 1, 1.0)]  # fmt: skip
    assert best_batch_per_width(rows) == {32: 64, 64: 1}
    assert best_batch_per_width(rows, device="cuda:0") == {32: 256}


def test_each_device_gets_its_own_copy_of_the_network():
    net = torch.nn.Linear(3, 2)
    cpu, other = torch.device("cpu"), torch.device("meta")  # meta stands in for an accelerator
    copies = microbench.copies_on(net, [cpu, other])
    assert copies[cpu].weight.device == cpu and copies[other].weight.device == other
    assert next(net.parameters()).device == cpu  # the original stays where it was
    torch.testing.assert_close(copies[cpu].weight, net.weight)


def test_the_first_call_is_timed_before_any_other_measurement(monkeypatch):
    # Any grid call before it would have warmed cuBLAS, and "first call" would be nothing.
    order = []
    returns = {"forward_grid": [], "naive_vs_honest": {}}
    for name in ("forward_grid", "policy_step_costs", "value_update_costs", "naive_vs_honest"):
        result = returns.get(name, {"cpu": {"median_s": 1.0}})
        monkeypatch.setattr(
            microbench, name, lambda *a, name=name, result=result, **k: order.append(name) or result
        )
    microbench.building_blocks([8], [1], devices=["cpu"])
    assert order[0] == "naive_vs_honest" and len(order) == 4
