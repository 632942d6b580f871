"""A finding's words follow its outcome on both sides of every edge (property-based)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hetero_tutorial.core import machine_load
from hetero_tutorial.core.findings import NEAR_END, Check, Expectation, Finding, Outcome
from hetero_tutorial.core.machine_load import Busyness
from hetero_tutorial.core.timing import Spread

figures = st.floats(min_value=0.01, max_value=100.0, allow_nan=False)


four = st.lists(figures, min_size=4, max_size=4, unique=True).map(sorted)
"""Four figures a < b < c < d: every case below places a range and an expectation on them."""


@st.composite
def expectations(draw) -> Expectation:
    low, high = sorted(draw(st.lists(figures, min_size=2, max_size=2, unique=True)))
    kind = draw(st.sampled_from(["at_most", "at_least", "between"]))
    if kind == "at_most":
        return Expectation.at_most(high, "the ideal")
    if kind == "at_least":
        return Expectation.at_least(low, "the rule")
    return Expectation.between(low, high, "the model")


def _finding(expected: Expectation, low: float, high: float, **kw) -> Finding:
    value = (low + high) / 2
    return Finding("the run", Spread(value, low, high, "seeds"), expected, **kw)


@given(four, st.sampled_from(["between", "at_most", "at_least"]))
def test_a_range_inside_holds_and_says_so(points: list[float], kind: str) -> None:
    a, b, c, d = points
    expected = {
        "between": Expectation.between(a, d, "the model"),
        "at_most": Expectation.at_most(d, "the ideal"),
        "at_least": Expectation.at_least(a, "the rule"),
    }[kind]
    finding = _finding(expected, b, c)
    assert finding.outcome is Outcome.HELD
    assert finding.sentence().endswith(": held")
    assert "did not hold" not in finding.sentence()


@given(four, st.sampled_from(["above", "below", "over a ceiling", "under a floor"]), st.booleans())
def test_a_range_wholly_outside_breaks_and_says_by_how_much(
    points: list[float], case: str, check: bool
) -> None:
    a, b, c, d = points
    expected, low, high = {
        "above": (Expectation.between(a, b, "the model"), c, d),
        "below": (Expectation.between(c, d, "the model"), a, b),
        "over a ceiling": (Expectation.at_most(b, "the ideal"), c, d),
        "under a floor": (Expectation.at_least(c, "the rule"), a, b),
    }[case]
    finding = _finding(expected, low, high, checks=(Check("a separate run set it", check),))
    words = finding.sentence()
    assert finding.outcome is Outcome.NOT_HELD
    assert "the expectation did not hold" in words
    side = "above" if low > expected.high else "below"
    assert f"{side} the " in words
    gap_at = finding.measured.value
    gap = expected.gap(gap_at)
    assert gap > 0 and (f"by {gap:.0%}" in words or f"by {gap:.1%}" in words)
    assert "by 0%" not in words
    # the verdict reads the range: its nearer end's distance, where it differs from the median's
    near = expected.gap(low if side == "above" else high)
    thin = f"its whole range by {expected.gap_words(low if side == 'above' else high)} or more"
    assert (thin in words) is (near < NEAR_END * gap)
    assert ("does not isolate: a separate run set it" in words) is check
    assert ("no cause this run can check" in words) is not check


@given(four, st.sampled_from(["low edge", "high edge", "ceiling", "floor"]))
def test_a_range_across_an_edge_is_no_clear_effect(points: list[float], case: str) -> None:
    a, b, c, d = points
    expected, low, high = {
        "low edge": (Expectation.between(b, d, "the model"), a, c),
        "high edge": (Expectation.between(a, c, "the model"), b, d),
        "ceiling": (Expectation.at_most(c, "the ideal"), b, d),
        "floor": (Expectation.at_least(b, "the rule"), a, c),
    }[case]
    finding = _finding(expected, low, high)
    assert finding.outcome is Outcome.UNCLEAR
    assert "no clear effect" in finding.sentence()
    assert "held" not in finding.sentence() and "did not hold" not in finding.sentence()
    place = expected.place(finding.measured.value)  # a median outside is said, not hidden
    assert (f"its median lies {place} it, but" in finding.sentence()) is (place != "inside")


@given(expectations(), figures)
def test_one_figure_gives_no_verdict_and_says_where_it_fell(
    expected: Expectation, value: float
) -> None:
    finding = Finding("the run", Spread(value, how="one seed"), expected)
    words = finding.sentence()
    assert finding.outcome is Outcome.NO_VERDICT
    assert "no verdict" in words and "(one seed)" in words
    assert "held" not in words and "did not hold" not in words
    assert expected.place(value) in words
    # no verdict to explain: "no cause explains it" beside "no verdict" says nothing
    assert "no cause this run can check" not in words


def test_every_outcome_is_reachable_including_broken() -> None:
    """A finding that cannot say "broken" fails here: one case per outcome."""
    ideal = Expectation.at_most(1.36, "the ideal speed-up")
    seen = {
        _finding(ideal, 1.1, 1.2).outcome,
        _finding(ideal, 1.40, 1.55).outcome,
        _finding(ideal, 1.2, 1.5).outcome,
        Finding("one", Spread(1.47, how="one seed"), ideal).outcome,
    }
    assert seen == {Outcome.HELD, Outcome.NOT_HELD, Outcome.UNCLEAR, Outcome.NO_VERDICT}


def test_the_edge_itself_counts_as_inside() -> None:
    bound = Expectation.between(1.0, 1.06, "the sampling model")
    assert _finding(bound, 1.0, 1.06).outcome is Outcome.HELD
    assert _finding(bound, 1.061, 1.07).outcome is Outcome.NOT_HELD
    assert _finding(bound, 0.5, 0.99).sentence().count("below") == 1


def test_a_busy_study_is_not_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    busy = Busyness("race", 4.0, off_reference=("a step 4x this CPU's record",))
    assert busy.busy
    monkeypatch.setattr("hetero_tutorial.core.findings.withheld", lambda *figures: busy)
    finding = _finding(Expectation.at_most(1.36, "the ideal"), 1.4, 1.5)
    assert finding.outcome is Outcome.NOT_JUDGED
    assert "did not hold" not in finding.sentence()
    assert machine_load.BUSY_WORDS in finding.sentence()


def test_units_other_than_ratios_read_as_ranges() -> None:
    step = Expectation.at_most(7.24, "the model's step")
    finding = Finding("a step", Spread(8.0, 7.9, 8.1, "rounds"), step, unit="{:.2f} ms")
    assert "7.90 ms to 8.10 ms" in finding.sentence()
    assert "at most 7.24 ms" in finding.sentence()
    assert math.isclose(step.gap(8.0), 0.76 / 7.24)


ratios = st.lists(
    st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False),
    min_size=2,
    max_size=12,
)
"""Paired ratios, one per repeat: 2 to 12 of them, finite and positive."""


@given(ratios, st.data())
def test_fewer_than_five_repeats_give_no_verdict_whatever_their_range(
    repeats: list[float], data: st.DataObject
) -> None:
    """The series' rule (:data:`~hetero_tutorial.core.timing.MIN_REPEATS`): a verdict needs 5
    repeats; from 5 on, the whole range against the threshold decides."""
    # the threshold anywhere, or on one of the repeats: the edge counts as inside
    threshold = data.draw(st.one_of(st.floats(1e-3, 1e3), st.sampled_from(repeats)))
    with pytest.MonkeyPatch.context() as patch:  # the guard withholds nothing here
        for module in ("findings", "timing"):
            patch.setattr(f"hetero_tutorial.core.{module}.withheld", lambda *figures: None)
        finding = Finding(
            "the run", Spread.of_ratios(repeats), Expectation.at_least(threshold, "the rule")
        )
        outcome, words = finding.outcome, finding.sentence()
    few = len(repeats) < 5
    if few:
        expected = Outcome.NO_VERDICT
    elif min(repeats) >= threshold:
        expected = Outcome.HELD
    elif max(repeats) < threshold:
        expected = Outcome.NOT_HELD
    else:
        expected = Outcome.UNCLEAR
    assert outcome is expected
    assert ("a verdict needs 5" in words) is few
    assert outcome.value in words
    if few:
        assert words.endswith(f"no verdict, {len(repeats)} repeats, and a verdict needs 5")
        assert "held" not in words and "no clear effect" not in words


def test_a_committed_records_finding_is_judged_whatever_this_runs_guard_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A race recorded on another day is not withheld because this run's newest study ran
    busy: the guard speaks of this run's studies only."""
    busy = Busyness("the overlap study", 4.0, off_reference=("a step 4x this CPU's record",))
    monkeypatch.setattr("hetero_tutorial.core.findings.withheld", lambda *figures: busy)
    target = Expectation.at_least(1.0, "the target")
    spread = Spread.of_ratios([4.4, 5.0, 5.2, 6.0, 6.5])
    assert Finding("ours / torchrl", spread, target).outcome is Outcome.NOT_JUDGED
    recorded = Finding("ours / torchrl", spread, target, recorded=True)
    assert recorded.outcome is Outcome.HELD and machine_load.BUSY_WORDS not in recorded.sentence()


