import pytest
import torch

from hetero_tutorial.notebook.exercises import check


def test_check_accepts_an_equal_answer_and_returns_it(capsys):
    assert check(lambda x: x * 2.0, lambda x: x + x, 1.5) == 3.0
    assert "Correct" in capsys.readouterr().out


def test_check_compares_nested_structures_and_tensors():
    expected = {"a": [1.0, torch.ones(2)], "b": None}
    check(lambda: {"a": [1.0 + 1e-9, torch.ones(2)], "b": None}, lambda: expected)
    with pytest.raises(AssertionError, match="Not yet"):
        check(lambda: {"a": [1.0, torch.zeros(2)], "b": None}, lambda: expected)
    with pytest.raises(AssertionError):
        check(lambda: {"a": [1.0]}, lambda: expected)


def test_a_stub_is_reported_as_not_attempted_with_its_hint(capsys):
    def stub():
        raise NotImplementedError("Exercise: add one")

    assert check(stub, lambda: 1) is None
    assert "Not attempted yet (hint: Exercise: add one)" in capsys.readouterr().out
