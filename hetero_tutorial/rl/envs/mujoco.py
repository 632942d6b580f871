"""MuJoCo's HalfCheetah-v5, for GAIL and its expert: the one place that knows its version.

MuJoCo's numerics move between releases (an expert's return is a tolerance, never a bit
pattern), and 4.0 split its distribution, so the series pins one release
(:data:`MUJOCO_VERSION`, the ``mujoco`` extra in ``pyproject.toml``) and says in one line
how to get it where it is missing or another one is installed.
"""

from __future__ import annotations

import gymnasium as gym

from hetero_tutorial.core.errors import UsageError

HALFCHEETAH = "HalfCheetah-v5"
MUJOCO_VERSION = "3.3.7"
"""The release ``constraints.txt`` pins (see the ``mujoco`` extra in ``pyproject.toml``)."""
INSTALL = 'pip install -c constraints.txt -e ".[mujoco]"'
"""The command that installs it (``make setup`` runs it too)."""


def mujoco_problem() -> str | None:
    """Why HalfCheetah cannot run as the series recorded it here (one line), or None."""
    try:
        import mujoco
    except ImportError as error:
        return f"MuJoCo is not installed ({error}); run: {INSTALL}"
    if mujoco.__version__ != MUJOCO_VERSION:
        return (
            f"MuJoCo {mujoco.__version__} is installed; the series records HalfCheetah with "
            f"{MUJOCO_VERSION}; run: {INSTALL}"
        )
    return None


def make_halfcheetah() -> gym.Env:
    """``HalfCheetah-v5``, or a one-line error with the command that fixes the install."""
    problem = mujoco_problem()
    if problem is not None:
        raise UsageError(problem)
    return gym.make(HALFCHEETAH)
