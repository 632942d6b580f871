"""Where the repository's folders are, and paths printed relative to it.

Printing ``build/profiles/x.svg`` instead of ``/home/ana/hetero-tutorial/build/...``
keeps a learner's home folder out of notebooks and records, and records travel.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parents[2]
"""The repository: the folder holding ``hetero_tutorial/``, ``notebooks/`` and ``data/``."""
BUILD_DIR = REPO_DIR / "build"
"""Generated files (executed notebooks, profiles), ignored by git."""


def display_path(path: str | Path) -> str:
    """``path`` relative to the repository when inside it (so records travel), else absolute."""
    path = Path(path).resolve()
    return str(path.relative_to(REPO_DIR)) if path.is_relative_to(REPO_DIR) else str(path)


def private_paths() -> list[str]:
    """Absolute paths that would give away this machine's layout in what a learner reads
    (notebook outputs, the book's pages): the repository, the Python environment, the home
    folder; longest first."""
    found = {str(REPO_DIR), sys.prefix, sys.base_prefix, os.path.expanduser("~")}
    return sorted((p for p in found if len(p) > 1), key=len, reverse=True)
