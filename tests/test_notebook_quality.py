"""What an executed notebook shows a learner: no tracebacks, no absolute paths of this machine, no
progress-bar fallback text, no profiler log lines, no CPU-only record under a heading that
promises GPU reference results, and, on a machine with neither a GPU nor a GPU's reference
records, no prose narrating the GPU case beyond one line per notebook.

Executing every notebook costs minutes, and CI executes them under nbmake already, so this
test reads the executed copies that run leaves: ``make notebooks`` runs nbmake on copies in
``build/nbmake/`` with ``--overwrite`` (the copies, not the stored notebooks, take the
outputs) and points ``HETERO_TUTORIAL_EXECUTED`` at them. Without that variable, copies in
``build/nbmake/`` are used when they are fresh (the same code cells as the stored notebook,
written after every package module last changed); otherwise the test executes the
notebooks itself, in quick mode, with nbclient (minutes).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from hetero_tutorial.core.paths import private_paths
from hetero_tutorial.notebook.prose import POINTER, gpu_story_here

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
EXECUTED_ENV = "HETERO_TUTORIAL_EXECUTED"
DEFAULT_EXECUTED = ROOT / "build" / "nbmake"

PROGRESS_FALLBACK = re.compile(r"\d+%\|[^\n]*\|\s*\d+/\d+|it/s\]")
"""tqdm's text line, as a front end without widgets shows it: ``0%|   | 0/391 [00:00<?, ?it/s]``."""
PROFILER_LOG = re.compile(r"^USDT:|profiler_(start|stop)$", re.M)
GPU_SECTION = re.compile(
    r"^#+ .*(machines? with (a|an) (GPU|accelerator)|recorded GPU)", re.I | re.M
)
GPU_NARRATION = re.compile(
    r"\b(on|with|where there is) (a|an|one) (GPU|CUDA|accelerator)\b|\bGPU machine|\bwith CUDA\b"
    r"|\bon the GPU\b",
    re.I,
)
"""A line that tells what a GPU would show: on a machine without one, such lines collapse."""
PROMISE = re.compile(r"\breference (records|results|figures) (below|further down)\b", re.I)
CPU_ONLY_RECORD = "no GPU)"
"""How a record's hardware label ends when its machine had no accelerator (Record.hardware)."""


def _code_sources(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def _fresh(copy: Path, source: Path) -> bool:
    if not copy.is_file():
        return False
    newest = max(p.stat().st_mtime for p in (ROOT / "hetero_tutorial").rglob("*.py"))
    if copy.stat().st_mtime < max(newest, source.stat().st_mtime):
        return False
    executed, stored = (nbformat.read(p, as_version=4) for p in (copy, source))
    return _code_sources(executed) == _code_sources(stored)


def _execute(source: Path, out: Path) -> None:
    notebook = nbformat.read(source, as_version=4)
    client = NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(out)}}
    )
    client.execute(env={**os.environ, "HETERO_TUTORIAL_QUICK": "1"})
    nbformat.write(notebook, out / source.name)


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> dict[str, nbformat.NotebookNode]:
    given = os.environ.get(EXECUTED_ENV)
    directory = Path(given) if given else DEFAULT_EXECUTED
    found = {}
    for source in NOTEBOOKS:
        copy = directory / source.name
        if given and not copy.is_file():
            pytest.fail(f"{EXECUTED_ENV}={given} has no executed {source.name}")
        if not given and not _fresh(copy, source):
            copy = tmp_path_factory.mktemp("executed") / source.name
            _execute(source, copy.parent)
        found[source.name] = nbformat.read(copy, as_version=4)
    return found


def _texts(cell: nbformat.NotebookNode) -> list[str]:
    """Everything a code cell's outputs show as text (streams, plain text, Markdown, HTML)."""
    texts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            texts.append(output.text)
        elif output.output_type == "error":
            texts.append("\n".join(output.traceback))
        else:
            data = output.get("data", {})
            texts += [
                data[key] for key in ("text/plain", "text/markdown", "text/html") if key in data
            ]
    return texts


@pytest.mark.parametrize("name", [path.name for path in NOTEBOOKS])
def test_no_traceback_absolute_path_progress_fallback_or_profiler_log(executed, name):
    problems = []
    private = private_paths()
    for index, cell in enumerate(executed[name].cells):
        if cell.cell_type != "code":
            continue
        if any(o.output_type == "error" for o in cell.get("outputs", [])):
            problems.append(f"cell {index}: an error")
        for text in _texts(cell):
            if "Traceback (most recent call last)" in text:
                problems.append(f"cell {index}: a traceback")
            problems += [f"cell {index}: the path {p}" for p in private if p in text]
            if PROGRESS_FALLBACK.search(text):
                problems.append(f"cell {index}: a progress bar's text fallback")
            if PROFILER_LOG.search(text):
                problems.append(f"cell {index}: the profiler's log line")
        widgets = [
            o
            for o in cell.get("outputs", [])
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
        ]
        if widgets:
            problems.append(f"cell {index}: a widget, which nbclient shows as its text fallback")
    assert not problems, f"{name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("name", [path.name for path in NOTEBOOKS])
