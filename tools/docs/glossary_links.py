"""Which glossary terms a notebook uses first and does not link to.

Every term of ``docs/glossary.md`` (one ``##`` heading each) should be linked, as
``[word](../docs/glossary.md#anchor)``, from the first notebook of the series whose prose
(its Markdown cells) uses it, so a learner meets the definition where the word first
appears. :func:`missing_links` lists, per notebook, the terms it uses first without a
link; ``python -m tools.docs glossary-links`` prints them.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from hetero_tutorial.core.paths import REPO_DIR
from tools.docs.cards import RUN_TIME

GLOSSARY = REPO_DIR / "docs" / "glossary.md"
NOTEBOOKS = REPO_DIR / "notebooks"
_LINK_TARGET = re.compile(r"\]\([^)]*\)")


def anchor(term: str) -> str:
    """GitHub's anchor for a heading (the book's too): lower case, spaces as hyphens, other
    punctuation but ``_`` and ``-`` dropped."""
    return re.sub(r"[^\w\- ]", "", term.lower()).replace(" ", "-")


def terms(glossary: Path = GLOSSARY) -> list[str]:
    """The glossary's terms, in its order."""
    return re.findall(r"^## (.+)$", glossary.read_text(), re.M)


def _words(term: str) -> list[str]:
    """The words that stand for ``term`` in prose: "Pattern A, pattern B" is two."""
    return (
        [w for w in re.split(r", | and ", term) if w] if "," in term or " and " in term else [term]
    )


def _pattern(term: str) -> re.Pattern[str]:
    forms = []
    for word in _words(term):
        stem = re.escape(word)
        plural = stem[:-1] + "(?:y|ies)" if word.endswith("y") else stem + "(?:s|es)?"
        forms.append(plural)
    return re.compile(r"(?<![\w\-/#.])(?:" + "|".join(forms) + r")(?![\w\-])", re.I)


_RUN_TIME_LINE = re.compile("^" + re.escape(RUN_TIME) + ".*$", re.M)
"""The opening card's generated run-time line (tools/docs/cards.py), alike in every notebook."""


def _prose(notebook: nbformat.NotebookNode) -> str:
    """A notebook's own Markdown, without link targets (an anchor is not a use) and without
    the generated run-time line."""
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    return _LINK_TARGET.sub("]", _RUN_TIME_LINE.sub("", text))


def _links(notebook: nbformat.NotebookNode) -> set[str]:
    text = "\n".join(c.source for c in notebook.cells)
    return set(re.findall(r"glossary(?:\.md|\.html)?#([\w\-]+)", text))


def missing_links(
    notebooks: list[Path] | None = None, glossary: Path = GLOSSARY
) -> dict[str, list[str]]:
    """Per notebook (file name), the glossary terms it is the first to use and does not link.

    A term an earlier notebook already links (under other words: "thread count" for
    *threads*) needs no second link where its own word first appears.
    """
    paths = notebooks or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    read = [(p.name, nbformat.read(p, as_version=4)) for p in paths]
    found: dict[str, list[str]] = {name: [] for name, _ in read}
    for term in terms(glossary):
        pattern, target = _pattern(term), anchor(term)
        for name, notebook in read:
            if target in _links(notebook):
                break
            if pattern.search(_prose(notebook)):
                found[name].append(term)
                break
    return found


def main() -> int:
    """Print, per notebook, the terms it uses first without a link (``python -m tools.docs
    glossary-links``)."""
    for name, missing in missing_links().items():
        print(
            f"{name}: " + (", ".join(missing) if missing else "every term it uses first is linked")
        )
    return 0
