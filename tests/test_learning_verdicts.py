"""The one rule for learning verdicts: five seeds per arm, runs that learned, ranges apart."""

import pytest

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.studies.learning import best_and_final, compare_learning, returns_phrase


def test_one_seed_per_arm_gives_no_verdict_whatever_the_gap():
    verdict = compare_learning({"lag 0": [500.0], "lag 1": [20.0]}, "CartPole-v1", quick=False)
    assert verdict.kind == "no verdict" and "1 seed per arm" in verdict.sentence


def test_runs_below_the_floor_are_not_judged_and_quick_mode_says_so():
    arms = {"lag 0": [-500.0, -490.0, -485.0, -482.0, -480.0], "lag 1": [-500.0] * 5}
    full = compare_learning(arms, "Acrobot-v1", quick=False)
    quick = compare_learning(arms, "Acrobot-v1", quick=True)
    assert full.kind == quick.kind == "no verdict"
    assert full.sentence.startswith("no verdict (neither learned") and "-300" in full.sentence
    assert quick.sentence.startswith("quick mode: no learning verdict")


def test_separate_ranges_name_the_better_arm_and_overlapping_ones_name_no_difference():
    high, low = [480.0, 485.0, 490.0, 495.0, 500.0], [200.0, 220.0, 250.0, 280.0, 300.0]
    better = compare_learning({"a": high, "b": low}, "CartPole-v1")
    assert better.kind == "better" and better.sentence.startswith("a learned better than b")
    reversed_ = compare_learning({"b": low, "a": high}, "CartPole-v1")
    assert reversed_.sentence.startswith("a learned better than b")
    same = compare_learning(
        {"a": [300.0, 350.0, 400.0, 450.0, 500.0], "b": [250.0, 300.0, 400.0, 450.0, 480.0]},
        "CartPole-v1",
    )
    assert same.kind == "no difference" and "no worse" not in same.sentence
    assert "5 seeds each" in same.sentence
    # ranges apart from two or three seeds each: chance does that one time in three or ten
    for n in (2, 3):
        few = compare_learning({"a": high[:n], "b": low[:n]}, "CartPole-v1")
        assert few.kind == "no verdict" and "a learning verdict needs 5 or more" in few.sentence


def test_a_task_without_a_floor_and_a_third_arm_are_refused():
    with pytest.raises(UsageError, match="no learning floor"):
        compare_learning({"a": [1.0, 2.0], "b": [1.0, 2.0]}, "MountainCar-v0")
    with pytest.raises(UsageError, match="two arms"):
        compare_learning({"a": [1.0], "b": [1.0], "c": [1.0]}, "CartPole-v1")


def test_best_and_final_returns_are_reported_together():
    evaluations = [(0, 20.0), (8192, 500.0), (16384, 237.3)]
    assert best_and_final(evaluations) == (500.0, 237.3)
    assert returns_phrase(evaluations) == "best greedy return 500.0 (at 8,192 steps), final 237.3"