def test_gpu_reference_sections_show_no_cpu_only_record(executed, name):
    section_is_gpu, problems = False, []
    for index, cell in enumerate(executed[name].cells):
        if cell.cell_type == "markdown":
            headings = [line for line in cell.source.splitlines() if line.startswith("#")]
            if headings:
                section_is_gpu = bool(GPU_SECTION.search("\n".join(headings)))
        elif section_is_gpu and any(CPU_ONLY_RECORD in text for text in _texts(cell)):
            problems.append(f"cell {index} shows a record from a machine without an accelerator")
    assert not problems, f"{name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("name", [path.name for path in NOTEBOOKS])
def test_without_a_gpu_the_gpu_case_takes_one_line_and_nothing_is_promised(executed, name):
    cells = executed[name].cells
    promises = [i for i, c in enumerate(cells) if any(PROMISE.search(t) for t in _shown(c))]
    assert not promises, f"{name}: cells {promises} promise reference records below"
    if gpu_story_here():
        pytest.skip("this machine has a GPU, or GPU reference records exist: the story is told")
    narrated = [
        f"cell {i}: {line.strip()[:90]}"
        for i, cell in enumerate(cells[1:], start=1)  # the opening card says what is needed
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if GPU_NARRATION.search(line)
    ]
    pointers = sum(text.count(POINTER) for cell in cells for text in _shown(cell))
    assert len(narrated) + pointers <= 1, f"{name}: the GPU case in {pointers} pointer(s) and\n" + (
        "\n".join(narrated)
    )


def _shown(cell: nbformat.NotebookNode) -> list[str]:
    """A cell's Markdown source, or a code cell's outputs as text."""
    return [cell.source] if cell.cell_type == "markdown" else _texts(cell)


def test_the_checks_catch_what_they_look_for():
    assert PROGRESS_FALLBACK.search("iterations:   0%|          | 0/391 [00:00<?, ?it/s]")
    assert not PROGRESS_FALLBACK.search("iterations: 80 of 80 done in 5.2 s")
    assert PROFILER_LOG.search("USDT:2026-12-01 09:15:05 25527:25527 x.cpp:52] profiler_start")
    assert GPU_SECTION.search("## 5. Reference results from machines with a GPU")
    assert GPU_SECTION.search("## 11. Recorded GPU profiles")
    assert not GPU_SECTION.search("## 4. The article's ratios beside the measured ones")
    assert GPU_NARRATION.search("for both. On a GPU, look for the baseline's red towers")
    assert GPU_NARRATION.search("the shares a GPU machine measured")
    assert not GPU_NARRATION.search("the all-accelerator plan runs on the CPU and says so")
    assert PROMISE.search("the reference records below show what a GPU machine measures")


SERIES_READING_MINUTES = 150
"""The series' reading budget: prose plus what its cells print in quick mode, at
:data:`~tools.docs.cards.WORDS_PER_MINUTE`: a half day of learning holds it."""
NOTEBOOK_READING_MINUTES = 20


def test_the_series_reads_within_its_budget(executed):
    """Words a learner reads on the way through: the prose and what the cells print (text,
    tables, listings) in quick mode, folded blocks included: a fold is read by whoever
    opens it, so detail that no learner needs moves to ``docs/`` or a file the run writes."""
    from hetero_tutorial.app.words import printed_words, prose_words
    from tools.docs.cards import WORDS_PER_MINUTE

    minutes = {
        name: (prose_words(notebook) + printed_words(notebook)) / WORDS_PER_MINUTE
        for name, notebook in executed.items()
    }
    long = {name: round(m, 1) for name, m in minutes.items() if m > NOTEBOOK_READING_MINUTES}
    assert not long, f"over {NOTEBOOK_READING_MINUTES} minutes to read: {long}"
    total = sum(minutes.values())
    assert total <= SERIES_READING_MINUTES, f"the series reads in {total:.0f} min: {minutes}"


def test_the_reading_count_takes_folds_and_table_bars_and_leaves_pictures_out():
    from hetero_tutorial.app.words import printed_words, prose_words

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("Two words <details><summary>More</summary>x y z</details>"),
        nbformat.v4.new_code_cell("print()"),
    ]
    notebook.cells[1].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="three printed words"),
        nbformat.v4.new_output("stream", name="stderr", text="a progress bar"),
        nbformat.v4.new_output("display_data", data={"image/png": "", "text/plain": "<Figure>"}),
        nbformat.v4.new_output("display_data", data={"text/markdown": "| one |"}),
    ]
    assert prose_words(notebook) == 5  # Two words <details><summary>More</summary>x y z</details>
    assert printed_words(notebook) == 6  # three printed words; | one |
