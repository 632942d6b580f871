"""Execute the notebooks headless, in order, with a progress bar: ``python -m hetero_tutorial run``.

Executed copies go to ``build/notebooks/`` (ignored by git); the run times of
each notebook, with this machine's calibration rate, go to
``data/results/<mode>/run.times.json`` so that ``doctor`` can predict run times
on other machines; and the claims ledger for this machine to
``data/results/ledger.md`` (and ``.json``).
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from tqdm.auto import tqdm

from hetero_tutorial.app.calibration import calibrate
from hetero_tutorial.app.words import printed_words
from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.modes import QUICK_ENV_VAR, quick_mode
from hetero_tutorial.core.paths import BUILD_DIR, REPO_DIR
from hetero_tutorial.core.plural import counted
from hetero_tutorial.notebook import ledger_report

NOTEBOOKS_DIR = REPO_DIR / "notebooks"
NOTEBOOK_BUILD_DIR = BUILD_DIR / "notebooks"
CELL_TIMEOUT_S = 1800
EXECUTED_KEY = "hetero_tutorial"
"""The metadata key of an executed copy that records the mode it ran in (``{"mode": ...}``)."""


def notebook_paths(only: list[str] | None = None) -> list[Path]:
    """The series' notebooks in order (``NN_name.ipynb``), or only the numbers asked for."""
    paths = sorted(NOTEBOOKS_DIR.glob("[0-9][0-9]_*.ipynb"))
    if not only:
        return paths
    wanted = {number.zfill(2) for number in only}
    chosen = [path for path in paths if path.name[:2] in wanted]
    unknown = wanted - {path.name[:2] for path in chosen}
    if unknown:
        numbers = ", ".join(path.name[:2] for path in paths)
        raise UsageError(f"no notebook numbered {', '.join(sorted(unknown))}; there are {numbers}")
    return chosen


def section_of(notebook: nbformat.NotebookNode, index: int) -> str:
    """The heading of the section cell ``index`` sits in (the nearest Markdown heading above)."""
    for cell in reversed(notebook.cells[: index + 1]):
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return "the opening"


def execute_notebook(path: Path, out_dir: Path, progress: tqdm) -> tuple[float, list[dict], int]:
    """Run one notebook top to bottom in a fresh kernel; write the executed copy.

    Returns its seconds, per code cell ``{"cell", "seconds", "section"}``, and the words its
    cells printed (:func:`~hetero_tutorial.app.words.printed_words`, what a learner reads
    besides the prose).
    """
    notebook = nbformat.read(path, as_version=4)
    mode = "quick" if quick_mode() else "full"
    command = f"notebooks/{path.name} ({mode} mode, python -m hetero_tutorial run)"
    code_cells = sum(1 for cell in notebook.cells if cell.cell_type == "code")
    progress.reset(total=code_cells)
    progress.set_description(path.stem)
    started: dict[int, float] = {}
    cells: list[dict] = []

    def executed(cell_index: int, **_: object) -> None:
        seconds = time.perf_counter() - started.pop(cell_index, time.perf_counter())
        section = section_of(notebook, cell_index)
        cells.append({"cell": cell_index, "seconds": seconds, "section": section})
        progress.update(1)

    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        on_cell_execute=lambda cell_index, **_: started.update({cell_index: time.perf_counter()}),
        on_cell_executed=executed,
    )
    start = time.perf_counter()
    try:
        client.execute(env={**os.environ, results.NOTEBOOK_ENV_VAR: command})  # the kernel's only
    finally:
        notebook.metadata[EXECUTED_KEY] = {"mode": mode}  # the book says which run it shows
        out_dir.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, out_dir / path.name)
    return time.perf_counter() - start, cells, printed_words(notebook)


def run_command(
    quick: bool = False,
    only: list[str] | None = None,
    out: Path | None = None,
    reference: bool = False,
) -> str:
    """The command line that runs the notebooks so, for a run-time record's provenance."""
    argv = ["python", "-m", "hetero_tutorial", "run"] + ["--quick"] * quick
    argv += ["--only", *only] if only else []
    argv += ["--out", str(out)] if out is not None else []
    return shlex.join(argv + ["--reference"] * reference)


def run_notebooks(
    quick: bool = False,
    only: list[str] | None = None,
    out: Path | None = None,
    reference: bool = False,
) -> int:
    """Execute the notebooks (full mode unless ``quick``); 0 if all ran, 1 if any failed.

    ``reference``: also save the run times as a reference record of this machine; it
    must hold every notebook, so ``only`` and ``reference`` together are refused.
    """
    if only and reference:
        raise UsageError(
            "a reference run-time record must hold every notebook: drop --only to record a "
            "reference, or drop --reference to time only some notebooks"
        )
    out_dir = out or NOTEBOOK_BUILD_DIR
    paths = notebook_paths(only)
    os.environ[QUICK_ENV_VAR] = "1" if quick else "0"
    mode = "quick" if quick else "full"
    print(
        f"Executing {counted(len(paths), 'notebook')} in {mode} mode; executed copies go to "
        f"{out_dir}"
    )
    rate = calibrate()
    seconds: dict[str, float] = {}
    cell_seconds: dict[str, list[dict]] = {}
    printed: dict[str, int] = {}
    failures: list[str] = []
    with tqdm(unit="cell") as cells, tqdm(paths, unit="notebook", position=1) as notebooks:
        for path in notebooks:
            try:
                ran = execute_notebook(path, out_dir, cells)
                seconds[path.name], cell_seconds[path.name], printed[path.name] = ran
            except CellExecutionError as error:
                failures.append(f"{path.name}: {str(error).strip().splitlines()[-1]}")
    for name, value in seconds.items():
        print(f"  {name}: {value:.0f} s")
    record = results.Record(
        "run.times",
        {
            "mode": mode,
            "notebook_seconds": seconds,
            "cell_seconds": cell_seconds,
            "printed_words": printed,
            "calibration_units_per_s": rate,
        },
        results.provenance(command=run_command(quick, only, out, reference), quick=quick),
    )
    print(f"run times written to {results.save(record, directory=results.RESULTS_DIR / mode)}")
    if reference and not failures:  # one file per run: cards and tables take their median
        tag = f"{mode}.{record.provenance['date'][:19].replace(':', '')}"
        path = results.save(record, directory=results.reference_directory(record), tag=tag)
        print(f"reference run times written to {path}")
    json_path, md_path = ledger_report.save()
    print(f"claims ledger for this machine written to {md_path} (and {json_path.name})")
    if failures:
        print("Failed:\n  " + "\n  ".join(failures))
        return 1
    return 0
