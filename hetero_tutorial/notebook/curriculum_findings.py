"""Notebook 05's curriculum (C13): the allocator through networks of growing width, measuring
again at each stage, against contenders that never measure; its table, sentences and timeline.

``summary``: :func:`hetero_tutorial.allocator.curriculum.curriculum`'s result, read through
:func:`~hetero_tutorial.allocator.curriculum.worth`.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
from IPython.display import Markdown
from matplotlib.figure import Figure

from hetero_tutorial.allocator.curriculum import contenders, worth
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.timing import Spread, format_seconds
from hetero_tutorial.notebook.tables import markdown_table


def curriculum_table(summary: dict[str, Any]) -> Markdown:
    found = worth(summary)
    allocator = found["allocator_s"]
    rows = [{"plan": "allocator (with its measuring)", "total": allocator}]
    rows += [
        {"plan": p, "total": s, "saved": s - allocator} for p, s in found["contenders"].items()
    ]
    columns = {"plan": "contender", "total": "seconds, all stages",
               "saved": "allocator saved (-: lost)"}  # fmt: skip
    return markdown_table(rows, columns, {"total": format_seconds, "saved": "{:+.2f} s".format})


@judged()
def curriculum_sentence(summary: dict[str, Any]) -> str:
    found = worth(summary)
    best, spread = found["best"], found["spread"]
    gap = abs(found["contenders"][best] - found["allocator_s"])
    verdict = {
        True: f"the allocator saved {format_seconds(gap)} against it",
        False: f"the allocator lost {format_seconds(gap)} against it",
    }.get(found["saved"], "no clear effect" + spread.noise())
    return (
        f"Over the curriculum the allocator took {format_seconds(found['allocator_s'])}, of "
        f"which {format_seconds(found['measuring_s'])} measuring; the best fixed contender "
        f"({best}) took {format_seconds(found['contenders'][best])}, {spread} the allocator's "
        f"time: {verdict}."
    )


@judged()
def curriculum_line(summary: dict[str, Any]) -> str:
    """The curriculum in one line: the allocator against the best fixed contender, its
    measuring included, and whether its choices gain enough per iteration to repay that
    measuring (after how many iterations), judged by the paired iterations' spread."""
    found = worth(summary)
    best, measuring = found["best"], found["measuring_s"]
    outcome = {True: "saved", False: "lost"}.get(found["saved"])
    gap = format_seconds(abs(found["contenders"][best] - found["allocator_s"]))
    head = f"{outcome} {gap}" if outcome else "no clear effect"
    spent = format_seconds(measuring)
    against = f"the plans {best}, one configuration here" if ", " in best else best
    text = f"Curriculum: the allocator {head} against {against}, its measuring ({spent}) included"
    best_s, best_sums = contenders(summary)[best]
    mine = summary.get("iteration_sums", {}).get("allocator", [])
    run_s = found["allocator_s"] - measuring
    if not (mine and best_sums and run_s > 0):
        return text + "."
    if list(best_sums) == list(mine):  # the contender ran as the allocator's configuration
        return f"{text}; its choices ran that same configuration, so the measuring never repays."
    gain = Spread.of_pairs(best_sums, mine, best_s / run_s, per="iteration")
    if gain.beyond(1.0):
        per_iteration = (best_s - run_s) / (len(mine) * len(summary["stages"]))
        return (
            f"{text}; its choices ran {gain} the contender's speed, past the noise: the "
            f"measuring repays after about {measuring / per_iteration:,.0f} iterations."
        )
    said = "slower" if gain.beyond(1.0) is False else "no faster past the noise"
    return f"{text}; its choices ran {said} ({gain}), so the measuring never repays."


def curriculum_timeline(summary: dict[str, Any]) -> Figure:
    """One bar per contender through the curriculum's stages; the allocator's measuring hatched.

    ``summary``: :func:`hetero_tutorial.allocator.curriculum.curriculum`'s result. Fixed plans
    that ran as one configuration at every stage share a bar; ``threads`` adds the
    devices the allocator chose at each stage, run at one fixed thread count throughout
    (whatever count the allocator chose there).
    """
    timeline = summary["timeline"]
    groups: dict[tuple[str, ...], list[str]] = {}
    for plan in summary["totals"]:
        if plan != "allocator":
            groups.setdefault(tuple(step["rows"][plan] for step in timeline), []).append(plan)
    bars = {"allocator (its measuring, then its choice)": [
        (step["decision_seconds"], step["seconds"]["allocator"]) for step in timeline]}  # fmt: skip
    for names in groups.values():
        label = ", ".join(names) + " (at the allocator's threads)"
        bars[label] = [(0.0, step["seconds"][names[0]]) for step in timeline]
    for count in summary.get("threads", {}):
        label = f"its devices at {count} thread{'s' * (count != '1')} throughout"
        bars[label] = [(0.0, step["by_threads"][count]) for step in timeline]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = plt.subplots(figsize=(9, 0.8 + 0.5 * len(bars)))
    for row, stages in bars.items():  # named rows (a category axis)
        start = 0.0
        for index, (measuring, seconds) in enumerate(stages):
            if measuring:
                ax.barh(row, measuring, left=start, color="lightgrey", hatch="xx")
                start += measuring
            ax.barh(row, seconds, left=start, color=colours[index % len(colours)])
            start += seconds
    patch = plt.matplotlib.patches.Patch
    handles = [patch(color=colours[i % len(colours)], label=stage["stage"])
               for i, stage in enumerate(timeline)]  # fmt: skip
    handles.append(patch(facecolor="lightgrey", hatch="xx", label="measuring"))
    ax.tick_params(axis="y", labelsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds (timed iterations of every stage, in order)")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1, 1))
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
