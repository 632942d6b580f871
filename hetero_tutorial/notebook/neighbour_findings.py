"""Notebook 00's section 6, busy means contended: what the busy-machine guard read during a
study, and the pinned loop beside its neighbours (the table and the findings)."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from IPython.display import Markdown

from hetero_tutorial.core import machine_load
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.studies.neighbours import CASES, NeighbourRun
from hetero_tutorial.studies.threads import MIN_PAIRS


def guard_reading(figures: object) -> str:
    """What the busy-machine guard read while the study that returned ``figures`` ran."""
    found = machine_load.readings_of(figures)
    if not found:
        return "The busy-machine guard took no reading of this study (it is switched off)."
    return " ".join(r.line() if r.busy else r.quiet_line() for r in found)


def neighbour_table(runs: Sequence[NeighbourRun]) -> Markdown:
    """One row per way the pinned loop ran, each column the median of its rounds and their
    range: its speed, its wait, others' load on its CPU and anywhere; and how many rounds
    the guard judged."""

    def each(mine: list[NeighbourRun], read, form: str) -> str:
        found = [value for r in mine if (value := read(r)) is not None]
        if not found:
            return "—"
        middle, low, high = (form.format(v) for v in (median(found), min(found), max(found)))
        return middle if low == high else f"{middle} ({low}-{high})"

    rows = []
    for case in CASES:
        mine = sorted((r for r in runs if r.case == case), key=lambda r: r.round)
        if not mine:
            continue
        rows.append(
            {
                "case": case,
                "calls_per_s": each(mine, lambda r: r.calls_per_s, "{:,.0f}"),
                "wait": each(mine, lambda r: r.wait_share, "{:.2f}"),
                "on_its_cpu": each(mine, lambda r: r.others_on_its_cpu, "{:.2f}"),
                "anywhere": each(mine, lambda r: r.others_anywhere, "{:.2f}"),
                "guard": f"{sum(r.judged for r in mine)} of {len(mine)}",
            }
        )
    return markdown_table(
        rows,
        {
            "case": "the loop ran",
            "calls_per_s": "calls/s: median (rounds' range)",
            "wait": "wait per CPU second",
            "on_its_cpu": "others on its CPU (cores)",
            "anywhere": "others anywhere (cores)",
            "guard": "judged",
        },
    )


def _speed_against_alone(runs: Sequence[NeighbourRun], case: str) -> Spread:
    alone = {r.round: r.calls_per_s for r in runs if r.case == CASES[0]}
    beside = {r.round: r.calls_per_s for r in runs if r.case == case}
    rounds = sorted(alone.keys() & beside.keys())
    ratios = [beside[i] / alone[i] for i in rounds]
    return Spread.of_ratios(ratios, per="round")


READINGS = {
    "as fast": "within 10% of its time alone in every round: as fast, by this measure",
    "slower": "more than 10% longer than alone in every round (speed under 0.91x)",
    "faster": "more than 10% shorter than alone in every round: the loop alone ran slower, "
    "which this study does not explain",
    "no clear effect": "more than 10% longer or shorter in some rounds only: no clear effect",
}
"""How a neighbour case read against the loop alone, by its rounds' range: 10% of time, so
a speed under 1/1.1 (0.909x, which prints as 0.91x) is more than 10% longer."""


def _reading(runs: Sequence[NeighbourRun], case: str) -> tuple[Spread, str]:
    """The case's speed against alone, and its reading: a key of :data:`READINGS`, or a
    no-verdict sentence (one round, or fewer than the series' minimum of paired repeats)."""
    spread = _speed_against_alone(runs, case)
    rounds = len({r.round for r in runs if r.case == case})
    if not spread.measured:
        return spread, "one round gives no spread: no verdict on a change in speed"
    if rounds < MIN_PAIRS:
        return spread, f"no verdict: {rounds} rounds, and a verdict needs {MIN_PAIRS}"
    low, high = sorted((spread.low, spread.high))
    if low > 1 / 1.1 and high < 1.1:
        return spread, "as fast"
    if high < 1 / 1.1:
        return spread, "slower"
    return spread, "faster" if low > 1.1 else "no clear effect"


def neighbour_findings(runs: Sequence[NeighbourRun], guess: str | None) -> list[str]:
    """What the neighbour study found, each comparison with the side it came out on, and
    the learner's guess (``"as fast"`` or ``"slower"``) beside it."""
    alone = [r for r in runs if r.case == CASES[0]]
    if not all(r.judged for r in alone):
        return [
            "The loop alone was itself held back (others ran on its CPU while it waited), so "
            "this machine is busy now: no verdict on the neighbours. Close other programs "
            "and run the cell again."
        ]
    lines = []
    for case in CASES[1:]:
        spread, reading = _reading(runs, case)
        side = READINGS.get(reading, reading)
        mine = [r for r in runs if r.case == case]
        if waited := sum(not r.judged for r in mine):  # the guard's own catch, shown here
            side += (
                f". The guard judged {len(mine) - waited} of {len(mine)} rounds: the loop "
                "waited for a CPU, which is what it catches; any other study would print "
                "'not judged' here, and this one shows why"
            )
        lines.append(
            f"{case[0].upper()}{case[1:]}, the loop ran at {spread} its speed alone: {side}."
        )
    _, reading = _reading(runs, CASES[1])
    if guess not in ("as fast", "slower"):
        lines.append('Write "as fast" or "slower" into MY_NEIGHBOUR_GUESS to compare.')
    elif reading not in READINGS:
        lines.append(f'You guessed "{guess}"; {reading}: run more rounds to set it against.')
    elif reading not in ("as fast", "slower"):
        lines.append(f'You guessed "{guess}"; the loop ran {reading}: neither of the two.')
    else:
        held = guess == reading
        lines.append(
            f'You guessed "{guess}" beside a neighbour on another core; it ran {reading}: '
            f"{'your guess held' if held else 'your guess did not hold'}."
        )
    return lines
