"""The book's assembly and the teacher's kit: which executed notebooks it shows, what its
pages say, and the kit's generated sections (the browser's checks are in
``test_book_browser.py``)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
import torch

from hetero_tutorial.app import run_times, runner
from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.ledger import verdicts as ledger
from hetero_tutorial.ledger.claims import CLAIMS
from tools.docs import book, readme

ROOT = Path(__file__).resolve().parents[1]


def _executed_copies(directory: Path, mode: str | None) -> Path:
    """Copies of the stored notebooks, as a run in ``mode`` would leave them (no outputs:
    the book checks the code and the mode, not what it printed)."""
    directory.mkdir(parents=True)
    for name in run_times.series_notebooks():
        notebook = nbformat.read(ROOT / "notebooks" / name, as_version=4)
        if mode is not None:
            notebook.metadata[runner.EXECUTED_KEY] = {"mode": mode}
        nbformat.write(notebook, directory / name)
    return directory


def test_a_full_run_is_preferred_to_make_tests_quick_copies(tmp_path, monkeypatch):
    run, nbmake = tmp_path / "notebooks", tmp_path / "nbmake"
    monkeypatch.setattr(book, "CANDIDATES", ((run, "make run"), (nbmake, "make test")))
    _executed_copies(nbmake, "quick")
    assert book.find_executed() == book.Executed(nbmake, "quick", "make test")
    _executed_copies(run, "quick")  # make run-quick's: make test's quick copies come first
    assert book.find_executed().directory == nbmake
    shutil.rmtree(run)
    _executed_copies(run, "full")
    assert book.find_executed() == book.Executed(run, "full", "make run")


def test_nbmake_copies_are_quick_mode_and_other_folders_must_say(tmp_path):
    nbmake = book.BUILD_DIR / "nbmake"
    assert book.notebook_mode(nbformat.v4.new_notebook(), nbmake) == "quick"
    with pytest.raises(UsageError, match="no recorded mode"):
        book.notebook_mode(nbformat.v4.new_notebook(), tmp_path)


def test_missing_stale_or_mixed_notebooks_are_refused_with_the_command_to_run(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(book, "CANDIDATES", ((tmp_path / "none", "make run"),))
    with pytest.raises(UsageError, match="run `make notebooks`"):
        book.find_executed()
    directory = _executed_copies(tmp_path / "out", "full")
    first, second = (directory / name for name in run_times.series_notebooks()[:2])
    stale = nbformat.read(first, as_version=4)
    stale.cells.append(nbformat.v4.new_code_cell("print('added since the run')"))
    nbformat.write(stale, first)
    with pytest.raises(UsageError, match="another version of the notebook's code"):
        book.check_executed(directory, "make run")
    shutil.copy2(ROOT / "notebooks" / first.name, first)  # no mode recorded
    mixed = nbformat.read(second, as_version=4)
    mixed.metadata[runner.EXECUTED_KEY] = {"mode": "quick"}
    nbformat.write(mixed, second)
    with pytest.raises(UsageError, match="no recorded mode"):
        book.check_executed(directory, "make run")
    _executed_copies(tmp_path / "mixed", "full")
    nbformat.write(mixed, tmp_path / "mixed" / second.name)
    with pytest.raises(UsageError, match="mixes quick and full"):
        book.check_executed(tmp_path / "mixed", "make run")


def test_the_front_page_is_the_readmes_front_matter_and_says_which_run_it_shows(tmp_path):
    executed = book.Executed(_executed_copies(tmp_path / "nb", "quick"), "quick", "make test")
    page = book.front_page(executed, ["some-machine"])
    assert page.startswith(readme.README.read_text().splitlines()[0])
    for heading in book.FRONT_MATTER:
        assert f"## {heading}" in page
    assert "## Where to go next" not in page  # it links files outside the book
    assert "CONTRIBUTING.md](" not in page
    assert "outputs of `make test`, in quick mode" in page
    for name in run_times.series_notebooks():
        assert f"notebooks/{name.removesuffix('.ipynb')}\n" in page  # the contents
        assert f"(notebooks/{name})" in page  # the README's table links the page
    assert "ledger/some-machine\n" in page
    pages = (*book.KIT_PAGES, *book.RESULT_PAGES)
    assert all(f"docs/{p.removesuffix('.md')}\n" in page for p in pages)
    assert "docs/answers\n" not in page  # a learner's book: the sheet is a teacher's


def test_a_teachers_book_holds_the_instructors_sheet(tmp_path):
    executed = book.Executed(_executed_copies(tmp_path / "nb", "quick"), "quick", "make test")
    learners = book.assemble(executed, tmp_path / "learner")
    teachers = book.assemble(executed, tmp_path / "teacher", teacher=True)
    assert not (learners / "docs" / "answers.md").exists()
    assert (teachers / "docs" / "answers.md").is_file()
    assert "docs/answers\n" in (teachers / "index.md").read_text()


def test_a_missing_readme_section_is_named():
    with pytest.raises(UsageError, match="'Nowhere'"):
        book.readme_sections("# title\n\n## Two commands\n", ("Two commands", "Nowhere"))


def test_each_reference_machine_has_a_ledger_page_with_every_claim_and_record():
    machines = sorted(p.name for p in results.REFERENCE_DIR.iterdir() if p.is_dir())
    assert machines
    for machine in machines:
        page = book.ledger_page(machine)
        assert all(f"| {claim.id} |" in page for claim in CLAIMS)
        records = results.load_all(results.REFERENCE_DIR / machine)
        assert page.count("\n| `") == len(records)
    with pytest.raises(UsageError, match="no machine 'nowhere'"):
        book.ledger_page("nowhere")


def test_a_ledger_page_only_for_a_machine_with_a_measured_claim_titled_by_one_label():
    table = ledger.rows(ledger.machines(include_this=False))
    for machine in (p.name for p in results.REFERENCE_DIR.iterdir() if p.is_dir()):
        statuses = {row["status"] for row in table if row["machine"] == machine}
        assert (machine in book.judged_machines()) == bool(statuses - set(book.UNMEASURED))
    for machine in book.judged_machines():
        title, _, body = book.ledger_page(machine).partition("\n")
        assert " or " not in title
        labels = {r.hardware for r in results.load_all(results.REFERENCE_DIR / machine)}
        assert ("Some of its records are older" in body) == (len(labels) > 1)


def test_assembly_lays_out_every_page_the_contents_name(tmp_path):
    executed = book.Executed(_executed_copies(tmp_path / "nb", "full"), "full", "make run")
    source = book.assemble(executed, tmp_path / "src")
    index = (source / "index.md").read_text()
    for entry in re.findall(r"^((?:notebooks|docs|ledger)/\S+)$", index, re.M):
        assert list(source.glob(entry + ".*")), entry
    assert "make run` executes them in full mode" not in index  # said only for quick pages


@pytest.mark.parametrize("url", [None, "https://github.com/someone/hetero-tutorial"])
def test_each_notebook_page_says_when_and_on_what_it_ran_and_links_to_colab_under_its_title(
    tmp_path, monkeypatch, url
):
    monkeypatch.setattr(book.hosted, "repository_url", lambda: url)
    executed = book.Executed(_executed_copies(tmp_path / "nb", "full"), "full", "make run")
    source = book.assemble(executed, tmp_path / "src")
    for name in run_times.series_notebooks():
        stored = nbformat.read(executed.directory / name, as_version=4)
        if not book.gpu_story_here():
            book.hide_gpu_cells(stored)
        page = nbformat.read(source / "notebooks" / name, as_version=4)
        said = page.cells[1].source.split("\n\n")
        assert said[0].startswith("*Executed ") and " in full mode on " in said[0]
        assert f"with PyTorch {torch.__version__}" in said[0]
        colab = "https://colab.research.google.com/github/someone/hetero-tutorial/blob/main"
        links = [] if url is None else [f"[{name} in Colab]({colab}/notebooks/{name})"]
        assert said[1:] == links
        assert page.cells[0] == stored.cells[0] and page.cells[2:] == stored.cells[1:]


def test_a_cpu_only_book_shows_no_gpu_prose_source_and_no_empty_gpu_cell():
    pointer = nbformat.v4.new_code_cell('gpu_paragraph("""\nOn a GPU ...\n""")')
    pointer.outputs = [nbformat.v4.new_output("display_data", {"text/markdown": "*No GPU*"})]
    silent = nbformat.v4.new_code_cell('gpu_paragraph("## 6. Recorded GPU results")')
    other = nbformat.v4.new_code_cell("print(1)")
    notebook = nbformat.v4.new_notebook(cells=[pointer, silent, other])
    book.hide_gpu_cells(notebook)
    assert [cell.metadata.get("tags") for cell in notebook.cells] == [
        ["remove-input"],
        ["remove-cell"],
        None,
    ]


def test_the_book_shows_no_exercise_placeholder_line_and_keeps_a_cell_that_said_more():
    def printed(text: str) -> nbformat.NotebookNode:
        cell = nbformat.v4.new_code_cell("check(...)")
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        return cell

    placeholder = printed("Not attempted yet: replace the raise with your code ...\n")
    guess = printed("Solve the exercise above, then run this cell to compare with your guess.\n")
    mixed = printed("You predicted 3 copies.\nSolve the exercise above to compare.\n")
    table = printed("Solve the exercise above to compare.\n")
    table.outputs.insert(0, nbformat.v4.new_output("display_data", {"text/markdown": "| a |"}))
    notebook = nbformat.v4.new_notebook(cells=[placeholder, guess, mixed, table])
    book.hide_placeholder_outputs(notebook)
    tags = [cell.metadata.get("tags") for cell in notebook.cells]
    assert tags == [["remove-output"], ["remove-output"], None, None]
    package = Path(runner.__file__).parents[1]
    printers = "\n".join(
        path.read_text() for path in (package / "notebook").rglob("*.py")
    )  # where the exercises' lines are printed: each start is still what they print
    assert all(f'"{start}' in printers for start in book.PLACEHOLDERS)


def test_formulas_are_written_as_mathml():
    pytest.importorskip("latex2mathml")
    from docutils import nodes

    from tools.docs import book_math

    translator = SimpleNamespace(body=[])
    for visit, node in (
        (book_math._visit_inline, nodes.math("", r"\delta_t = r_t")),
        (book_math._visit_block, nodes.math_block("", r"\min(rA, \mathrm{clip}(r)A)")),
    ):
        with pytest.raises(nodes.SkipNode):
            visit(translator, node)
    inline, block = translator.body
    assert inline.startswith("<math") and "<msub>" in inline
    assert 'display="block"' in block and 'mathvariant="normal"' in block  # \mathrm


def test_the_book_never_replaces_a_folder_that_is_not_a_built_book(tmp_path):
    pytest.importorskip("sphinx")
    (tmp_path / "notes.txt").write_text("a learner's own file")
    with pytest.raises(UsageError, match="not a built book"):
        book.build(out=tmp_path)
    assert (tmp_path / "notes.txt").is_file()
