"""Self-checking exercises: compare a learner's function with the package's solution.

Every exercise asks for a prediction first (write down what you expect, then run).
The exercise cell defines the learner's function (a stub that raises
``NotImplementedError`` until it is filled in, which :func:`check` reports as not
attempted yet) and calls ``check("name", my_function, cases)``, which compares it with
the solution on several inputs. A wrong answer raises, saying *how* it differs (too
high, about 1000x off: the units?, the wrong shape, a missing key), never what the
right value is; the cell is tagged ``raises-exception`` so the notebook still runs.
``hint("name")`` climbs the exercise's hint ladder one rung per call: first the idea,
then the shape of the code, never the formula. The solutions and hints live in
:mod:`hetero_tutorial.notebook.solutions`, are looked up by name (never imported by the
notebook) and are tested.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.plural import counted
from hetero_tutorial.notebook.solutions import hints, solution


def _same(got: Any, expected: Any, rtol: float, atol: float) -> bool:
    return _difference(got, expected, rtol, atol) is None


def _kind(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    if isinstance(value, bool):
        return "a bool"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a {type(value).__name__}"


def _how_far(got: float, expected: float) -> str:
    """How a wrong number differs from the right one, without saying the right one."""
    if expected != 0 and got != 0 and math.copysign(1, got) != math.copysign(1, expected):
        if math.isclose(abs(got), abs(expected), rel_tol=1e-6):
            return "the right size with the wrong sign"
        return "of the wrong sign"
    if expected == 0:
        return "not zero, where the solution gives zero"
    if got == 0:
        return "zero, where the solution does not give zero"
    ratio = abs(got / expected)
    side = "too high" if abs(got) > abs(expected) else "too low"
    factor = max(ratio, 1 / ratio)
    for power in (1e9, 1e6, 1e3, 1e2, 10):
        if math.isclose(factor, power, rel_tol=0.05):
            units = "check the units (s or ms? bytes or KiB?)"
            return f"{side} by a factor of about {power:,.0f}: {units}"
    if factor < 1.5:
        return f"a little {side} (within {factor - 1:.0%})"
    return f"{side}, by {factor:.1f}x"


def _difference(got: Any, expected: Any, rtol: float, atol: float) -> str | None:
    """None if ``got`` matches ``expected``; else how it differs, without the right value."""
    if got is None and expected is not None:
        return "it is None: does the function end with a return?"
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"it is {_kind(got)}, where a tensor is expected"
        if got.shape != expected.shape:
            return f"it has shape {tuple(got.shape)}, which is not the expected shape"
        g, e = got.float().cpu(), expected.float().cpu()
        close = torch.isclose(g, e, rtol=rtol, atol=atol)
        if bool(close.all()):
            return None
        wrong = (~close).nonzero()[0].tolist()
        where = tuple(wrong) if len(wrong) > 1 else wrong[0]
        first = _how_far(float(g[tuple(wrong)]), float(e[tuple(wrong)]))
        count = f"{int((~close).sum())} of {close.numel()} elements differ"
        return f"{count}; at index {where} it is {first}"
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"it is {_kind(got)}, where a dict is expected"
        missing, extra = expected.keys() - got.keys(), got.keys() - expected.keys()
        if missing or extra:
            parts = [f"{counted(len(missing), 'key')} missing"] if missing else []
            parts += [f"unexpected key(s) {sorted(extra, key=str)}"] if extra else []
            return "its keys differ: " + ", ".join(parts)
        for key in expected:
            found = _difference(got[key], expected[key], rtol, atol)
            if found:
                return f"at key {key!r}: {found}"
        return None
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            return f"it is {_kind(got)}, where a {type(expected).__name__} is expected"
        if len(got) != len(expected):
            return f"it has {counted(len(got), 'item')}, which is not the expected count"
        for index, (g, e) in enumerate(zip(got, expected, strict=True)):
            found = _difference(g, e, rtol, atol)
            if found:
                return f"item {index}: {found}"
        return None
    if isinstance(expected, float) or isinstance(got, float):
        try:
            g, e = float(got), float(expected)
        except (TypeError, ValueError):
            return f"it is {_kind(got)}, where a number is expected"
        return None if math.isclose(g, e, rel_tol=rtol, abs_tol=atol) else f"it is {_how_far(g, e)}"
    if got == expected:
        return None
    if isinstance(expected, bool) or isinstance(got, bool):
        return "it is the other truth value"
    if isinstance(expected, int) and isinstance(got, int):
        return (
            "it is off by one" if abs(got - expected) == 1 else f"it is {_how_far(got, expected)}"
        )
    return f"it is {_kind(got)}, not what the solution gives"


def check(
    name: str,
    learner: Callable[..., Any],
    cases: Sequence[tuple[Any, ...]],
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> Any:
    """Call the learner's function and exercise ``name``'s solution on every case; print
    "Correct" or raise with the first case where they differ, saying how (never the
    solution's value).

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
        except NotImplementedError:
            print(
                "Not attempted yet: replace the raise with your code and run the cell again "
                f"(stuck? hint({name!r}) gives a first hint)."
            )
            return None
        found = _difference(got, expected, rtol, atol)
        if found:
            raise AssertionError(
                f"Not yet, on case {number} of {len(cases)}: your function returned {got!r}, "
                f"and {found}. (hint({name!r}) helps, one step at a time.)"
            )
        answers.append(got)
    print(
        f"Correct on all {counted(len(cases), 'case')}. On the first, this machine's: "
        f"{answers[0]!r}"
    )
    return answers[0]


UNSOLVED = "Solve the exercise above, then run this cell to compare with your guess."
"""What a reveal cell prints while its exercise is unsolved (``check`` returned None): the
answer waits until the learner has one of their own."""

_rungs_shown: dict[str, int] = {}


def hint(name: str) -> None:
    """Print the next rung of exercise ``name``'s hint ladder (the idea first, then the
    shape of the code); after the last, say that the solution is in the package."""
    ladder = hints(name)
    shown = _rungs_shown.get(name, 0)
    if shown < len(ladder):
        _rungs_shown[name] = shown + 1
        print(f"Hint {shown + 1} of {len(ladder)}: {ladder[shown]}")
    else:
        print(
            f"That was the last hint. The solution is hetero_tutorial/notebook/solutions/, "
            f"function {name}: read it only after another try."
        )


def prediction_line(
    what: str,
    guess: Any,
    found: Any,
    show: Callable[[Any], str] = str,
    tolerance: float = 0.2,
    variable: str = "MY_GUESS",
) -> str:
    """The learner's prediction (a notebook's ``MY_GUESS``, or the cell's ``variable``) beside
    what this machine measured.

    ``what`` names the quantity, ``found`` is its measured value (None: not measured yet,
    or the exercise that computes it is not solved), ``show`` formats a value. A number is
    as predicted within ``tolerance`` (relative), else the line says how far off the guess
    was; anything else, or a number with ``tolerance`` 0 (a count, a lag), is as predicted
    when it is equal. The point is the comparison a
    prediction exists for: written down before the screen showed the answer.
    """
    if found is None:
        return f"{what}: not measured yet (run the cells above), so nothing to set beside a guess."
    if guess is None:
        return f"{what}: {show(found)}. (No guess written in {variable}.)"
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (guess, found))
    if numbers and found and tolerance > 0:
        ratio = guess / found
        if abs(ratio - 1) <= tolerance:
            verdict = f"within {tolerance:.0%} of your guess of {show(guess)}"
        else:
            verdict = f"your guess of {show(guess)} was {ratio:.2g}x it"
        return f"{what}: {show(found)}, {verdict}."
    same = guess == found
    verdict = "as you predicted" if same else f"not {show(guess)}, as you predicted"
    return f"{what}: {show(found)}, {verdict}."
