"""Where the repository's folders are, and paths printed relative to it.

Printing ``build/profiles/x.svg`` instead of ``/home/ana/hetero-tutorial/build/...``
keeps a learner's home folder out of notebooks and records, and records travel.
"""

from __future__ import annotations

from pathlib import Path

REPO_DIR = Path(__file__).resolve().parents[2]
"""The repository: the folder holding ``hetero_tutorial/``, ``notebooks/`` and ``data/``."""
BUILD_DIR = REPO_DIR / "build"
"""Generated files (executed notebooks, profiles), ignored by git."""


def display_path(path: str | Path) -> str:
    """``path`` relative to the repository when inside it (so records travel), else absolute."""
    path = Path(path).resolve()
    return str(path.relative_to(REPO_DIR)) if path.is_relative_to(REPO_DIR) else str(path)
