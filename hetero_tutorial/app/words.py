"""What a learner reads, counted in words: a notebook's prose, and what its cells print.

``run`` records the printed words of every executed notebook beside its run time
(:func:`printed_words`), so that a plan for a class can price the reading as well as the
waiting; the repository's tools (``tools/docs/``) turn both counts into minutes.
"""

from __future__ import annotations

import re

import nbformat

WORD = re.compile(r"[A-Za-z0-9][\w'.,-]*")
FOLDED = re.compile(r"<details>.*?</details>", re.DOTALL)
"""A folded block of a markdown cell: engineering detail a learner opens if they want it,
outside the reading budget."""
TAG = re.compile(r"<[^>]+>")


def prose_words(notebook: nbformat.NotebookNode) -> int:
    """The words of a notebook's markdown cells that a learner reads on the way through
    (folded ``<details>`` blocks left out)."""
    return sum(
        len(WORD.findall(FOLDED.sub("", c.source)))
        for c in notebook.cells
        if c.cell_type == "markdown"
    )


def printed_words(notebook: nbformat.NotebookNode) -> int:
    """The words an executed notebook's cells print: text, tables, source listings (a
    figure's text fallback and a progress bar's not counted)."""
    words = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                words += len(WORD.findall(output.get("text", "")))
            data = output.get("data", {})
            shown = data.get("text/markdown") or data.get("text/html")
            if shown is None and not data.get("image/png") and not data.get("image/svg+xml"):
                shown = data.get("text/plain")
            if shown:
                text = TAG.sub(" ", FOLDED.sub("", "".join(shown)))
                words += len(WORD.findall(text))
    return words
