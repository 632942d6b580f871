"""Self-checking exercises: compare a learner's function with the package's solution.

In a notebook the exercise cell defines the learner's function (a stub that
raises ``NotImplementedError`` until it is filled in, which :func:`check` reports
as not attempted yet) and calls :func:`check`. A wrong answer raises; the cell is
tagged ``raises-exception`` so the notebook still runs. The solutions live in
:mod:`hetero_tutorial.notebook.solutions` and are tested.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch


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
    learner: Callable[..., Any],
    solution: Callable[..., Any],
    *args: Any,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    **kwargs: Any,
) -> Any:
    """Call both functions on the same inputs; print "Correct" or raise with both answers.

    Returns the learner's answer so the notebook can go on using it (None while the
    learner's function is still the stub that raises ``NotImplementedError``).
    """
    expected = solution(*args, **kwargs)
    try:
        got = learner(*args, **kwargs)
    except NotImplementedError as stub:
        hint = f" (hint: {stub})" if str(stub) else ""
        print(f"Not attempted yet{hint}: replace the raise with your code and run the cell again.")
        return None
    if not _same(got, expected, rtol, atol):
        raise AssertionError(f"Not yet: your function returned {got!r}; expected {expected!r}.")
    print(f"Correct: {got!r}")
    return got
