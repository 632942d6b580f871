"""Every notebook follows the series' conventions (stored clean, opening card, parameters cell)."""

import re
from pathlib import Path

import nbformat
import pytest

from tools.docs import cards
from tools.docs.book import GPU_CELL

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MAX_CODE_LINES = 25


def _code_lines(source: str) -> list[str]:
    return [
        line for line in source.splitlines() if line.strip() and not line.strip().startswith("#")
    ]


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found under notebooks/"


@pytest.fixture(params=NOTEBOOKS, ids=lambda path: path.name)
def notebook(request):
    return nbformat.read(request.param, as_version=4)


def test_stored_without_outputs(notebook):
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not cell.outputs, "strip outputs before committing (pre-commit does it)"
            assert cell.execution_count is None


def test_kernelspec_is_python3(notebook):
    assert notebook.metadata["kernelspec"]["name"] == "python3"


def test_first_cell_is_the_opening_card(notebook):
    first = notebook.cells[0]
    assert first.cell_type == "markdown"
    text = first.source.lower()
    for heading in ("what you will learn", "prerequisites", "run time"):
        assert heading in text, f"first cell lacks {heading!r}"
    assert re.search(r"gpu", text), "prerequisites must say whether a GPU is needed"
    run_time = next(line for line in text.splitlines() if line.startswith("**run time**"))
    assert " quick" in run_time and " full" in run_time, "state run time in both modes"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_the_run_time_line_comes_from_the_recorded_runs(path):
    written = cards.card_run_time(nbformat.read(path, as_version=4))
    assert written == cards.run_time_line(path.name), (
        "the card's run time is not the recorded runs' median: regenerate it with "
        "`make docs` (python -m tools.docs regenerate)"
    )


def test_parameters_cell_reads_quick_mode(notebook):
    tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    assert tagged[0].cell_type == "code"
    assert "by_mode(" in tagged[0].source or "quick_mode()" in tagged[0].source


def test_cells_are_short_and_logic_lives_in_the_package(notebook):
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        lines = _code_lines(cell.source)
        defs = len(re.findall(r"^\s*(def|class) ", cell.source, re.M))
        assert len(lines) <= MAX_CODE_LINES, f"cell {index} has {len(lines)} code lines"
        assert defs <= 1, f"cell {index} defines {defs} functions/classes"


def test_exercise_stubs_are_tagged_to_raise(notebook):
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and "raise NotImplementedError" in cell.source:
            assert "raises-exception" in cell.metadata.get("tags", []), f"cell {index}"


def test_gpu_prose_has_a_cell_of_its_own_folded(notebook):
    """The book hides a GPU paragraph's source by its cell's first words, and JupyterLab
    folds it by the cell's metadata: a paragraph that shares a cell shows on a CPU."""
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and GPU_CELL in cell.source:
            assert cell.source.startswith(GPU_CELL), f"cell {index}: put the paragraph first"
            assert cell.source.count(GPU_CELL) == 1, f"cell {index}: one paragraph per cell"
            assert cell.metadata.get("jupyter", {}).get("source_hidden"), f"cell {index}"


def test_notebook_ends_with_a_summary(notebook):
    last_markdown = [c for c in notebook.cells if c.cell_type == "markdown"][-1]
    assert re.search(r"summary|what we measured|takeaways", last_markdown.source, re.I)
