"""The book: the series as a static HTML site, from notebooks that have already run.

``python -m hetero_tutorial book`` (``make book``) executes nothing. It takes the executed
copies that ``make run`` (full mode, ``build/notebooks/``) or ``make test`` (quick mode,
``build/nbmake/``) left, preferring full mode, and assembles a Sphinx project in
``build/book/src/``:

- ``index.md``: the README's front matter (what the series teaches, the two commands, the
  notebooks with their reading and run minutes), and which run the pages show;
- ``notebooks/``: the executed notebooks, rendered with their outputs and figures by
  MyST-NB with execution off, each with its "open in Colab" link under its title where
  ``pyproject.toml`` names the repository (:func:`tools.docs.hosted.open_in_links`);
- ``docs/``: the teacher's kit (workshop plan, questions, glossary, other hardware), the
  results (claims ledger, run times, speed races) and the Ray recipe, their generated
  sections rendered fresh from ``data/reference/``;
- ``ledger/<machine>.md``: every claim judged on the records of each reference machine
  that has a claim measured.

Sphinx (configured by ``docs/conf.py``) writes ``build/book/html/``. Nothing is
downloaded while building or reading: the theme's files ship in its wheel, formulas are
MathML (:mod:`tools.docs.book_math`), and no widget script is loaded.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat
import torch

from hetero_tutorial.app import run_times, runner
from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.paths import BUILD_DIR, REPO_DIR, display_path
from hetero_tutorial.ledger import verdicts as ledger
from hetero_tutorial.ledger.rules import Status
from hetero_tutorial.notebook.prose import gpu_story_here
from tools.docs import hosted, kit, readme

BOOK_DIR = BUILD_DIR / "book"
SOURCE_DIR = BOOK_DIR / "src"
HTML_DIR = BOOK_DIR / "html"
CONF_DIR = kit.DOCS_DIR
"""Where ``conf.py`` is: the book's sources live in ``docs/``."""


@dataclass(frozen=True)
class Executed:
    """A folder of executed notebooks: where, in which mode, and which command made it."""

    directory: Path
    mode: str
    command: str


CANDIDATES = (
    (BUILD_DIR / "notebooks", "make run"),
    (BUILD_DIR / "nbmake", "make test"),
)
"""Where executed copies are left, by the command that leaves them. ``make test`` runs
nbmake in quick mode and writes no mode of its own; ``run`` writes the mode it ran in."""


def notebook_mode(notebook: nbformat.NotebookNode, directory: Path) -> str:
    """The mode an executed notebook ran in: as ``run`` recorded it, else quick for
    ``build/nbmake/`` (``make notebooks`` runs nbmake in quick mode only)."""
    recorded = notebook.metadata.get(runner.EXECUTED_KEY, {}).get("mode")
    if recorded in ("quick", "full"):
        return recorded
    if directory.resolve() == (BUILD_DIR / "nbmake").resolve():
        return "quick"
    raise UsageError(
        f"{display_path(directory)} holds notebooks with no recorded mode (executed before "
        "the runner recorded it): run `make run` or `make notebooks` again, then `make book`"
    )


