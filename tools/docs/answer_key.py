"""The instructor's key, read from its Markdown (``answer_key.md``, beside this module).

The key is prose: what a seat should find for each discussion question and exercise, and
what a surprising answer usually means, written where a teacher can read and edit it as
Markdown. :mod:`tools.docs.answers` turns it into ``docs/answers.md``. A ``{name}`` in an
entry is a figure slot that :data:`tools.docs.answers.FIGURES` fills, from a reference
record (which it names) or from the exercise's own solution, so no number is typed. This
module only reads the file: which question an entry answers, and its two paragraphs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

KEY = Path(__file__).with_name("answer_key.md")
"""The key's Markdown: ``## Questions``, ``## Exercises``, ``## When a seat shows``."""


@dataclass(frozen=True)
class Answer:
    """The expected answer (or range) of one question or exercise, and what a surprise means."""

    expected: str
    surprise: str


@dataclass(frozen=True)
class SeatSign:
    """Something a seat shows in class, and what it means there."""

    shows: str
    means: str


SECTION = re.compile(r"^## (.+)$", re.M)
ENTRY = re.compile(r"^### (.+)$", re.M)
QUESTION = re.compile(r"(\d\d) Q(\d+)")
EXERCISE = re.compile(r"`(\w+)`")


def _entries(body: str) -> list[tuple[str, list[str]]]:
    """Each ``###`` entry of a section: its heading, and its paragraphs each as one line."""
    found = []
    headings = list(ENTRY.finditer(body))
    for heading, after in zip(headings, [*headings[1:], None], strict=True):
        text = body[heading.end() : after.start() if after else len(body)]
        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
        found.append((heading.group(1).strip(), paragraphs))
    return found


def _answer(heading: str, paragraphs: list[str]) -> Answer:
    """An entry's two paragraphs, ``Expect:`` then ``Surprise:``."""
    expect, surprise = "Expect: ", "Surprise: "
    if (
        len(paragraphs) != 2
        or not paragraphs[0].startswith(expect)
        or not paragraphs[1].startswith(surprise)
    ):
        raise ValueError(
            f"{KEY.name}, entry {heading!r}: write two paragraphs, one starting {expect!r} "
            f"and one starting {surprise!r}"
        )
    return Answer(paragraphs[0].removeprefix(expect), paragraphs[1].removeprefix(surprise))


Key = tuple[dict[tuple[str, int], Answer], dict[str, Answer], tuple[SeatSign, ...]]
"""The key read: its questions, its exercises and its seat signs."""


def read(path: Path = KEY) -> Key:
    """The key's questions (by notebook and question number), exercises (by name) and seat
    signs, from ``path``."""
    text = path.read_text()
    headings = list(SECTION.finditer(text))
    sections = {
        heading.group(1).strip(): text[heading.end() : after.start() if after else len(text)]
        for heading, after in zip(headings, [*headings[1:], None], strict=True)
    }
    wanted = ("Questions", "Exercises", "When a seat shows")
    if missing := [name for name in wanted if name not in sections]:
        raise ValueError(f"{path.name} has no section {', '.join(f'## {m}' for m in missing)}")
    questions, exercises = {}, {}
    for heading, paragraphs in _entries(sections["Questions"]):
        found = QUESTION.fullmatch(heading)
        if found is None:
            raise ValueError(f"{path.name}: a question's heading reads '00 Q1', not {heading!r}")
        questions[(found.group(1), int(found.group(2)))] = _answer(heading, paragraphs)
    for heading, paragraphs in _entries(sections["Exercises"]):
        found = EXERCISE.fullmatch(heading)
        if found is None:
            raise ValueError(f"{path.name}: an exercise's heading is its `name`, not {heading!r}")
        exercises[found.group(1)] = _answer(heading, paragraphs)
    signs = tuple(
        SeatSign(heading, " ".join(paragraphs))
        for heading, paragraphs in _entries(sections["When a seat shows"])
    )
    return questions, exercises, signs


QUESTIONS, EXERCISES, SEAT_SIGNS = read()
"""Each discussion question's entry, by (notebook number, question number on the page);
each exercise's, by its name (the name its cell passes to ``check``); and the symptoms the
sheet's "When a seat shows" section explains."""
