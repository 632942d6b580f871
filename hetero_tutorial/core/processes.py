"""Processes this package starts never outlive the process that started them.

:func:`die_with_parent` is what every child this package launches calls first (py-spy's
target, the buffer study's workers, the GPU reference run's steps): a parent killed with
SIGKILL runs no handler, so nothing else would end its children.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1
"""prctl's option: the signal a process gets when its parent dies (linux/prctl.h)."""


def die_with_parent() -> None:
    """Ask Linux for SIGKILL when this process's parent dies (``PR_SET_PDEATHSIG``).
    Elsewhere, nothing happens."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def own_group_dying_with_parent() -> None:
    """In a child, before it runs: a session (so a process group) of its own, which its
    launcher can end as a tree, and :func:`die_with_parent`. A ``preexec_fn``."""
    os.setsid()
    die_with_parent()
