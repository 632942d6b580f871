"""The figure audit that make notebooks runs: it fails the figures a reader would misread."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from hetero_tutorial.notebook.figure_audit import FigureProblem, _audited, problems


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_a_plain_plot_and_a_category_axis_pass():
    fig, (left, right) = plt.subplots(1, 2)
    left.plot([1, 2, 3], [1, 4, 9])
    right.barh(["rollout", "update"], [0.3, 0.7])
    assert problems(fig) == []


def test_an_empty_panel_is_caught_unless_it_says_why():
    fig, (full, empty) = plt.subplots(1, 2)
    full.plot([0, 1], [0, 1])
    empty.set_title("clip fraction")
    assert any("('clip fraction') is empty" in p for p in problems(fig))
    empty.text(0.5, 0.5, "no clipping measured in quick mode", ha="center")
    assert problems(fig) == []


def test_a_numeric_axis_without_numbers_is_caught():
    fig, ax = plt.subplots()
    ax.barh([0, 1], [2.0, 3.0])
    ax.set_xticks([])
    assert any("numeric x axis shows no tick labels" in p for p in problems(fig))
    ax.set_xticks([0, 1, 2, 3], ["zero", "one", "two", "three"])
    assert any("numeric x axis is labelled" in p for p in problems(fig))


def test_compared_timelines_must_span_the_same_range():
    fig, (seq, over) = plt.subplots(2, 1)
    seq.plot([0, 6], [0, 1])
    seq.set_title("timeline: sequential")
    over.plot([0, 60], [0, 1])
    over.set_title("timeline: overlapped")
    assert any("span different x ranges" in p for p in problems(fig))
    seq.set_xlim(over.get_xlim())
    assert problems(fig) == []


def test_an_audited_canvas_refuses_to_draw_a_misleading_figure():
    fig, ax = plt.subplots()
    drawn = []
    print_figure = _audited(fig, lambda *args, **kwargs: drawn.append(args))
    with pytest.raises(FigureProblem, match="is empty"):
        print_figure("out.png")
    ax.plot([0, 1], [1, 0])
    print_figure("out.png")
    assert drawn == [("out.png",)]
