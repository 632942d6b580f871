"""The workshop plan's teaching paths: the notebooks of each session, their prerequisites
(read from the cards), and each session's minutes, priced from the numbers: reading (prose
and what the notebooks print), predicting, each exercise at its estimate, questions, the
run, set-up and breaks. :mod:`tools.docs.kit` writes :func:`paths` into
``docs/workshop.md``.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from functools import cache

import nbformat

from hetero_tutorial.app import run_times
from hetero_tutorial.core import results
from tools.docs import answers
from tools.docs.cards import NOTEBOOKS_DIR, WORDS_PER_MINUTE, reading_minutes, run_time
from tools.docs.workshop import Block, by_machine, in_class, notebook_name

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
    card = nbformat.read(NOTEBOOKS_DIR / notebook_name(number), as_version=4).cells[0].source
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


def class_run_minutes(number: str, modes: dict[str, list[results.Record]]) -> float | None:
    """Minutes notebook ``number`` runs in class on a machine: in the mode its block's rule
    picks there (:func:`_in_class`), from the median of its records; None if not recorded."""
    name = notebook_name(number)
    full = modes.get("full", [])
    mode = "full" if in_class(Block("", (number,)), full) == "full mode" else "quick"
    seconds = run_times.notebook_medians(modes.get(mode, [])).get(name)
    return None if seconds is None else seconds / 60


def printed_minutes(number: str, modes: dict[str, list[results.Record]]) -> float:
    """Minutes to read what notebook ``number`` prints in quick mode: the median of the words
    a machine's run-time records counted, or where its records predate the count, of every
    machine's (a notebook prints about the same words anywhere); 0 where none counted it."""

    def counted(records: list[results.Record]) -> list[int]:
        name = notebook_name(number)
        return [r.data["printed_words"][name] for r in records
                if name in r.data.get("printed_words", {})]  # fmt: skip

    counts = counted(modes.get("quick", [])) or counted(_every_quick_run())
    return statistics.median(counts) / WORDS_PER_MINUTE if counts else 0.0


@cache
def _every_quick_run() -> list[results.Record]:
    """Every machine's quick-mode run-time records, read from disk once per process (a page
    of paths asks for them per notebook and machine)."""
    return [r for runs in by_machine().values() for r in runs.get("quick", [])]


def teaching_minutes(
    number: str, modes: dict[str, list[results.Record]], questions: int | None = None
) -> dict[str, float]:
    """A notebook's minutes in class besides its run: reading its prose and what it prints
    (150 words a minute), predicting, its exercises (each at its estimate) and its
    discussion questions (``questions`` of them, or all)."""
    exercises = answers.notebook_exercises().get(number, [])
    asked = len(answers.discussion_questions().get(number, []))
    return {
        "read": reading_minutes(notebook_name(number)) + printed_minutes(number, modes),
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
    machines = by_machine()
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
        medians = run_times.notebook_medians(modes.get("quick", []))
        names = [notebook_name(n) for n in numbers]
        if all(name in medians for name in names):
            said.append(f"{run_time(sum(medians[name] for name in names))} on {hardware}")
    return "; ".join(said) or "not recorded"
