"""The book's formulas as MathML, written at build time: a Sphinx math renderer.

Sphinx's usual renderer loads MathJax from a CDN when the page opens, so a page read
offline (a workshop handout, a laptop on a train) would show raw LaTeX and a failed
request. Browsers draw MathML themselves, so the book converts every formula once,
while it is built, with latex2mathml, and the pages need nothing from outside.
Sphinx loads this module as an extension (``docs/conf.py``).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.application import Sphinx
from sphinx.writers.html5 import HTML5Translator

RENDERER = "mathml"
"""The name ``html_math_renderer`` selects this renderer by."""


def _visit_inline(translator: HTML5Translator, node: nodes.math) -> None:
    translator.body.append(convert(node.astext()))
    raise nodes.SkipNode


def _visit_block(translator: HTML5Translator, node: nodes.math_block) -> None:
    translator.body.append(f'<div class="math">{convert(node.astext(), display="block")}</div>')
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the renderer with Sphinx (``html_math_renderer = "mathml"`` selects it)."""
    app.add_html_math_renderer(
        RENDERER, inline_renderers=(_visit_inline, None), block_renderers=(_visit_block, None)
    )
    return {"parallel_read_safe": True, "parallel_write_safe": True}
