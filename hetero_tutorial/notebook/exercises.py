"""Self-checking exercises: compare a learner's function with the package's solution.

Every exercise asks for a prediction first (write down what you expect, then run).
The exercise cell defines the learner's function (a stub that raises
``NotImplementedError`` until it is filled in, which :func:`check` reports as not
attempted yet) and calls ``check("name", my_function, cases)``, which compares it with
the solution on several inputs. A wrong answer raises; the cell is tagged
``raises-exception`` so the notebook still runs. The solutions live in
:mod:`hetero_tutorial.notebook.solutions`, are looked up by name (never imported by the
notebook) and are tested.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.notebook.solutions import solution


def _same(got: Any, expected: Any, rtol: float, atol: float) -> bool:
    if isinstance(expected, torch.Tensor):
        return (
            isinstance(got, torch.Tensor)
            and got.shape == expected.shape
            and bool(
                torch.allclose(got.float().cpu(), expected.float().cpu(), rtol=rtol, atol=atol)
            )
        )
    if isinstance(expected, dict):
        return (
            isinstance(got, dict)
            and got.keys() == expected.keys()
            and all(_same(got[k], expected[k], rtol, atol) for k in expected)
        )
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(got, (list, tuple))
            and len(got) == len(expected)
            and all(_same(g, e, rtol, atol) for g, e in zip(got, expected, strict=True))
        )
    if isinstance(expected, float) or isinstance(got, float):
        try:
            return math.isclose(float(got), float(expected), rel_tol=rtol, abs_tol=atol)
        except (TypeError, ValueError):
            return False
    return got == expected


def check(
    name: str,
    learner: Callable[..., Any],
    cases: Sequence[tuple[Any, ...]],
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> Any:
    """Call the learner's function and exercise ``name``'s solution on every case; print
    "Correct" or raise with the first case where they differ.

    ``cases``: the arguments of each call, as tuples (the notebook's own measurement
    first, then inputs that test the corners). The solution is looked up by name
    (:func:`hetero_tutorial.notebook.solutions.solution`), so the notebook never imports
    it. Returns the learner's answer on the first case, so the notebook can go on using
    it (None while the learner's function is still the stub that raises
    ``NotImplementedError``).
    """
    solve = solution(name)
    if not cases:
        raise UsageError(f"check({name!r}, ...) needs at least one case")
    answers = []
    for number, args in enumerate(cases, start=1):
        expected = solve(*args)
        try:
            got = learner(*args)
        except NotImplementedError as stub:
            hint = f" (hint: {stub})" if str(stub) else ""
            print(
                f"Not attempted yet{hint}: replace the raise with your code and run the cell again."
            )
            return None
        if not _same(got, expected, rtol, atol):
            raise AssertionError(
                f"Not yet, on case {number} of {len(cases)}: your function returned {got!r}; "
                f"expected {expected!r}."
            )
        answers.append(got)
    print(f"Correct on all {len(cases)} case(s). On the first, this machine's: {answers[0]!r}")
    return answers[0]
