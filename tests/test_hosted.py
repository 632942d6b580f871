"""The route to a hosted GPU runtime: the install cell, its insertion, the "open in Colab" links,
and (opt-in, minutes) the cell run in a fresh virtual environment with only PyTorch and NumPy."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from hetero_tutorial.core.paths import REPO_DIR
from tools.docs import hosted, readme

FRESH_ENV = "HETERO_TUTORIAL_INSTALL_TEST"


def test_the_url_comes_from_project_urls_and_makes_colab_links(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\n[project.urls]\nRepository = "https://github.com/o/r/"\n'
    )
    url = hosted.repository_url(pyproject)
    assert url == "https://github.com/o/r"
    assert hosted.open_in_links(["00_a.ipynb"], url) == [
        "[00_a.ipynb in Colab](https://colab.research.google.com/github/o/r/blob/main/notebooks/00_a.ipynb)"
    ]
    assert hosted.open_in_links(["00_a.ipynb"], None) == []
    assert hosted.open_in_links(["00_a.ipynb"], "https://gitlab.com/o/r") == []
    pyproject.write_text('[project]\nname = "x"\n')
    assert hosted.repository_url(pyproject) is None


def test_without_a_url_the_readme_says_there_are_no_links():
    if hosted.repository_url() is None:
        assert hosted.links_section() == hosted.NO_URL
    assert readme.section(readme.README.read_text(), "open-in") == hosted.links_section()


def test_the_cell_does_nothing_where_the_package_is_installed(tmp_path):
    for url in (None, "https://github.com/o/r"):
        exec(compile(hosted.install_cell(url), "cell", "exec"), {})  # installed here: nothing runs
    assert '"git+https://github.com/o/r"' in hosted.install_cell("https://github.com/o/r")


def test_inserting_puts_the_cell_after_the_opening_card_once(tmp_path):
    path = tmp_path / "00_a.ipynb"
    cards = [nbformat.v4.new_markdown_cell("# card"), nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nbformat.v4.new_notebook(cells=cards), path)
    hosted.insert_install_cell(path, None)
    hosted.insert_install_cell(path, "https://github.com/o/r")  # again: replaced, not added
    cells = nbformat.read(path, as_version=4).cells
    assert [c.cell_type for c in cells] == ["markdown", "code", "code"]
    assert hosted.INSTALL_TAG in cells[1].metadata["tags"] and "git+https" in cells[1].source


@pytest.mark.skipif(
    os.environ.get(FRESH_ENV) != "1",
    reason=f"minutes (a fresh venv, PyTorch, the dependencies): {FRESH_ENV}=1 runs it",
)
def test_the_cell_installs_the_package_in_a_fresh_venv_with_only_torch_and_numpy(tmp_path):
    venv, beside = tmp_path / "venv", tmp_path / "notebook"
    beside.mkdir()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "torch==2.13.0", "numpy"], check=True)
    wheel = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run([*wheel, str(REPO_DIR), "-w", str(beside)], check=True)
    assert list(beside.glob("hetero_tutorial-*.whl"))
    found = subprocess.run(
        [python, "-c", "import hetero_tutorial"], cwd=beside, capture_output=True
    )
    assert found.returncode != 0  # the venv starts without it, as a hosted runtime does
    subprocess.run([python, "-c", hosted.install_cell(None)], cwd=beside, check=True)
    check = "import hetero_tutorial, gymnasium; from hetero_tutorial import quick_mode"
    subprocess.run([python, "-c", check], cwd=beside, check=True)
    listed = subprocess.run([python, "-m", "pip", "list"], capture_output=True, text=True).stdout
    assert "hetero-tutorial" in listed and Path(python).exists()
