"""A route to a free GPU: every notebook runs unchanged on a hosted Jupyter runtime (Colab).

Such a runtime has PyTorch and NumPy but not this package. So each notebook's first code
cell (right after its opening card) installs the package where it is missing, and does
nothing where it is installed: from a wheel file beside the notebook if there is one
(``hetero_tutorial-*.whl``, e.g. uploaded with it), else from the repository URL in
``pyproject.toml``'s ``[project.urls]``. :func:`install_cell` writes that cell; it is the
one place its logic lives, and ``python -m tools.docs install-cells`` puts its output
into every notebook (replacing an older copy). :func:`open_in_links` gives the "open in
Colab" links for the README and each of the book's notebook pages, from the same URL;
with no URL set there are none, and :data:`NO_URL` says what a learner does instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import tomllib

from hetero_tutorial.core.paths import REPO_DIR

PYPROJECT = REPO_DIR / "pyproject.toml"
INSTALL_TAG = "install-if-missing"
"""The tag of the install cell, so that inserting it again replaces it."""
URL_KEYS = ("Repository", "Source", "Homepage")
"""The ``[project.urls]`` entries read for the repository, in this order."""
NO_URL = (
    "On a hosted runtime (e.g. Colab): upload a notebook with the package's wheel beside it "
    "(`pip wheel --no-deps .` makes it); the notebook's first cell installs it."
)
"""What the README says where no repository URL gives "open in Colab" links: how a learner
runs a notebook there anyway (setting the URL is for maintainers: CONTRIBUTING.md)."""


def repository_url(pyproject: Path = PYPROJECT) -> str | None:
    """The repository's URL from ``[project.urls]``, or None where none is set."""
    urls = tomllib.loads(pyproject.read_text()).get("project", {}).get("urls", {})
    return next((urls[key].rstrip("/") for key in URL_KEYS if urls.get(key)), None)


def install_cell(url: str | None = None) -> str:
    """A notebook's install cell: install this package where it is missing, from a wheel
    beside the notebook, else from ``url`` (``pip install git+URL``); with neither, stop
    with a line that says what to do. Where the package is installed it does nothing."""
    if url:
        choose = f'    source = wheels[-1] if wheels else "git+{url}"\n'
    else:
        choose = (
            "    if not wheels:\n"
            "        sys.exit(\n"
            '            "hetero_tutorial is not installed: put its wheel "\n'
            '            "(hetero_tutorial-*.whl) beside this notebook, or pip install it"\n'
            "        )\n"
            "    source = wheels[-1]\n"
        )
    return (
        "# On a hosted runtime (e.g. Colab) without this package, install it; elsewhere nothing.\n"
        "import importlib.util\n"
        "import subprocess\n"
        "import sys\n"
        "from glob import glob\n"
        "\n"
        'if importlib.util.find_spec("hetero_tutorial") is None:\n'
        '    wheels = sorted(glob("hetero_tutorial-*.whl"))\n'
        f"{choose}"
        '    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", source])'
    )


def after_card(cells: list[nbformat.NotebookNode]) -> int:
    """Where a notebook's body starts: after its opening card (a first Markdown cell)."""
    return 1 if cells and cells[0].cell_type == "markdown" else 0


def insert_install_cell(path: Path, url: str | None = None) -> None:
    """Put :func:`install_cell` into the notebook at ``path`` as its first code cell, after
    the opening card (replacing an install cell already there)."""
    notebook = nbformat.read(path, as_version=4)
    cells = [c for c in notebook.cells if INSTALL_TAG not in c.metadata.get("tags", [])]
    cell = nbformat.v4.new_code_cell(install_cell(url))
    cell.metadata["tags"] = [INSTALL_TAG]
    first = after_card(cells)
    notebook.cells = [*cells[:first], cell, *cells[first:]]
    nbformat.write(notebook, path)


def open_in_links(notebooks: list[str], url: str | None = None) -> list[str]:
    """Markdown "open in Colab" links, one per notebook file name, for a GitHub ``url``
    (none for another host, or without a URL)."""
    found = re.match(r"https://github\.com/([^/]+/[^/]+?)(?:\.git)?$", url or "")
    if found is None:
        return []
    base = f"https://colab.research.google.com/github/{found.group(1)}/blob/main/notebooks"
    return [f"[{name} in Colab]({base}/{name})" for name in notebooks]


def links_section() -> str:
    """The README's generated "open in Colab" section: the links, or why there are none."""
    names = sorted(p.name for p in (REPO_DIR / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    links = open_in_links(names, repository_url())
    return " · ".join(links) if links else NO_URL


def main(paths: list[str]) -> int:
    """Insert the install cell into each notebook given (default: every notebook)."""
    targets = [Path(p) for p in paths] or sorted(
        (REPO_DIR / "notebooks").glob("[0-9][0-9]_*.ipynb")
    )
    url = repository_url()
    for path in targets:
        insert_install_cell(path, url)
        print(f"install cell in {path.name}")
    return 0
