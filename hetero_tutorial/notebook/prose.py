"""Prose for the machine at hand: paragraphs about the GPU case only where they tell something.

Most learners have no GPU. A paragraph that narrates what a GPU would show ("on a GPU,
look for the red towers ...") describes a machine they do not have, and a promise of
"reference records below" that do not exist breaks trust in the numbers around it. So a
notebook writes such paragraphs as ``gpu_paragraph(text)`` in a code cell: on a machine
with an accelerator, or once ``data/reference/`` holds records from one, the paragraph
is shown as Markdown; elsewhere a notebook's GPU paragraphs collapse into one line,
shown at the first of them, that says where the GPU case is told.
"""

from __future__ import annotations

import textwrap
from functools import cache

from IPython.display import Markdown, display

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.results import load_references

POINTER = (
    "*No GPU here and no GPU machine's records yet: this notebook's paragraphs about the GPU "
    "case stay in their folded `gpu_paragraph` cells until one is committed.*"
)
"""The one line that stands for a notebook's GPU paragraphs on a machine without either."""

_pointed = False


@cache
def gpu_story_here() -> bool:
    """Whether this machine has an accelerator, or reference records from one exist."""
    return accelerator() is not None or bool(load_references(with_accelerator=True))


def gpu_paragraph(text: str) -> None:
    """Show ``text`` (Markdown) where the GPU case can be seen, else the one-line pointer
    once per notebook (kernel), then nothing."""
    global _pointed
    if gpu_story_here():
        display(Markdown(textwrap.dedent(text).strip()))
    elif not _pointed:
        _pointed = True
        display(Markdown(POINTER))
