"""Our own code, shown in a notebook beside the recap it implements.

:func:`source` renders a function or class as a Markdown code block headed by its file
and line numbers, read from the installed package with ``inspect``: the excerpt is
always the code that runs, never a copy that drifts.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from typing import Any

from IPython.display import Markdown

from hetero_tutorial.core.paths import display_path


def _docstring_lines(text: list[str]) -> range:
    """The indices of the docstring's lines in a function's source (empty if it has none)."""
    # the signature's last line ends with ":", before any comment (e.g. ``# fmt: skip``)
    body = next(i for i, line in enumerate(text) if line.split("#")[0].rstrip().endswith(":"))
    first = body + 1
    if first >= len(text) or not text[first].strip().startswith(('"""', "'''")):
        return range(0)
    quote = text[first].strip()[:3]
    if text[first].count(quote) >= 2:
        return range(first, first + 1)
    last = next(i for i in range(first + 1, len(text)) if quote in text[i])
    return range(first, last + 1)


def source(obj: Callable[..., Any] | type, docstring: bool = False) -> Markdown:
    """``obj``'s source as Markdown, headed by its file and lines; its docstring left out
    unless ``docstring`` (the recap beside it says the same in prose)."""
    obj = inspect.unwrap(obj)  # a decorated function's own code, not its decorator's wrapper
    text, start = inspect.getsourcelines(obj)
    skipped = range(0) if docstring else _docstring_lines(text)
    shown = textwrap.dedent("".join(line for i, line in enumerate(text) if i not in skipped))
    where = f"`{display_path(inspect.getsourcefile(obj))}`, lines {start}-{start + len(text) - 1}"
    where += "" if docstring or not skipped else " (docstring left out)"
    return Markdown(f"{where}:\n\n```python\n{shown.rstrip()}\n```")
