"""Notebook 08's section 6: the same MLP forward, eager and compiled, on every device at
each width and batch. Its table; per mode, where an accelerator starts to win; per batch,
how the compiled forward fares as the call grows; and the plain forward against the side of
1 that section 2's compiled act took (:mod:`~hetero_tutorial.notebook.compile_report`
writes the rest of the notebook)."""

from __future__ import annotations

import math

from hetero_tutorial.core.findings import Check, Expectation, Finding
from hetero_tutorial.core.machine_load import NOT_JUDGED, judged, withheld
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.notebook.compile_report import gain_spread
from hetero_tutorial.speed import cpu_forms
from hetero_tutorial.studies.compile_rows import GridRow, SpeedupRow, crossovers_by_mode
from hetero_tutorial.studies.compiling import HIDDEN


def _paired(eager: GridRow, row: GridRow) -> Spread:
    """Eager's time over ``row``'s, repeat by repeat: the median and range of the ratios."""
    ratios = [e / c for e, c in zip(eager.samples, row.samples, strict=True)]
    return Spread.of_ratios(ratios, per="repeat")


def _word(spread: Spread, busy: bool) -> str:
    """A cell's verdict: compiled faster or slower (every repeat on one side of 1), no clear
    effect (across or at 1), no verdict (too few repeats, or none), not judged (``busy``)."""
    if busy or not spread.decides:
        return NOT_JUDGED if busy else "no verdict"
    low, high = sorted((spread.low, spread.high))
    return "compiled faster" if low > 1 else "compiled slower" if high < 1 else "no clear effect"


def grid_table(rows: list[GridRow]) -> str:
    """Per device, width and batch: eager's time over each compiled mode's, the median of
    their paired repeats' ratios (as :func:`forward_finding` reads it), their range and
    what it says, as text."""
    eager = {(r.device, r.width, r.batch_size): r for r in rows if r.mode == "eager"}
    busy = withheld(rows) is not None
    lines = ["device   mode         width  batch  eager/mode  repeats' range  verdict"]
    for r in rows:
        if r.mode == "eager":
            continue
        base = eager[(r.device, r.width, r.batch_size)]
        spread = _paired(base, r)
        ratio = spread.value
        if not math.isfinite(ratio):  # no repeats kept: the medians
            ratio = base.seconds / r.seconds
        span = f"{spread.low:.2f}-{spread.high:.2f}x" if spread.measured else "-"
        lines.append(
            f"{r.device:<8} {r.mode:<12} {r.width:>5} {r.batch_size:>6}  {ratio:>9.2f}x  "
            f"{span:<14}  {_word(spread, busy)}"
        )
    return "\n".join(lines) if len(lines) > 1 else "No compiled mode ran here: no grid to compare."


@judged()
def crossover_lines(found: dict[str, dict[int, int | None]]) -> list[str]:
    """Per mode, the accelerator's crossover width at each batch size (or none measured)."""
    if not found:
        return [
            "Only the CPU was measured here: no crossover to move (the ratios above are the CPU's)."
        ]
    lines = []
    for mode, by_batch in found.items():
        widths = ", ".join(
            f"batch {b:,}: {w if w is not None else 'none measured'}" for b, w in by_batch.items()
        )
        lines.append(f"- {mode}: the smallest width at which the accelerator wins, {widths}")
    return lines


FORMS_CAUSE = (
    "different code: the act is the paired actor-critic, written in the CPU forms inside a "
    "CPU graph (speed/cpu_forms.py), this MLP plain nn.Linear and nn.Tanh layers"
)


def _grid_spreads(grid: list[GridRow]) -> dict[tuple[int, int], Spread]:
    """Per (width, batch) on the CPU: eager over compiled, the median and range of the paired
    repeats (as section 2's speed-ups)."""
    rows = {(r.mode, r.width, r.batch_size): r for r in grid if r.device == "cpu"}
    spreads = {}
    for (mode, width, batch), row in rows.items():
        eager = rows.get(("eager", width, batch))
        if mode != "compile" or eager is None:
            continue
        spreads[(width, batch)] = _paired(eager, row)
    return spreads


