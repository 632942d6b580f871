"""What an executed notebook shows a learner: no tracebacks, no absolute paths of this machine, no
progress-bar fallback text, no profiler log lines, and no CPU-only record under a heading that
promises GPU reference results.

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


def test_the_checks_catch_what_they_look_for():
    assert PROGRESS_FALLBACK.search("iterations:   0%|          | 0/391 [00:00<?, ?it/s]")
    assert not PROGRESS_FALLBACK.search("iterations: 80 of 80 done in 5.2 s")
    assert PROFILER_LOG.search("USDT:2026-12-01 09:15:05 25527:25527 x.cpp:52] profiler_start")
    assert GPU_SECTION.search("## 5. Reference results from machines with a GPU")
    assert GPU_SECTION.search("## 11. Recorded GPU profiles")
    assert not GPU_SECTION.search("## 4. The article's ratios beside the measured ones")
