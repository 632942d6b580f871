import pytest
import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.notebook import exercises, solutions
from hetero_tutorial.notebook.exercises import _same, check


@pytest.fixture
def doubling(monkeypatch):
    """An exercise named ``double`` whose solution is ``x + x``."""
    monkeypatch.setitem(solutions.SOLUTIONS, "double", "claims_ledger")
    monkeypatch.setattr(exercises, "solution", lambda name: lambda x: x + x)


def test_check_runs_every_case_and_returns_the_first_answer(doubling, capsys):
    assert check("double", lambda x: x * 2.0, [(1.5,), (0.0,), (-3.0,)]) == 3.0
    assert "Correct on all 3 case(s)" in capsys.readouterr().out


def test_check_names_the_first_case_that_differs(doubling):
    wrong_at_zero = lambda x: x * 2.0 if x else 1.0  # noqa: E731
    with pytest.raises(AssertionError, match="case 2 of 3"):
        check("double", wrong_at_zero, [(1.5,), (0.0,), (2.0,)])


def test_a_stub_is_reported_as_not_attempted_with_its_hint(doubling, capsys):
    def stub(x):
        raise NotImplementedError("Exercise: add one")

    assert check("double", stub, [(1,)]) is None
    assert "Not attempted yet (hint: Exercise: add one)" in capsys.readouterr().out


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