@judged()
def grid_trend_lines(grid: list[GridRow]) -> list[str]:
    """Per batch on the CPU, the compiled forward's speed-up from the narrowest width to the
    widest, against what a fixed cost per call predicts: a loss shrinks (a gain grows) as the
    call grows. Named only where the two widths' ranges of paired repeats do not overlap;
    every width is listed, and "not steadily" said where a middle one breaks the order."""
    spreads, lines = _grid_spreads(grid), []
    for batch in sorted({b for _, b in spreads}):
        widths = sorted(w for w, b in spreads if b == batch)
        if len(widths) < 2:
            continue
        small, large = spreads[(widths[0], batch)], spreads[(widths[-1], batch)]
        values = [spreads[(w, batch)].value for w in widths]
        said = f"batch {batch:,}: " + ", ".join(
            f"width {w} {v:.2f}x" for w, v in zip(widths, values, strict=True)
        )
        if values != sorted(values) and values != sorted(values, reverse=True):
            said += " (not steadily)"
        if not (small.decides and large.decides):
            lines.append(f"{said}; too few repeats to tell a trend (a verdict needs 5).")
        elif large.low > small.high:
            lines.append(
                f"{said}: the larger call fared better, as a fixed cost per call predicts."
            )
        elif large.high < small.low:
            lines.append(
                f"{said}: the larger call fared worse, which a fixed cost per call cannot "
                "explain: the time is in the compiled code itself."
            )
        else:
            lines.append(f"{said}: their ranges overlap, no clear trend with width.")
    return lines


def forward_finding(
    grid: list[GridRow], speedups: list[SpeedupRow], forms: bool | None = None
) -> Finding | str:
    """The plain MLP forward compiled on the CPU (the grid's width nearest the act's, at its
    smallest batch) against the side of 1 that section 2's act took at its smallest batch:
    one forward would take the same side. Where it does not, the causes this run can check:
    the code differs (``forms``: the CPU forms on, by default :data:`cpu_forms.CPU_FORMS`),
    and the batch and width differ."""
    spreads = _grid_spreads(grid)
    acts = sorted((r for r in speedups if r.piece == "act"), key=lambda r: r.size)
    if not spreads or not acts:
        return "No compiled act and compiled forward to set side by side here."
    act = acts[0]
    width = min({w for w, _ in spreads}, key=lambda w: abs(w - HIDDEN))
    batch = min(b for w, b in spreads if w == width)
    side = gain_spread(act).beyond(1.0)
    subject = f"The plain MLP forward compiled (width {width}, batch {batch})"
    if side is None:
        unset = (
            "not judged (measured on a busy machine)."
            if withheld(grid, speedups)
            else f"section 2's act at batch {act.size:,} showed no clear effect, so it "
            "sets no side of 1 to compare."
        )
        return f"{subject}: {spreads[(width, batch)].value:.2f}x eager; {unset}"
    took = "faster" if side else "slower"
    subject = (
        f"The plain MLP forward compiled (width {width}, batch {batch}; section 2's act at "
        f"batch {act.size:,}: {act.speedup:.2f}x, {took})"
    )
    what = "the side the act took"
    expected = Expectation.at_least(1.0, what) if side else Expectation.at_most(1.0, what)
    forms = cpu_forms.CPU_FORMS if forms is None else forms
    return Finding(
        subject,
        spreads[(width, batch)],
        expected,
        checks=(
            Check(FORMS_CAUSE, forms),
            Check(f"another batch ({batch:,}, the act's {act.size:,})", batch != act.size),
            Check(f"another width ({width}, the act's {HIDDEN})", width != HIDDEN),
        ),
        figures=(grid, speedups),
    )


def grid_lines(grid: list[GridRow], speedups: list[SpeedupRow]) -> list[str]:
    """What the grid says, line by line: the crossovers, the trend with width, and the plain
    forward against section 2's act."""
    return [
        *crossover_lines(crossovers_by_mode(grid)),
        *grid_trend_lines(grid),
        str(forward_finding(grid, speedups)),
    ]
