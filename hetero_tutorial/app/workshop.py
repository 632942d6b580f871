"""The workshop plan's generated sections: its blocks, what each teaches, how long each
path through the series takes, and the night before.

``docs/workshop.md`` must run a class as written, so every duration on it is summed from
numbers, never typed: a block's run time from the reference run-time records, its reading
time from its notebook's prose, its exercises and questions counted from their sources and
priced at the minutes below. :mod:`hetero_tutorial.app.kit` writes these sections into
the page.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass

import nbformat

from hetero_tutorial.app import answers, readme
from hetero_tutorial.app.cards import (
    NOTEBOOKS_DIR,
    WORDS_PER_MINUTE,
    longest_cell,
    reading_minutes,
    run_time,
)
from hetero_tutorial.core import results

CELL_LIMIT_S = 180
"""The longest a class should wait on one cell (the series' rule for full mode)."""
NOTEBOOK_LIMIT_S = 300
"""The longest a class should wait on one notebook (the series' rule for full mode)."""


@dataclass(frozen=True)
class Block:
    """One block of a workshop: a few notebooks taught together."""

    title: str
    notebooks: tuple[str, ...]
    """Their numbers, e.g. ``("01", "02")``."""


BLOCKS = (
    Block("Honest timing and this machine", ("00",)),
    Block("The all-accelerator baseline and its profile", ("01", "02")),
    Block("The hybrid split and CPU threads", ("03",)),
    Block("Replay buffers and DDPG", ("04",)),
    Block("The dynamic allocator", ("05",)),
    Block("Rollout and update at the same time", ("06",)),
    Block("Environments on the device", ("07",)),
    Block("Compile and CUDA graphs", ("08",)),
    Block("GAIL: where the discriminator runs", ("09",)),
    Block("The claims ledger", ("10",)),
)
"""The workshop's blocks in teaching order; every notebook of the series is in one."""


def _names(block: Block) -> list[str]:
    return [name for name in readme.series_notebooks() if name[:2] in block.notebooks]


def _block_seconds(block: Block, medians: dict[str, float]) -> float | None:
    names = _names(block)
    if not names or any(name not in medians for name in names):
        return None
    return sum(medians[name] for name in names)


def _in_class(block: Block, full_runs: list[results.Record]) -> str:
    """Which mode to run a block in, in class: full mode where each of its notebooks stays
    within the series' limits on this machine's records, else quick mode."""
    if not full_runs:
        return "quick mode (full mode not recorded)"
    medians = readme.notebook_medians(full_runs)
    for name in _names(block):
        if name not in medians:
            return f"quick mode ({name[:2]} not recorded in full mode)"
        cell = longest_cell(full_runs, name)
        if medians[name] > NOTEBOOK_LIMIT_S:
            return f"quick mode; full mode the night before ({name[:2]} takes longer than 5 min)"
        if cell is not None and cell[1] > CELL_LIMIT_S:
            return (
                f"quick mode; full mode the night before ({name[:2]} has a cell of "
                f"{run_time(cell[1])})"
            )
    return "full mode"


def _cell(seconds: float | None) -> str:
    return "not recorded" if seconds is None else run_time(seconds)


def _longest(block: Block, full_runs: list[results.Record]) -> str:
    found = [
        (cell[1], name[:2], cell[0])
        for name in _names(block)
        if (cell := longest_cell(full_runs, name)) is not None
    ]
    if not found:
        return "not recorded"
    seconds, number, section = max(found)
    return f"{run_time(seconds)} ({number}: *{section}*)"


def _fewer_runs(quick: list[results.Record], full: list[results.Record]) -> str:
    """Which notebooks fewer runs recorded (a notebook added to the series after the first
    runs), with their counts: ``" (06: 1 quick and 1 full)"``, or ``""``."""
    notes = []
    for name in readme.series_notebooks():
        counts = [sum(name in r.data["notebook_seconds"] for r in runs) for runs in (quick, full)]
        if counts != [len(quick), len(full)]:
            notes.append(f"{name[:2]}: {counts[0]} quick and {counts[1]} full")
    return f" ({'; '.join(notes)})" if notes else ""


def workshop_blocks() -> str:
    """Per reference machine, each block's run time in quick and in full mode (the medians
    of the recorded runs), its longest cell in full mode, and the mode to run it in class."""
    by_machine = _by_machine()
    if not by_machine:
        return "No run times recorded yet (`python -m hetero_tutorial run --reference`)."
    parts = []
    for hardware, modes in by_machine.items():
        quick, full = modes.get("quick", []), modes.get("full", [])
        quick_medians, full_medians = readme.notebook_medians(quick), readme.notebook_medians(full)
        lines = [
            f"On {hardware}, the medians of {len(quick)} quick and {len(full)} full recorded "
            f"runs{_fewer_runs(quick, full)}:",
            "",
            "| block | notebooks | quick mode | full mode | longest cell, full mode | in class |",
            "|---|---|---|---|---|---|",
        ]
        for block in BLOCKS:
            lines.append(
                f"| {block.title} | {', '.join(block.notebooks)} "
                f"| {_cell(_block_seconds(block, quick_medians))} "
                f"| {_cell(_block_seconds(block, full_medians))} "
                f"| {_longest(block, full)} | {_in_class(block, full)} |"
            )
        for mode, runs in (("quick", quick), ("full", full)):
            if runs:
                total, note = readme.series_total(runs)
                lines.append("")
                lines.append(
                    f"The whole series in {mode} mode: {run_time(total)}"
                    + (f" ({note})." if note else ".")
                )
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _objectives(name: str) -> list[str]:
    """The bullets of a notebook's "What you will learn", its links made relative to docs/."""
    card = nbformat.read(NOTEBOOKS_DIR / name, as_version=4).cells[0].source
    start = card.index("**What you will learn**")
    end = card.index("**Prerequisites**", start)
    text = card[start:end].replace("../docs/", "")
    bullets = [" ".join(part.split()) for part in text.split("\n- ")[1:]]
    return [f"- {bullet}" for bullet in bullets]


def objectives() -> str:
    """Per block, what its notebooks teach: their cards' "What you will learn", verbatim."""
    parts = []
    for block in BLOCKS:
        lines = [f"**{block.title}** ({', '.join(block.notebooks)})", ""]
        for name in _names(block):
            lines += _objectives(name)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


PREDICT_MINUTES = 3
"""Per notebook: saying what it asks and writing down the predictions its prompts ask for."""
EXERCISE_MINUTES = {
    "best_batch_per_width": 6,
    "rollout_copies": 5,
    "inclusive_share": 6,
    "rollout_bytes": 5,
    "ring_slots": 4,
    "td_target": 6,
    "plan_seconds": 6,
    "ideal_speedup": 6,
    "predicted_lags": 10,
    "wrap_angle": 4,
    "pendulum_cost": 6,
    "largest_gain": 5,
    "speedup_and_time_saved": 5,
}
"""Minutes per exercise (the name its cell passes to ``check``): the author's estimate for a
learner who writes Python daily, for a try, a hint and the check. A loop over a table or
one formula: 4-6; a simulation with a schedule to get right (``predicted_lags``): 10."""
QUESTION_MINUTES = 3
"""Per discussion question, for a class; a study group may take longer."""
SETUP_MINUTES = 15
"""Per session: seats open JupyterLab and the first notebook, the instructor checks that
every seat's ``doctor`` line is green (installed the night before)."""
BREAK_MINUTES = 15
BREAK_EVERY = 2
"""A break after every second notebook of a session (none after its last)."""
HALF_DAY_MINUTES = 210


@dataclass(frozen=True)
class TeachingPath:
    """A named way through the series: the notebooks of each session, in teaching order."""

    name: str
    sessions: tuple[tuple[str, ...], ...]
    questions: int | None = None
    """discussion questions per notebook the instructor picks (None: all of them)"""
    seats_run: tuple[str, ...] = ()
    """notebooks every seat runs in quick mode the night before, for the records the
    path's ledger reads (its prerequisites that the session does not teach)"""


HALF_DAY = TeachingPath(
    "The half day: honest timing, the baseline, the hybrid split, overlap, the ledger",
    (("00", "01", "03", "06", "10"),),
    questions=1,
    seats_run=("02", "04", "05", "09"),
)
FULL_PATH = TeachingPath(
    "The full path: every notebook, over two days",
    (("00", "01", "02", "03", "04"), ("05", "06", "07", "08", "09", "10")),
)
PATHS = (HALF_DAY, FULL_PATH)

PREREQUISITES = re.compile(r"\*\*Prerequisites\*\*:(.*?)(?:\.\s|\*\*)", re.DOTALL)
NUMBERS = re.compile(r"\b(\d\d)(?:-(\d\d))?\b")


def prerequisites(number: str) -> tuple[set[str], set[str]]:
    """What notebook ``number``'s card says it needs: ``(taught, recorded)``, the notebooks a
    learner must have worked through, and those whose records it reads (a line that speaks
    of records: "notebooks 00-05 and 09 write the records read here"), read from its card's
    **Prerequisites** line."""
    card = nbformat.read(NOTEBOOKS_DIR / _notebook(number), as_version=4).cells[0].source
    found = PREREQUISITES.search(card)
    said = found.group(1) if found else ""
    numbers = set()
    for first, last in NUMBERS.findall(said):
        numbers |= {f"{n:02d}" for n in range(int(first), int(last or first) + 1)}
    return (set(), numbers) if "record" in said else (numbers, set())


def unmet_prerequisites(path: TeachingPath) -> list[str]:
    """Each prerequisite the path leaves unmet: taught ones must come earlier in the path,
    recorded ones earlier or among the seats' night-before runs."""
    unmet, seen = [], []
    for session in path.sessions:
        for number in session:
            taught, recorded = prerequisites(number)
            unmet += [f"{number} needs {n} taught first" for n in sorted(taught - set(seen))]
            have = set(seen) | set(path.seats_run)
            unmet += [f"{number} reads {n}'s records" for n in sorted(recorded - have)]
            seen.append(number)
    return unmet


def _by_machine() -> dict[str, dict[str, list[results.Record]]]:
    found: dict[str, dict[str, list[results.Record]]] = {}
    for (hardware, mode), runs in readme.run_times_by_machine().items():
        found.setdefault(hardware, {})[mode] = runs
    return found


def _notebook(number: str) -> str:
    return next(name for name in readme.series_notebooks() if name.startswith(number))


def class_run_minutes(number: str, modes: dict[str, list[results.Record]]) -> float | None:
    """Minutes notebook ``number`` runs in class on a machine: in the mode its block's rule
    picks there (:func:`_in_class`), from the median of its records; None if not recorded."""
    name = _notebook(number)
    full = modes.get("full", [])
    mode = "full" if _in_class(Block("", (number,)), full) == "full mode" else "quick"
    seconds = readme.notebook_medians(modes.get(mode, [])).get(name)
    return None if seconds is None else seconds / 60


def printed_minutes(number: str, modes: dict[str, list[results.Record]]) -> float:
    """Minutes to read what notebook ``number`` prints in quick mode on a machine, from its
    run-time records (their median); 0 where no record counted it."""
    counts = [
        r.data["printed_words"][_notebook(number)]
        for r in modes.get("quick", [])
        if _notebook(number) in r.data.get("printed_words", {})
    ]
    return statistics.median(counts) / WORDS_PER_MINUTE if counts else 0.0


def teaching_minutes(
    number: str, modes: dict[str, list[results.Record]], questions: int | None = None
) -> dict[str, float]:
    """A notebook's minutes in class besides its run: reading its prose and what it prints
    (150 words a minute), predicting, its exercises (each at its estimate) and its
    discussion questions (``questions`` of them, or all)."""
    exercises = answers.notebook_exercises().get(number, [])
    asked = len(answers.discussion_questions().get(number, []))
    return {
        "read": reading_minutes(_notebook(number)) + printed_minutes(number, modes),
        "predict": PREDICT_MINUTES,
        "exercises": sum(EXERCISE_MINUTES[name] for name in exercises),
        "discuss": min(asked, asked if questions is None else questions) * QUESTION_MINUTES,
    }


def session_minutes(
    session: tuple[str, ...], modes: dict[str, list[results.Record]], questions: int | None = None
) -> float | None:
    """A session's minutes on one machine: set-up, every notebook's teaching and run, and
    the breaks; None where a notebook's run in class is not recorded there."""
    runs = [class_run_minutes(number, modes) for number in session]
    if None in runs:
        return None
    teaching = sum(sum(teaching_minutes(n, modes, questions).values()) for n in session)
    breaks = (len(session) - 1) // BREAK_EVERY * BREAK_MINUTES
    return SETUP_MINUTES + teaching + sum(runs) + breaks


def _clock(minutes: float) -> str:
    """Minutes since a session began, as its clock reads: ``"1:05"``."""
    return f"{int(minutes) // 60}:{int(minutes) % 60:02d}"


def _schedule(
    session: tuple[str, ...], hardware: str, modes: dict, questions: int | None
) -> list[str]:
    lines = [
        f"| start | notebook | read | predict | exercises | discuss | run in class on {hardware} |",
        "|---|---|---|---|---|---|---|",
        f"| 0:00 | set-up | | | | | {SETUP_MINUTES} min |",
    ]
    clock = float(SETUP_MINUTES)
    for index, number in enumerate(session, start=1):
        minutes = teaching_minutes(number, modes, questions)
        run = class_run_minutes(number, modes) or 0.0
        cells = " | ".join(f"{minutes[key]:.0f} min" for key in minutes)
        lines.append(f"| {_clock(clock)} | {number} | {cells} | {run:.1f} min |")
        clock += sum(minutes.values()) + run
        if index % BREAK_EVERY == 0 and index < len(session):
            lines.append(f"| {_clock(clock)} | break | | | | | {BREAK_MINUTES} min |")
            clock += BREAK_MINUTES
    return lines


def paths() -> str:
    """Each teaching path's sessions: a schedule with start times on the machine whose
    session takes longest, and each recorded machine's total, summed from the numbers."""
    machines = _by_machine()
    estimates = ", ".join(f"`{name}` {m}" for name, m in EXERCISE_MINUTES.items())
    parts = [
        f"Priced at: reading at {WORDS_PER_MINUTE} words a minute over each notebook's prose "
        "and what it prints in quick mode (counted by the recorded runs), "
        f"{PREDICT_MINUTES} min to predict, each exercise at its estimate in minutes "
        f"({estimates}), {QUESTION_MINUTES} min per discussion question, the run's median in "
        f"the mode of the blocks' table, {SETUP_MINUTES} min to set up each session, and a "
        f"{BREAK_MINUTES}-minute break after every {BREAK_EVERY} notebooks of a session."
    ]
    for path in PATHS:
        lines = [f"**{path.name}**"]
        if path.questions is not None:
            lines += [
                "",
                f"The instructor picks {path.questions} discussion question(s) per notebook.",
            ]
        if unmet := unmet_prerequisites(path):
            lines += ["", f"Prerequisites this path leaves unmet: {'; '.join(unmet)}."]
        if path.seats_run:
            numbers = " ".join(path.seats_run)
            lines += [
                "",
                "The night before, every seat runs the notebooks whose records the ledger reads "
                f"but the session does not teach: `python -m hetero_tutorial run --quick --only "
                f"{numbers}` ({_seat_minutes(path.seats_run, machines)}).",
            ]
        for day, session in enumerate(path.sessions, start=1):
            totals = {
                hw: session_minutes(session, modes, path.questions)
                for hw, modes in machines.items()
            }
            known = {hw: total for hw, total in totals.items() if total is not None}
            title = f"Day {day}" if len(path.sessions) > 1 else "The session"
            lines += ["", f"{title}: {', '.join(session)}."]
            if not known:
                lines.append("Not every notebook's run is recorded yet on any machine.")
                continue
            slowest = max(known, key=known.get)
            schedule = _schedule(session, slowest, machines[slowest], path.questions)
            lines += ["", *schedule, ""]
            for hardware, total in totals.items():
                said = "not every notebook recorded" if total is None else f"{total:.0f} min"
                lines.append(f"- In all on {hardware}: {said}.")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _seat_minutes(numbers: tuple[str, ...], machines: dict) -> str:
    """How long a seat's quick run of ``numbers`` took on each recorded machine."""
    said = []
    for hardware, modes in machines.items():
        medians = readme.notebook_medians(modes.get("quick", []))
        names = [_notebook(n) for n in numbers]
        if all(name in medians for name in names):
            said.append(f"{run_time(sum(medians[name] for name in names))} on {hardware}")
    return "; ".join(said) or "not recorded"


def _series_minutes(mode: str) -> Callable[[dict[str, list[results.Record]]], str]:
    def say(modes: dict[str, list[results.Record]]) -> str:
        runs = modes.get(mode, [])
        if not runs:
            return "not recorded"
        total, note = readme.series_total(runs)
        return run_time(total) + (f" ({note})" if note else "")

    return say


NIGHT_BEFORE = (
    ("Every seat: install (a large download)", "make setup", None),
    ("Every seat: the pre-flight check", "python -m hetero_tutorial doctor", None),
    ("Instructor: every notebook in full mode", "make run", _series_minutes("full")),
    ("Instructor: the book from those outputs", "make book", None),
    (
        "Optional: the book's pages in a headless browser",
        "make setup-browser, then HETERO_TUTORIAL_BOOK=build/book/html .venv/bin/python -m "
        "pytest -q -p no:cacheprovider tests/test_book_browser.py",
        None,
    ),
    (
        "Optional, instead: the quick-mode book checked as `make test` does",
        "make notebooks, then make book-test",
        _series_minutes("quick"),
    ),
)
"""The night before's steps: who runs them, the command, and what of its time a run-time
record gives (None: no record measures it)."""


def night_before() -> str:
    """The night before's steps, with the time each took on each recorded machine where a
    run-time record gives it (the notebooks' medians summed)."""
    machines = _by_machine()
    lines = []
    for number, (who, command, timing) in enumerate(NIGHT_BEFORE, start=1):
        commands = " then ".join(f"`{part.strip()}`" for part in command.split(", then"))
        if timing is None:
            said = "not recorded"
        else:
            said = "; ".join(f"{timing(modes)} on {hw}" for hw, modes in machines.items())
        lines.append(f"{number}. **{who}**: {commands}. Time: {said}.")
    return "\n".join(lines)