def _code(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def check_executed(directory: Path, command: str) -> Executed:
    """``directory`` as a source of the book: it must hold every notebook of the series,
    executed from the code the stored notebook has now, all in one mode."""
    modes = set()
    for name in run_times.series_notebooks():
        path = directory / name
        if not path.is_file():
            raise UsageError(
                f"{display_path(directory)} has no executed {name}: run `{command}` first"
            )
        executed = nbformat.read(path, as_version=4)
        stored = nbformat.read(REPO_DIR / "notebooks" / name, as_version=4)
        if _code(executed) != _code(stored):
            raise UsageError(
                f"{display_path(path)} was executed from another version of the notebook's "
                f"code: run `{command}` again, then `make book`"
            )
        modes.add(notebook_mode(executed, directory))
    if len(modes) != 1:
        raise UsageError(
            f"{display_path(directory)} mixes quick and full mode: run `{command}` again"
        )
    return Executed(directory, modes.pop(), command)


def find_executed(directory: Path | None = None) -> Executed:
    """The executed notebooks the book shows: ``directory`` if given, else a full run of
    ``make run``, else ``make test``'s quick copies, else a quick ``make run-quick``."""
    if directory is not None:
        known = {path.resolve(): command for path, command in CANDIDATES}
        command = known.get(directory.resolve(), "python -m hetero_tutorial run --out DIR")
        return check_executed(directory, command)
    found = []
    for path, command in CANDIDATES:
        try:
            found.append(check_executed(path, command))
        except UsageError:
            continue
    found.sort(key=lambda executed: (executed.mode != "full", executed.command != "make test"))
    if not found:
        raise UsageError(
            "no executed notebooks to build the book from: run `make notebooks` (quick mode, "
            "a few minutes) or `make run` (full mode), then `make book`"
        )
    return found[0]


FRONT_MATTER = ("What you will learn", "Two commands", "The notebooks", "More commands")
"""The README's sections the first page shows, after the README's title and opening (the
others point at files outside the book)."""
KIT_PAGES = ("workshop.md", "questions.md", "glossary.md", "hardware.md")
"""The teacher's kit in ``docs/``, in the order of the book's contents."""
TEACHER_PAGES = ("answers.md",)
"""Pages only a teacher's book holds (``book --teacher``): the instructor's sheet answers
the exercises a learner's book asks."""
RESULT_PAGES = ("results.md", "speed.md", "ray.md", "zh.md")
"""The results, the speed door and the cluster recipe in ``docs/``, after the kit in the
book's contents."""


def readme_sections(text: str, wanted: tuple[str, ...] = FRONT_MATTER) -> str:
    """The README's opening (title and first paragraphs) and its ``wanted`` sections."""
    parts = re.split(r"^(?=## )", text, flags=re.M)
    by_heading = {part.splitlines()[0][3:].strip(): part for part in parts[1:]}
    missing = [heading for heading in wanted if heading not in by_heading]
    if missing:
        raise UsageError(f"README.md has no section {', '.join(map(repr, missing))}")
    chosen = [parts[0], *(by_heading[heading] for heading in wanted)]
    return "".join(chosen)


def _toctree(caption: str, entries: list[str]) -> str:
    return "\n".join(
        ["```{toctree}", f":caption: {caption}", ":maxdepth: 1", "", *entries, "```", ""]
    )


def _executed_on(executed: Executed) -> str:
    newest = max(
        (executed.directory / name).stat().st_mtime for name in run_times.series_notebooks()
    )
    return dt.datetime.fromtimestamp(newest, dt.timezone.utc).strftime("%Y-%m-%d")


MODE_NOTE = {
    "full": "full mode (the notebooks' real budgets)",
    "quick": (
        "quick mode (small budgets: the same code paths, noisier figures, and learning "
        "not judged where a run is too short to learn)"
    ),
}


def front_page(executed: Executed, machines: list[str], kit: tuple[str, ...] = KIT_PAGES) -> str:
    """The book's first page: the README's front matter, which run the pages show, and the
    contents."""
    text = readme_sections(readme.README.read_text())
    title, _, rest = text.partition("\n")
    note = (
        "```{note}\n"
        f"The notebook pages show the outputs of `{executed.command}`, in "
        f"{MODE_NOTE[executed.mode]}, executed on {_executed_on(executed)} (notebook 00's first "
        "section describes the machine they ran on), one notebook at a time, so that no two "
        "timed studies shared the cores; a study that others kept busy says so and is not "
        "judged. "
        + (
            "`make run` executes them in full mode; `make book` then shows those.\n"
            if executed.mode == "quick"
            else ""
        )
        + "```\n"
    )
    return "\n".join(
        [
            title,
            note,
            rest,
            _toctree(
                "The notebooks",
                [f"notebooks/{n.removesuffix('.ipynb')}" for n in run_times.series_notebooks()],
            ),
            _toctree("For teachers", [f"docs/{page.removesuffix('.md')}" for page in kit]),
            _toctree("Results", [f"docs/{page.removesuffix('.md')}" for page in RESULT_PAGES]),
            _toctree("Reference machines", [f"ledger/{name}" for name in machines]),
        ]
    )


UNMEASURED = (Status.MISSING.value, Status.NOT_MEASURABLE.value)
"""Verdicts that say nothing was measured for a claim."""


def judged_machines() -> list[str]:
    """The reference machines with at least one claim measured: a page of "not measured
    yet" teaches nothing (the results page still lists such a machine's records)."""
    found = ledger.machines(include_this=False)
    judged = {r["machine"] for r in ledger.rows(found) if r["status"] not in UNMEASURED}
    return sorted(machine for machine in found if machine in judged)


def ledger_page(machine: str) -> str:
    """One reference machine's page: every claim judged on its records, what to take away,
    and the records themselves with their provenance."""
    found = ledger.machines(include_this=False)
    if machine not in found:
        raise UsageError(f"data/reference/ has no machine {machine!r}")
    table = ledger.rows({machine: found[machine]})
    records = results.load_all(results.REFERENCE_DIR / machine)
    newest = max(records, key=lambda record: record.provenance["date"]).hardware
    older = results.each_once(r.hardware for r in records if r.hardware != newest)
    lines = [
        f"# Ledger: {newest}",
        "",
        f"Every claim of the article judged on the reference records in "
        f"`data/reference/{machine}/` alone ({len(records)} records), by the rules of "
        "`hetero_tutorial/ledger/rules.py`."
        + (f" Some of its records are older, from {older}." if older else ""),
        "",
        ledger.markdown(table),
        "",
        "## What to take away",
        "",
        *[f"- {line}" for line in ledger.takeaways(table, machine)],
        "",
        "## The records",
        "",
        "| record | mode | measured | command |",
        "|---|---|---|---|",
    ]
    for record in records:
        mode = "quick" if record.provenance["quick"] else "full"
        command = record.provenance["command"].replace("|", "/")
        lines.append(f"| `{record.kind}` | {mode} | {record.provenance['date'][:10]} | {command} |")
    return "\n".join(lines) + "\n"


def _docs_page(page: str) -> str:
    """A page of ``docs/`` as committed, its generated sections rebuilt from the records."""
    path = kit.DOCS_DIR / page
    sections = readme.PAGES.get(path) or kit.PAGES.get(page, {})
    return readme.regenerated(path.read_text(), sections)


GPU_CELL = "gpu_paragraph("
"""How a cell of GPU prose starts (:func:`~hetero_tutorial.notebook.prose.gpu_paragraph`)."""


def hide_gpu_cells(notebook: nbformat.NotebookNode) -> None:
    """Where no GPU and no GPU records are (the prose printed its one pointer, or nothing),
    the book shows no GPU cell's source, a string literal of prose nobody reads here, and
    no cell that printed nothing (MyST-NB's ``remove-input`` and ``remove-cell`` tags)."""
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.source.startswith(GPU_CELL):
            tags = cell.metadata.setdefault("tags", [])
            tags.append("remove-input" if cell.get("outputs") else "remove-cell")


PLACEHOLDERS = ("Not attempted yet:", "Solve the exercise above")
"""How the lines start that an exercise's cells print until the learner has solved it
(:func:`~hetero_tutorial.notebook.exercises.check` and the reports' guess lines): a
reader of the book has no code of their own in the cell, so the line says nothing there."""


def hide_placeholder_outputs(notebook: nbformat.NotebookNode) -> None:
    """The book shows no output of an exercise cell that printed only its placeholder line
    (MyST-NB's ``remove-output`` tag); a cell that printed more keeps its output."""
    for cell in notebook.cells:
        if cell.cell_type != "code" or not cell.get("outputs"):
            continue
        if any(output.output_type != "stream" for output in cell.outputs):
            continue  # a table or a figure is worth showing, whatever else the cell printed
        lines = [line for output in cell.outputs for line in output.text.splitlines()]
        lines = [line for line in lines if line.strip()]
        if lines and all(line.startswith(PLACEHOLDERS) for line in lines):
            cell.metadata.setdefault("tags", []).append("remove-output")


def executed_line(executed: Path, mode: str) -> str:
    """When, on what and with which PyTorch a notebook page's outputs were made: the
    executed copy's time, and this machine (the book is built where the notebooks ran)."""
    when = dt.datetime.fromtimestamp(executed.stat().st_mtime, dt.UTC)
    provenance = results.provenance(command="make book", quick=mode == "quick")
    machine = results.Record("book", {}, provenance)
    return (
        f"*Executed {when:%Y-%m-%d %H:%M} UTC in {mode} mode on {machine.hardware}, "
        f"with PyTorch {torch.__version__}.*"
    )


def notebook_page(executed: Path, page: Path, url: str | None) -> None:
    """Copy an executed notebook to its page, with when and on what it ran
    (:func:`executed_line`) and its "open in Colab" link (if ``url`` gives one) as a
    paragraph under its opening card (the title), without its GPU prose's
    cells where this book has no GPU story (:func:`hide_gpu_cells`), and without the
    exercises' placeholder lines (:func:`hide_placeholder_outputs`)."""
    notebook = nbformat.read(executed, as_version=4)
    said = [executed_line(executed, notebook_mode(notebook, executed.parent))]
    said += hosted.open_in_links([executed.name], url)
    notebook.cells.insert(
        hosted.after_card(notebook.cells), nbformat.v4.new_markdown_cell("\n\n".join(said))
    )
    if not gpu_story_here():
        hide_gpu_cells(notebook)
    hide_placeholder_outputs(notebook)
    nbformat.write(notebook, page)


def assemble(executed: Executed, source: Path = SOURCE_DIR, teacher: bool = False) -> Path:
    """Write the book's Sphinx project to ``source`` (emptied first); return it."""
    shutil.rmtree(source, ignore_errors=True)
    (source / "notebooks").mkdir(parents=True)
    (source / "docs").mkdir()
    (source / "ledger").mkdir()
    url = hosted.repository_url()
    for name in run_times.series_notebooks():
        notebook_page(executed.directory / name, source / "notebooks" / name, url)
    kit_pages = (*KIT_PAGES, *TEACHER_PAGES) if teacher else KIT_PAGES
    for page in (*kit_pages, *RESULT_PAGES):
        (source / "docs" / page).write_text(_docs_page(page))
    machines = judged_machines()
    for machine in machines:
        (source / "ledger" / f"{machine}.md").write_text(ledger_page(machine))
    (source / "index.md").write_text(front_page(executed, machines, kit_pages))
    return source


def build(directory: Path | None = None, out: Path = HTML_DIR, teacher: bool = False) -> Path:
    """Build the book from the executed notebooks (:func:`find_executed`) into ``out``.

    Sphinx runs with warnings as errors: a broken cross-reference or a missing page stops
    the build with Sphinx's message, rather than leaving a silently broken page.
    """
    try:
        from sphinx.cmd.build import build_main
    except ImportError:
        raise UsageError(
            'the book needs its extra: pip install -c constraints.txt -e ".[book]" '
            "(make book installs it)"
        ) from None
    if out.exists() and any(out.iterdir()) and not (out / ".buildinfo").is_file():
        raise UsageError(
            f"{display_path(out)} holds files that are not a built book: give --out a new or "
            "empty folder (a built book there is replaced)"
        )
    executed = find_executed(directory)
    source = assemble(executed, teacher=teacher)
    shutil.rmtree(out, ignore_errors=True)
    argv = ["-q", "-W", "--keep-going", "-b", "html", "-c", str(CONF_DIR), str(source), str(out)]
    argv += ["-d", str(BOOK_DIR / "doctrees")]
    if build_main(argv) != 0:
        raise UsageError(f"Sphinx could not build the book from {display_path(source)} (above)")
    print(
        f"book built from {display_path(executed.directory)} ({executed.mode} mode) in "
        f"{display_path(out)}; open {display_path(out / 'index.html')}"
    )
    return out
