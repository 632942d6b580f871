"""Small tables for notebooks: Markdown that renders in JupyterLab and reads as text in a log.

:func:`markdown_table` builds every table; :func:`copies_table` and :func:`counted_line` are
the ones notebooks 01 and 03 both show, a PPO iteration's copies counted by phase.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from IPython.display import Markdown

from hetero_tutorial.core import machine_load

Formatter = Callable[[Any], str]


def markdown_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Mapping[str, str] | Sequence[str],
    formats: Mapping[str, Formatter] | None = None,
    timed: bool = True,
) -> Markdown:
    """A Markdown table of ``rows``; ``columns`` maps row keys to headers (or lists the keys).

    ``formats`` gives a function per key that turns a value into text (default ``str``;
    None and missing values show as an em dash). ``timed``: the rows are figures of the
    study just run, which get the guard's mark under the table where it ran on a busy
    machine (:func:`machine_load.busy_mark`); False for counts and loaded records.
    """
    headers = dict(columns) if isinstance(columns, Mapping) else {key: key for key in columns}
    formats = formats or {}

    def cell(row: Mapping[str, Any], key: str) -> str:
        value = row.get(key)
        if value is None:
            return "—"
        # a "|" inside a cell (a regular expression's alternatives) would end the cell
        return formats.get(key, str)(value).replace("|", "\\|")

    lines = [
        "| " + " | ".join(headers.values()) + " |",
        "|" + "---|" * len(headers),
        *("| " + " | ".join(cell(row, key) for key in headers) + " |" for row in rows),
    ]
    mark = machine_load.busy_mark() if timed else ""
    if mark:
        lines += ["", f"*{mark.strip()}*"]
    return Markdown("\n".join(lines))


def copies_table(counted: dict[str, Any]) -> Markdown:
    """A placement's copies by phase (:func:`hetero_tutorial.studies.copies.ppo_copies`)."""
    rows = [{"phase": phase, **found} for phase, found in counted["by_phase"].items()]
    if not rows:
        return Markdown(f"{counted['placement']}: {counted.get('note', 'no copies')}.")
    return markdown_table(
        rows,
        {
            "phase": "phase",
            "count_per_iteration": "copies per iteration",
            "count_per_env_step": "per env step",
            "bytes_per_iteration": "bytes per iteration",
        },
        {"count_per_env_step": "{:.4f}".format, "bytes_per_iteration": "{:,.0f}".format},
        timed=False,
    )


def counted_line(counted: dict[str, Any]) -> str:
    where = counted["counted_on"]
    on = (
        "the meta device (a stand-in: the code's copies, no data moved)"
        if where == "meta"
        else where
    )
    return (
        f"{counted['placement']} on {counted['env_id']}: {counted['copies_per_iteration']:g} "
        f"copies per iteration of {counted['steps_counted']:,} steps, "
        f"{counted['copies_per_env_step']:.4f} per environment step, counted on {on}."
    )


MEDIANS_APART = 0.05
"""How far the ratio of two columns' medians may differ from the median of the paired ratios
before a table says why they differ."""


def paired_note(rows: Sequence[tuple[str, float, float, float]], unit: str) -> str:
    """A note under a table of two medians and their paired ratio, where the medians divided
    give another ratio (past :data:`MEDIANS_APART`): ``rows`` hold each row's name, the two
    columns' medians in the order the ratio divides them, and the median paired ratio;
    ``unit``: what a pair is ("round", "iteration"). "" where every row agrees."""
    apart = [
        f"{name} {top / bottom:.2f}x against {paired:.2f}x"
        for name, top, bottom, paired in rows
        if abs(top / bottom / paired - 1) > MEDIANS_APART
    ]
    if not apart:
        return ""
    return (
        "\n\nThe two columns' medians, divided, differ from the paired ratio "
        f"({'; '.join(apart)}): each median comes from its own {unit}s, and the speed moved "
        f"from {unit} to {unit}, so the verdicts read the paired ratio, each {unit}'s two "
        "timings side by side."
    )
