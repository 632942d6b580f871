"""What a learner reads, counted in words: a notebook's prose, and what its cells print.

``run`` records the printed words of every executed notebook beside its run time
(:func:`printed_words`), so that a plan for a class can price the reading as well as the
waiting; the repository's tools (``tools/docs/``) turn both counts into minutes.

A word is whatever whitespace separates, a table's bars and a folded ``<details>`` block
included: a learner scrolls past a table's every cell and may open every fold, so the count
errs long, never short.
"""

from __future__ import annotations

import re

import nbformat

TAG = re.compile(r"<[^>]+>")


def _words(text: str) -> int:
    return len(TAG.sub(" ", text).split())


def prose_words(notebook: nbformat.NotebookNode) -> int:
    """The words of a notebook's markdown cells, folded blocks included."""
    return sum(len(c.source.split()) for c in notebook.cells if c.cell_type == "markdown")


def printed_words(notebook: nbformat.NotebookNode) -> int:
    """The words an executed notebook's cells print: text, tables, source listings, folded
    blocks (a figure's text fallback and a progress bar's not counted)."""
    words = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                words += len(output.get("text", "").split())
            data = output.get("data", {})
            shown = data.get("text/markdown") or data.get("text/html")
            if shown is None and not data.get("image/png") and not data.get("image/svg+xml"):
                shown = data.get("text/plain")
            if shown:
                words += _words("".join(shown))
    return words
