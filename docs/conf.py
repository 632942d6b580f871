"""Sphinx's settings for the book (``python -m tools.docs book`` assembles its pages).

Every choice here keeps the pages whole offline: notebooks are shown as they were
executed (MyST-NB runs nothing), formulas are MathML written at build time, no widget
script is loaded from a CDN, and Furo's files ship in its wheel.
"""

import sys
from pathlib import Path

# The formulas' renderer is one of the repository's tools (tools/docs/book_math.py), which
# no installed package holds: Sphinx imports it from the repository's root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

project = "hetero-tutorial"
copyright = "2026, hetero-tutorial contributors (MIT License)"
html_title = "hetero-tutorial: CPU or GPU for deep RL?"
extensions = ["myst_nb", "tools.docs.book_math"]

nb_execution_mode = "off"  # the notebooks ran before: `make run` or `make test`
nb_ipywidgets_js = {}  # MyST-NB's default loads require.js and the widget manager from CDNs
nb_merge_streams = True
nb_render_markdown_format = "gfm"  # the package prints its tables as Markdown: GFM has tables
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3  # the glossary's terms are headings: docs/glossary.md#iqr
myst_heading_slug_func = "github"  # the same anchors as on GitHub

html_theme = "furo"
html_static_path = ["_static"]
html_css_files = ["book.css"]  # printed outputs wrap at the content column
smartquotes = False  # "--" stays two hyphens: commands in prose copy and paste as written
html_favicon = "favicon.svg"  # else a browser asks the server for /favicon.ico, and gets a 404
html_math_renderer = "mathml"
html_copy_source = False  # the executed notebooks are big; the pages are what is read
html_show_sourcelink = False
language = "en"
