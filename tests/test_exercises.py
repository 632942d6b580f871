import pytest
import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.notebook import exercises, solutions
from hetero_tutorial.notebook.exercises import _same, check
from hetero_tutorial.notebook.solutions import SOLUTIONS, hints, solution


@pytest.fixture
def doubling(monkeypatch):
    """An exercise named ``double`` whose solution is ``x + x``."""
    monkeypatch.setitem(solutions.SOLUTIONS, "double", "claims_ledger")
    monkeypatch.setattr(exercises, "solution", lambda name: lambda x: x + x)


def test_check_runs_every_case_and_returns_the_first_answer(doubling, capsys):
    assert check("double", lambda x: x * 2.0, [(1.5,), (0.0,), (-3.0,)]) == 3.0
    assert "Correct on all 3 cases" in capsys.readouterr().out


def test_check_names_the_first_case_that_differs(doubling):
    wrong_at_zero = lambda x: x * 2.0 if x else 1.0  # noqa: E731
    with pytest.raises(AssertionError, match="case 2 of 3"):
        check("double", wrong_at_zero, [(1.5,), (0.0,), (2.0,)])


def test_answers_compare_nested_structures_and_tensors():
    expected = {"a": [1.0, torch.ones(2)], "b": None}
    assert _same({"a": [1.0 + 1e-9, torch.ones(2)], "b": None}, expected, 1e-6, 1e-9)
    assert not _same({"a": [1.0, torch.zeros(2)], "b": None}, expected, 1e-6, 1e-9)
    assert not _same({"a": [1.0]}, expected, 1e-6, 1e-9)


def test_every_exercise_has_a_solution_and_notebooks_never_import_one():
    import json
    import re
    from pathlib import Path

    for name in solutions.SOLUTIONS:
        assert callable(solutions.solution(name)), name
    with pytest.raises(UsageError, match="no exercise"):
        solutions.solution("nope")
    for path in sorted(Path(__file__).parents[1].glob("notebooks/*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert "solutions" not in code, f"{path.name} imports a solution"
        for name in solutions.SOLUTIONS:  # a check names the exercise; nothing else uses it
            called = re.search(rf"(?<![\w.]){name}\(", code)
            assert called is None, f"{path.name} calls the solution {name}"


def _message(learner, cases, name="ring_slots"):
    with pytest.raises(AssertionError) as raised:
        exercises.check(name, learner, cases)
    return str(raised.value)


def test_a_wrong_number_says_how_far_and_in_which_direction_but_not_the_answer(capsys):
    expected = solution("speedup_and_time_saved")(72.0, 53.0)
    message = _message(lambda b, a: (b / a * 1000, 1 - a / b), [(72.0, 53.0)],
                       "speedup_and_time_saved")  # fmt: skip
    assert "item 0" in message and "too high by a factor of about 1,000" in message
    assert "units" in message
    assert f"{expected[0]:.4}" not in message  # the wrong item's right value is not told


def test_wrong_shapes_lengths_keys_and_a_missing_return_are_named():
    assert "off by one" in _message(lambda s, c, n: [s + 1 + i for i in range(c)], [(3, 1, 10)])
    assert "not the expected count" in _message(lambda s, c, n: [s], [(3, 4, 10)])
    assert "does the function end with a return" in _message(lambda *a: None, [(3, 1, 10)])
    batch = (torch.zeros(3), torch.zeros(3), torch.zeros(3), torch.zeros(3), 0.9)
    shape = _message(lambda *a: torch.zeros(5), [batch], "td_target")
    assert "shape (5,), which is not the expected shape" in shape
    keys = _message(lambda rows, device="cpu": {1: 2}, [([], "cpu")], "best_batch_per_width")
    assert "unexpected key(s) [1]" in keys


def test_a_stub_points_to_the_hint_and_hints_climb_then_point_to_the_solution(capsys):
    def stub(*args):
        raise NotImplementedError("Exercise: your code here")

    assert exercises.check("ring_slots", stub, [(3, 2, 10)]) is None
    assert "hint('ring_slots')" in capsys.readouterr().out
    ladder = hints("ring_slots")
    for rung in ladder:
        exercises.hint("ring_slots")
        assert rung in capsys.readouterr().out
    exercises.hint("ring_slots")
    assert "last hint" in capsys.readouterr().out


@pytest.mark.parametrize("name", list(SOLUTIONS))
def test_every_exercise_has_a_two_rung_ladder_that_does_not_give_the_code(name):
    ladder = hints(name)
    assert len(ladder) == 2 and all(len(rung) > 40 for rung in ladder)
    assert all("return (" not in rung and " = " not in rung for rung in ladder)
