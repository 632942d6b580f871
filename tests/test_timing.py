import statistics
import time

import pytest
import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.timing import (
    PhaseTimer,
    Timing,
    compare,
    format_seconds,
    measure,
    torch_threads,
)


def test_statistics_on_known_samples():
    timing = Timing((1.0, 2.0, 3.0, 4.0, 100.0))
    assert timing.median == 3.0
    assert timing.q1 == 2.0 and timing.q3 == 4.0
    assert timing.iqr == 2.0
    assert timing.minimum == 1.0
    even = Timing((4.0, 1.0, 3.0, 2.0))
    assert even.median == 2.5
    assert even.q1 == pytest.approx(1.75) and even.q3 == pytest.approx(3.25)


def test_sync_is_called_right_around_each_timed_repeat():
    events = []
    measure(
        lambda: events.append("call"),
        warmup=2,
        repeats=3,
        inner=2,
        sync=lambda: events.append("sync"),
    )
    # warm-up calls are not timed; then every repeat is sync, inner calls, sync.
    assert events == ["call", "call"] + ["sync", "call", "call", "sync"] * 3


def test_measure_reports_per_call_seconds():
    timing = measure(lambda: time.sleep(0.002), repeats=5, inner=2, warmup=0)
    assert len(timing.samples) == 5
    assert 0.0019 < timing.median < 0.02


def test_compare_interleaves_candidates():
    order = []
    compare(
        {"a": lambda: order.append("a"), "b": lambda: order.append("b")},
        warmup=0,
        repeats=3,
    )
    assert order == ["a", "b"] * 3


def test_compare_ratio_reflects_real_cost_difference():
    timings = compare(
        {"short": lambda: time.sleep(0.001), "long": lambda: time.sleep(0.004)},
        warmup=1,
        repeats=5,
    )
    assert timings["long"].median / timings["short"].median > 2


def test_phase_timer_synchronises_at_every_boundary_and_sums():
    events = []
    timer = PhaseTimer(sync=lambda: events.append("sync"))
    for _ in range(2):
        with timer.phase("rollout"):
            events.append("work")
            time.sleep(0.001)
    with timer.phase("update"):
        pass
    assert events == ["sync", "work", "sync"] * 2 + ["sync", "sync"]
    assert timer.calls == {"rollout": 2, "update": 1}
    assert timer.seconds["rollout"] >= 0.002
    assert statistics.fsum(timer.shares().values()) == pytest.approx(1.0)


def test_thread_count_is_set_and_restored():
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(UsageError), torch_threads(0):
        pass


def test_bad_arguments_are_clear_errors():
    with pytest.raises(UsageError, match="repeats"):
        measure(lambda: None, repeats=0)
    with pytest.raises(UsageError):
        compare({})


def test_format_seconds_picks_a_readable_unit():
    assert format_seconds(2.5) == "2.5 s"
    assert format_seconds(0.0031) == "3.1 ms"
    assert format_seconds(4.2e-6) == "4.2 us"
    assert format_seconds(5e-9) == "5 ns"


def test_phase_timer_synchronises_mps_and_mps0_once(monkeypatch):
    from hetero_tutorial.core import timing

    waited = []
    monkeypatch.setattr(timing, "synchronize", waited.append)
    timer = PhaseTimer(devices=["cpu", "mps", "mps:0"])  # "mps" is the device "mps:0"
    with timer.phase("update"):
        pass
    assert waited == [torch.device("cpu"), torch.device("mps", 0)] * 2


def test_spread_of_interleaved_ratios_and_which_side_of_a_threshold_it_lies():
    from hetero_tutorial.core.timing import Spread

    five = Spread.of_ratios([1.05, 1.08, 1.06, 1.07, 1.06], value=1.08, per="seed")
    assert str(five) == "1.08x (per seed 1.05-1.08x)"  # the whole range of the repeats
    assert five.count == 5 and five.decides and not five.too_few
    assert five.side(1.1) is False and five.side(1.0) is True and five.side(1.06) is None
    # the same range from three repeats: measured, but too few to lie on any side
    few = Spread.of_ratios([1.05, 1.08, 1.06], value=1.08, per="seed")
    assert str(few) == "1.08x (per seed 1.05-1.08x)" and few.measured and few.too_few
    assert few.side(1.1) is None and few.side(1.0) is None and few.beyond(1.0) is None
    assert few.noise() == "; 3 repeats, and a verdict needs 5: no verdict"
    many = Spread.of_ratios([0.9, 1.0, 1.0, 1.0, 1.2, 1.3, 2.0], per="turn")
    # however many repeats: still their whole range, so one stray round is never hidden
    assert (many.low, many.high, many.value) == (0.9, 2.0, 1.0)
    assert str(many) == "1.00x (per turn 0.90-2.00x)" and many.side(1.0) is None
    same = Spread.of_ratios([1.0] * 5)  # identical repeats: at 1, past it on neither side
    assert same.side(1.0) is True and same.beyond(1.0) is None
    below = Spread.of_ratios([0.9, 0.95, 0.92, 0.93, 0.94])
    assert five.beyond(1.0) is True and below.beyond(1.0) is False
    assert Spread.of_ratios([0.9, 0.95]).beyond(1.0) is None  # two repeats: no verdict
    one = Spread.of_ratios([1.5], per="seed")
    assert not one.measured and one.side(1.0) is None and "(one seed)" in one.noise()
    assert Spread.about(0.04, 0.10).noise("{:.0%}") == " (within the measured noise, +-5%)"
    assert Spread.of_pairs([2.0, 3.0], [1.0, 2.0], value=1.75).low == 1.5
    with pytest.raises(UsageError, match="as many on each side, got 2 and 3"):
        Spread.of_pairs([2.0, 3.0], [1.0, 2.0, 4.0], value=1.75)  # no pairs: not silently cut
    quotient = Spread.of_medians({"median_s": 2.0, "iqr_s": 0.2}, {"median_s": 1.0, "iqr_s": 0.2})
    assert quotient.low == pytest.approx(1.9 / 1.1) and quotient.high == pytest.approx(2.1 / 0.9)
    assert not Spread.of_quotient(0.9, [(1.0, 0.1), (2.0, None)]).measured
    assert Spread.of_quotient(1.0, [(1.0, 0.1), (2.0, 0.2)]).half_width == pytest.approx(0.1)
