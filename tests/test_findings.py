"""A finding's words follow its outcome on both sides of every edge (property-based)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hetero_tutorial.core import machine_load
from hetero_tutorial.core.findings import Check, Expectation, Finding, Outcome
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
    gap = expected.gap(finding.measured.value)
    assert gap > 0 and (f"by {gap:.0%}" in words or f"by {gap:.1%}" in words)
    assert "by 0%" not in words
    assert ("a separate run set it" in words) is check
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
