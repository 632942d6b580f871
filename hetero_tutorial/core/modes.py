"""Quick mode: smaller budgets for CI and impatient learners, never fewer code paths.

``HETERO_TUTORIAL_QUICK=1`` in the environment (``make test`` sets it) turns it
on. Notebooks read it in their ``parameters`` cell through :func:`quick_mode`
and pick their budgets with :func:`by_mode`.
"""

from __future__ import annotations

import os
from typing import TypeVar

from hetero_tutorial.core.errors import UsageError

QUICK_ENV_VAR = "HETERO_TUTORIAL_QUICK"

T = TypeVar("T")


def quick_mode() -> bool:
    """True when ``HETERO_TUTORIAL_QUICK`` is set to 1/true/yes (case-insensitive)."""
    value = os.environ.get(QUICK_ENV_VAR, "").strip().lower()
    if value in ("", "0", "false", "no"):
        return False
    if value in ("1", "true", "yes"):
        return True
    raise UsageError(f"{QUICK_ENV_VAR}={value!r} is not understood; use 1 (quick) or 0 (full).")


def by_mode(quick: T, full: T) -> T:
    """``quick`` in quick mode, ``full`` otherwise: one knob, two budgets, same code path."""
    return quick if quick_mode() else full