@given(st.floats(0.0, 0.0049), st.floats(0.0051, 0.5))
def test_a_bound_that_prints_as_one_names_no_side(near: float, far: float) -> None:
    """03 read a paired ratio of 1.0000056 as "all cores faster"; 01 read 1.00-1.07x as no
    clear effect. A bound within half a percent of 1 reaches it, on either side."""
    above = [1.0 + near, 1.1, 1.2, 1.3, 1.37]
    below = [1.0 - near, 0.9, 0.8, 0.85, 0.7]
    assert Spread.of_ratios(above).beyond(1.0) is None
    assert Spread.of_ratios(below).beyond(1.0) is None
    assert Spread.of_ratios([1.0 + far, *above[1:]]).beyond(1.0) is True
    assert Spread.of_ratios([1.0 - far, *below[1:]]).beyond(1.0) is False


def test_a_busy_studys_evidence_is_printed_once_then_named(monkeypatch: pytest.MonkeyPatch):
    """02 printed the same busy reading in full under three verdicts; later verdicts on the
    same study now name it in a few words, and two readings are kept apart by a semicolon."""
    first = Busyness("the py-spy profile", 4.0, off_reference=("a step 4x this CPU's record",))
    second = Busyness("the second child", 3.0, off_reference=("a step 5x this CPU's record",))
    monkeypatch.setattr(machine_load, "_readings", [first, second])
    monkeypatch.setattr(machine_load, "_said", set())

    @machine_load.judged("all")
    def verdict() -> str:
        return "held"

    said = verdict()
    assert said.count(machine_load.BUSY_WORDS) == 2 and "; the second child:" in said
    again = verdict()
    assert machine_load.BUSY_WORDS not in again
    assert again == (
        "the py-spy profile: not judged (busy, as said above); "
        "the second child: not judged (busy, as said above)"
    )


def test_a_count_names_its_noun_in_the_number_it_needs():
    from hetero_tutorial.core.plural import counted

    assert counted(1, "seed") == "1 seed" and counted(3, "seed") == "3 seeds"
    assert counted(0, "graph break") == "0 graph breaks"
    assert counted(1_024, "environment") == "1,024 environments"
    assert counted(2, "copy", "copies") == "2 copies" and counted(1, "copy", "copies") == "1 copy"
    assert counted("2", "thread") == "2 threads"  # a JSON key read back


def test_a_gap_under_one_percent_prints_as_the_finding_prints_it():
    """06 printed 'by 0.6%' in its sentence and 'by 1%' in its table for one run."""
    ceiling = Expectation.at_most(1.43, "its ideal")
    assert ceiling.gap_words(1.4386) == "0.6%" and ceiling.gap_words(1.60) == "12%"
