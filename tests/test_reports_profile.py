"""Notebook 02's inclusive-share exercise: checkable even where py-spy cannot record."""

from hetero_tutorial.notebook import profile_report
from hetero_tutorial.notebook.exercises import check
from hetero_tutorial.notebook.solutions import solution


def test_without_a_profile_the_exercise_is_checked_on_the_hand_made_one(capsys):
    cases = profile_report.inclusive_cases(None)
    assert [function for _, function in cases] == ["f", "g", "main"]
    assert [solution("inclusive_share")(*case) for case in cases] == [0.5, 0.75, 1.0]
    assert check("inclusive_share", solution("inclusive_share"), cases) == 0.5
    assert "Correct on all 3 case(s)" in capsys.readouterr().out
