"""Small tables for notebooks: Markdown that renders in JupyterLab and reads as text in a log."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from IPython.display import Markdown

Formatter = Callable[[Any], str]


def markdown_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Mapping[str, str] | Sequence[str],
    formats: Mapping[str, Formatter] | None = None,
) -> Markdown:
    """A Markdown table of ``rows``; ``columns`` maps row keys to headers (or lists the keys).

    ``formats`` gives a function per key that turns a value into text (default ``str``;
    None and missing values show as an em dash).
    """
    headers = dict(columns) if isinstance(columns, Mapping) else {key: key for key in columns}
    formats = formats or {}

    def cell(row: Mapping[str, Any], key: str) -> str:
        value = row.get(key)
        if value is None:
            return "—"
        return formats.get(key, str)(value)

    lines = [
        "| " + " | ".join(headers.values()) + " |",
        "|" + "---|" * len(headers),
        *("| " + " | ".join(cell(row, key) for key in headers) + " |" for row in rows),
    ]
    return Markdown("\n".join(lines))
