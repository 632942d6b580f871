"""Every glossary term is linked from the first notebook whose prose uses it.

A failure names the notebook and its unlinked terms; ``python -m tools.docs glossary-links``
lists them for every notebook at once.
"""

import nbformat
import pytest

from tools.docs import glossary_links
from tools.docs.glossary_links import NOTEBOOKS, anchor, missing_links

SERIES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def missing():
    return missing_links(SERIES)


@pytest.mark.parametrize("name", [path.name for path in SERIES])
def test_each_term_is_linked_where_the_series_first_uses_it(missing, name):
    assert not missing[name], (
        f"{name} is the first notebook to use these glossary terms and does not link them: "
        f"{', '.join(missing[name])} (write [term](../docs/glossary.md#anchor) at the first use)"
    )


def _notebook(path, *markdown):
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(m) for m in markdown]), path
    )


def test_the_check_finds_the_first_use_plurals_and_links(tmp_path):
    glossary = tmp_path / "glossary.md"
    glossary.write_text(
        "# Glossary\n\n## Copy\n\nx\n\n## Pattern A, pattern B\n\ny\n\n## IQR\n\nz\n"
    )
    first, second = tmp_path / "00_a.ipynb", tmp_path / "01_b.ipynb"
    _notebook(first, "two copies per step", "see [the IQR](../docs/glossary.md#iqr)")
    _notebook(second, "pattern B is faster; the IQR again; a copy")
    found = missing_links([first, second], glossary)
    assert found == {"00_a.ipynb": ["Copy"], "01_b.ipynb": ["Pattern A, pattern B"]}
    assert anchor("Pattern A, pattern B") == "pattern-a-pattern-b"
    assert anchor("non_blocking") == "non_blocking" and anchor("Amdahl's law") == "amdahls-law"
    assert glossary_links.terms(glossary) == ["Copy", "Pattern A, pattern B", "IQR"]
