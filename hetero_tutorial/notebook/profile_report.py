"""Notebook 02's tables, sentences and bars: transfer shares, phases, cProfile, torch.profiler."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Image, Markdown
from matplotlib import ticker
from matplotlib.figure import Figure

from hetero_tutorial.core.findings import Outcome
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import format_seconds
from hetero_tutorial.notebook.exercises import UNSOLVED, prediction_line
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.profiling import browser, cprofiler, reading, stacks
from hetero_tutorial.profiling.against_timer import Sampled, dropped_stacks, points, timer_shares
from hetero_tutorial.profiling.pyspy import PySpyProfile, reference_profiles

percent = "{:.1%}".format
ARTICLE_C5 = 0.37
"""The article's claimed transfer share (C5): a claim to test, not a measurement."""


def share_table(profiles: dict[str, PySpyProfile]) -> Markdown:
    """Each plan's transfer share with its standard error, beside the article's 37%."""
    rows = [
        {
            "source": f"measured here: {name}",
            "share": p.shares.share,
            "stderr": p.shares.stderr,
            "timer": p.shares.share_of("timer_sync"),
            "samples": p.shares.total,
        }
        for name, p in profiles.items()
    ]
    rows.append({"source": "the article's claim (C5): all-GPU, 128 units", "share": ARTICLE_C5})
    return markdown_table(
        rows,
        {
            "source": "",
            "share": "copies + waits for data",
            "stderr": "±",
            "timer": "phase timer's syncs (apart)",
            "samples": "samples",
        },
        {"share": percent, "stderr": percent, "timer": percent},
    )


def share_sentence(profile: PySpyProfile, placement: Placement) -> str:
    """The baseline's share against the article's, read with its noise and its machine."""
    share, stderr = profile.shares.share, profile.shares.stderr
    low, high = max(share - 2 * stderr, 0.0), min(share + 2 * stderr, 1.0)
    text = (
        f"The baseline's share: {share:.1%} of {profile.shares.total:,} training samples, within "
        f"{low:.1%}-{high:.1%} (two binomial standard errors)"
    )
    if placement.accelerator_missing:
        return text + (
            ". No accelerator here, so no data moved: this is the cost of *calling* .to(), "
            ".cpu() or .tolist() on CPU tensors, and says nothing of the article's 37% on a GPU."
        )
    side = "below" if high < ARTICLE_C5 else "above" if low > ARTICLE_C5 else "around"
    return text + f": {side} the article's 37% (the ledger's rule for C5 asks for 25%-55%)."


def plans_line(profiles: dict[str, PySpyProfile], placements: dict[str, Placement]) -> str:
    """Which plans were profiled: both, or one standing for both where they resolved to the
    same devices (one recording of the same code, not two copies of one graph)."""
    skipped = [name for name in placements if name not in profiles]
    if not profiles:
        return "No plan was profiled here (py-spy could not run)."
    if not skipped:
        return "Each plan's flame graph, one under the other:"
    shown = next(iter(profiles))
    devices = ", ".join(str(d) for d in placements[shown].devices)
    return (
        f"Only {shown} was profiled: the plans resolved to the same devices here ({devices}), "
        f"so its flame graph in section 4 stands for {', '.join(skipped)} too."
    )


def phase_table(profile: PySpyProfile) -> Markdown:
    columns = {
        "phase": "phase",
        "samples": "samples",
        "phase_share": "of training",
        "transfer_in_phase": "transfer, within phase",
        "transfer_of_training": "transfer, of training",
        "timer_sync_of_training": "phase timer's syncs, of training",
    }
    return markdown_table(profile.shares.rows(), columns, dict.fromkeys(list(columns)[2:], percent))


def top_frames_table(profile: PySpyProfile, rows: int = 5) -> Markdown:
    top = stacks.top_frames(profile.training_stacks(), rows)
    return markdown_table(
        [{"frame": f, "kind": reading.kind_of(stacks.Frame.parse(f)), "share": s} for f, s in top],
        {"frame": "innermost frame (self time)", "kind": "kind of work", "share": "share"},
        {"share": percent},
    )


def operations_table(profile: PySpyProfile) -> Markdown:
    kinds = {p.operation: p.kind for p in stacks.TRANSFER_PATTERNS}
    operations = profile.shares.operations
    if not operations:
        return Markdown("No samples in transfer or synchronisation frames.")
    return markdown_table(
        [{"operation": op, "kind": kinds[op], "samples": n} for op, n in operations.items()],
        ["operation", "kind", "samples"],
    )


def cprofile_table(cprof: Any, rows: int = 5) -> Markdown:
    seconds = {"tottime": format_seconds, "cumtime": format_seconds, "share": percent}
    return markdown_table(
        cprof.top(rows), ["function", "calls", "tottime", "cumtime", "share"], seconds
    )


def fold(shown: Markdown, summary: str) -> Markdown:
    """``shown`` (a table, a listing) folded under a one-line ``summary``: optional detail,
    one click away, left out of the reading count."""
    return Markdown(f"<details><summary>{summary}</summary>\n\n{shown.data}\n\n</details>")


TORCH_COLUMNS = {
    "name": "event",
    "calls": "calls",
    "cpu_s": "CPU total",
    "self_cpu_s": "CPU self",
    "device_s": "device total",
}


def torch_table(rows: list[dict[str, Any]]) -> Markdown:
    formats = dict.fromkeys(("cpu_s", "self_cpu_s", "device_s"), format_seconds)
    return markdown_table(rows, TORCH_COLUMNS, formats)


def references_table() -> Markdown | None:
    """Profiles recorded on machines with an accelerator; None where there are none (the
    notebook's one line about the GPU case says so)."""
    found = reference_profiles(with_accelerator=True)
    if not found:
        return None
    return markdown_table(
        [
            {
                "machine": r.hardware,
                "placement": r.data["placement"],
                "share": r.data["transfer_share"],
                "stderr": r.data["transfer_share_stderr"],
                "timer": r.data.get("timer_sync_share"),  # older records: inside the share
                "native": r.data["native"],
            }
            for r, _ in found
        ],
        ["machine", "placement", "share", "stderr", "timer", "native"],
        {"share": percent, "stderr": percent, "timer": percent},
        timed=False,
    )


def inclusive_cases(profile: PySpyProfile | None) -> list[tuple[Any, ...]]:
    """The inputs the inclusive-share exercise is checked on: the baseline's samples (where
    py-spy could record them: ``profile`` None leaves them out), and a hand-made profile
    where a function recurses (count each sample once)."""
    made = Counter(
        {
            ("main (a.py:1)", "f (a.py:2)", "f (a.py:2)", "g (a.py:3)"): 2,
            ("main (a.py:1)", "g (a.py:3)"): 1,
            ("main (a.py:1)",): 1,
        }
    )
    hand_made = [(made, "f"), (made, "g"), (made, "main")]
    if profile is None:
        return hand_made
    return [(profile.training_stacks(), "SyncVectorEnv.step"), *hand_made]


def reveal_lines(env_share: float | None, guess: float | None, profile: PySpyProfile) -> list[str]:
    """After the inclusive-share exercise: nothing of the answer until it is solved
    (``env_share``, the learner's checked answer, None before); then the environments'
    share beside the whole rollout's, and the learner's guess (``MY_GUESS``) beside it."""
    if env_share is None:
        return [UNSOLVED]
    rollout = profile.shares.phase_share().get("rollout", 0.0)
    return [
        f"Stepping the environments: {env_share:.0%} of training (your function); the whole "
        f"rollout: {rollout:.0%}. The rest of the rollout is the actor's forward pass and the "
        "loop's bookkeeping (and, on a GPU, the two copies per vector step C5 is about).",
        prediction_line(
            "The baseline's training samples inside SyncVectorEnv.step", guess, env_share, percent
        ),
    ]


@judged("all")
def findings(profiles: dict[str, PySpyProfile], cprof: Any) -> list[str]:
    """What notebook 02 measured on this machine, each line from the numbers."""
    lines = []
    baseline = profiles.get("all-accelerator")
    if baseline is not None:
        shares = baseline.shares
        lines.append(
            f"py-spy: copies and waits for data {shares.share:.1%} (± {shares.stderr:.1%}) of "
            f"the baseline's {shares.total:,} training samples."
        )
    lines.append(
        f"cProfile: copy and wait functions took {cprof.transfer_share:.2%} of "
        f"{format_seconds(cprof.total_seconds)} profiled."
    )
    return lines


def patterns_table() -> Markdown:
    """The transfer patterns, one row per operation: its kind and which tools can see it (each
    pattern and the reason it costs: ``TRANSFER_PATTERNS`` in ``profiling/stacks.py``)."""
    tools = {"source": "py-spy", "cprofile": "cProfile", "torch_event": "torch.profiler",
             "native": "py-spy --native"}  # fmt: skip
    rows = [
        {
            "operation": row["operation"],
            "kind": row["kind"],
            "seen by": ", ".join(name for key, name in tools.items() if row[key] != "—"),
        }
        for row in stacks.pattern_rows()
    ]
    return markdown_table(rows, {key: key for key in rows[0]}, timed=False)


def share_errors(shares: Sequence[float], errors: Sequence[float]) -> np.ndarray:
    """Error bars (2, n) for shares: +- ``errors``, cut at 0% and 100% (a share is neither
    negative nor above one, whatever its standard error)."""
    shares, errors = np.asarray(shares, float), np.asarray(errors, float)
    return np.vstack([np.minimum(errors, shares), np.minimum(errors, 1.0 - shares)])


def transfer_share_bars(runs: dict[str, dict[str, Any]], article: float | None = None) -> Figure:
    """Left: each run's share of training samples in transfers; right: each phase's share of
    the training samples, the part of it in transfers red (a phase's bar is never empty
    where it ran, even on a CPU that makes no transfers).

    ``runs`` maps a label to a ``bench.profile`` record's fields (``transfer_share``,
    ``transfer_share_stderr``, ``transfer_share_by_phase``, ``samples_by_phase``).
    Error bars: binomial standard errors, wide for a phase with few samples.
    ``article``: the article's claimed share, drawn as a dashed line and labelled as
    the article's.
    """
    labels = list(runs)
    fig, (overall, by_phase) = plt.subplots(1, 2, figsize=(10, 3.6), width_ratios=(1, 2))
    shares = [runs[label]["transfer_share"] for label in labels]
    errors = [runs[label].get("transfer_share_stderr", 0.0) for label in labels]
    overall.bar(labels, shares, yerr=share_errors(shares, errors), capsize=4, color="tab:red")
    if article is not None:
        overall.axhline(
            article, color="k", linestyle="--", label=f"article's claim ({article:.0%})"
        )
        overall.legend()
    overall.set_ylabel("share of training samples")
    overall.set_title("in transfers and waits")
    phases = list(dict.fromkeys(p for r in runs.values() for p in r["samples_by_phase"]))
    for i, label in enumerate(labels):
        run = runs[label]
        total = max(sum(run["samples_by_phase"].values()), 1)
        counts = np.array([run["samples_by_phase"].get(p, 0) for p in phases])
        of_training = counts / total  # the phase's share of the training samples
        inside = np.array([run["transfer_share_by_phase"].get(p, 0.0) for p in phases])
        # one named bar per phase (and per run, where there are several): a category axis
        names = [p if len(labels) == 1 else f"{p}\n{label}" for p in phases]
        spread = np.sqrt(of_training * (1 - of_training) / total)
        by_phase.bar(names, of_training, yerr=share_errors(of_training, spread), capsize=3,
                     label=f"{label}: the phase", color=f"C{i}", alpha=0.55)  # fmt: skip
        by_phase.bar(names, of_training * inside, color="tab:red", hatch="//",
                     label="of it in transfers and waits" if i == 0 else None)  # fmt: skip
    by_phase.set_ylabel("share of training samples")
    by_phase.set_title("per phase, the part in transfers red")
    by_phase.legend(fontsize=8)
    for ax in (overall, by_phase):
        ax.yaxis.set_major_formatter(ticker.PercentFormatter(1.0))
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def paused_length(nonblocking: PySpyProfile, blocking: PySpyProfile) -> str:
    """How long the paused run took against the run without pauses, and whether that bore out
    the expectation that pausing slows a program: from one run each, no verdict either way."""
    seconds = sum(blocking.phase_seconds.values()) / sum(nonblocking.phase_seconds.values())
    said = (
        f"the paused run, sampled {blocking.rate:,} times a second against "
        f"{nonblocking.rate:,}, took {seconds:.2f}x as long"
    )
    if seconds > 1:
        return said + ": one run each, so what the pauses cost has no verdict"
    return said + (
        ", not longer, as pausing should make it: one run each, so what the pauses cost has "
        "no verdict"
    )


@judged("all")
def sampling_sentence(nonblocking: PySpyProfile, blocking: PySpyProfile) -> str:
    """Whether sampling without pauses dropped rollout stacks, read against each run's own
    phase timer: a sampler that drops the rollout's stacks falls short of the timer of the
    run it sampled by more than a paused sampler falls short of its own run's timer.

    (The two runs' shares are not compared directly: pausing for every sample slows the
    program, its many small calls most, so the paused run's phases are not the other's.)
    """
    free, paused = Sampled.of(nonblocking), Sampled.of(blocking)
    text = (
        f"The rollout's share of training samples: {free.share:.1%} ({free.low:.1%}-"
        f"{free.high:.1%}, two standard errors of {free.samples:,} samples) without pauses, "
        f"{paused.share:.1%} ({paused.low:.1%}-{paused.high:.1%}, of {paused.samples:,}) with a "
        "pause per sample."
    )
    if free.timer is None or paused.timer is None:
        return text + " The runs' phase timers were not read back, so nothing is judged."
    text += (
        f" Each run's own phase timer gave it {free.timer:.1%} and {paused.timer:.1%} "
        f"({paused_length(nonblocking, blocking)}). A sampler and its timer read one run, so the "
        "interval holds the noise and one recording can be judged: without pauses the timer "
        f"lies {free.short_words()}, with them {paused.short_words()}."
    )
    outcome, difference, noise = dropped_stacks(free, paused)
    over = [f"{round(s.share - s.timer, 4) * 100 + 0.0:+.1f}" for s in (free, paused)]  # no -0.0
    text += f" Each sampler against its timer: {over[0]} points without pauses, {over[1]} with them"
    if outcome is Outcome.NOT_HELD:
        return text + (
            f": the sampler without pauses falls short by {points(difference)} more, past the "
            f"noise ({points(noise)}), "
            f"so it drops rollout stacks here: the sections above, which read it, understate the "
            f"rollout ({free.share:.1%} against its timer's {free.timer:.1%}; the paused "
            f"recording gives {paused.share:.1%}). C5's share still reads the recording without "
            "pauses: on a GPU each pause lets queued kernels finish, shrinking the waits C5 "
            "counts."
        )
    if outcome is Outcome.HELD:
        return text + (
            f": the sampler without pauses reads {points(difference)} higher against its "
            f"timer, past the noise ({points(noise)}), so it drops no more rollout stacks than "
            "pausing does here."
        )
    return text + (
        f", {points(difference)} apart: within the noise ({points(noise)}) of each other, "
        f"{Outcome.UNCLEAR.value}; this run cannot tell whether sampling without pauses drops "
        "rollout stacks."
    )


FOUR_TOOLS = {
    "py-spy": "stack samples at a fixed rate (wall time)",
    "phase timer": "wall time between syncs at each phase's edges",
    "cProfile": "every Python call timed, each call slowed",
    "torch.profiler": "CPU time in record_function ranges, every operator recorded",
}
"""What each tool of the four-tool table counts."""


def four_tools_rows(
    profile: PySpyProfile,
    cprof: Any,
    torch_phases: Sequence[dict[str, Any]],
    blocking: PySpyProfile | None = None,
) -> list[dict[str, Any]]:
    """The rollout's and the update's share of training by each tool, for one workload.

    ``profile`` (py-spy) and the phase timer are one run, in py-spy's child; cProfile's
    numbers and the phase timer under it are its own run in this kernel; torch.profiler's
    are its ``record_function`` ranges (``torch_phases``: ``TorchProfile.phases()``).
    ``blocking``: the same workload sampled with a pause per sample, where it was recorded
    (its phase timer is a second unprofiled run: the two timers' gap is the noise a tool's
    move is read against). A py-spy row's ``sampled`` holds its interval and its timer.
    """
    ranges = {row["name"]: row["cpu_s"] for row in torch_phases}
    second_timer = blocking and timer_shares(blocking.phase_seconds)
    measured = [
        ("py-spy", "py-spy's child", profile.shares.phase_share()),
        ("py-spy, paused per sample", "a second child", blocking and blocking.shares.phase_share()),
        ("phase timer", "py-spy's child", timer_shares(profile.phase_seconds)),
        ("phase timer", "a second child", second_timer),
        ("cProfile", "in this kernel", cprof.phase_shares()),
        ("phase timer", "under cProfile", timer_shares(cprof.phase_seconds)),
        ("torch.profiler", "in this kernel", timer_shares(ranges)),
    ]
    sampled = {"py-spy": Sampled.of(profile)}
    if blocking is not None:
        sampled["py-spy, paused per sample"] = Sampled.of(blocking)
    return [
        {"tool": tool, "run": run, **_split(shares), "sampled": sampled.get(tool)}
        for tool, run, shares in measured
        if shares is not None
    ]


def _split(shares: dict[str, float]) -> dict[str, float | None]:
    return {"rollout": shares.get("rollout"), "update": shares.get("update")}


def four_tools_table(rows: list[dict[str, Any]]) -> Markdown:
    """One row per tool and run: what the tool counts (on its first row), which run, the
    rollout's and the update's share."""
    missing, said = "–", set()
    shown = []
    for row in rows:
        tool = row["tool"].split(",")[0]
        counts = "as above" if tool in said else FOUR_TOOLS[tool]  # each tool's way, once
        said.add(tool)
        shares = {k: missing if row[k] is None else f"{row[k]:.0%}" for k in ("rollout", "update")}
        shown.append({**row, "counts": counts, **shares})
    return markdown_table(
        shown,
        {
            "tool": "tool",
            "counts": "what it counts",
            "run": "which run",
            "rollout": "rollout",
            "update": "update",
        },
    )


def _spy_against_timer(free: Sampled | None, paused: Sampled | None, clean: float) -> str:
    """py-spy's rollout share against its own run's phase timer (``clean``): agreement inside
    the sampler's interval; outside it, what this run can check (dropped stacks, read
    against the paused recording ``paused``), or that nothing it can check explains it."""
    if free is None:
        return f"the phase timer {clean:.0%}; no sampling interval came with it: no verdict"
    said = f"the phase timer {clean:.0%}: {free.timer_words(digits=0)}"
    if free.against_timer() is not Outcome.NOT_HELD:
        return said
    said += ", a gap larger than the sampling noise"
    if paused is not None:  # the sampling sentence above gave the figures: the verdict only
        said = (
            f"the phase timer {clean:.0%}, outside the sampler's {free.low:.0%}-{free.high:.0%}: "
            "a gap larger than the sampling noise"
        )
    outcome = dropped_stacks(free, paused)[0] if paused is not None else Outcome.NO_VERDICT
    if outcome is Outcome.NOT_HELD and free.share < free.timer:
        return said + (
            "; the cause this run can check: the paused recording above says sampling without "
            "pauses drops rollout stacks"
        )
    if outcome is Outcome.UNCLEAR and free.share < free.timer:
        return said + (
            "; the one cause this run can check, dropped stacks, stays undecided (the paused "
            f"recording above: {Outcome.UNCLEAR.value})"
        )
    why = {
        Outcome.HELD: "dropped rollout stacks do not: the paused recording reads lower still",
    }.get(outcome, "no paused recording here to test for dropped stacks")
    if free.share > free.timer:
        why = "dropped rollout stacks would lower py-spy's share, not raise it"
    return said + f"; no cause this run can check explains it: {why}"


PRINTED_SHARE = 0.001
"""The resolution the phase timers' shares print to (0.1 points): two that print the same
differ by less."""


def _against_clean(lead: str, value: float, clean: float, spread: float | None, lean: str) -> str:
    """A tool's rollout share (``value``, after ``lead``) against the unprofiled phase timer's
    (``clean``): a move explained (``lean``) only past ``spread``, the gap between two
    unprofiled runs' timers; within it the two agree; with no spread measured, no verdict."""
    apart = (
        f" {lead} {value:.0%} against the unprofiled timer's {clean:.0%}, "
        f"{points(value - clean)} apart"
    )
    if spread is None:
        return apart + ": with no second run of the timer to measure their noise, no verdict."
    noise = f"the {points(spread)} between the two py-spy runs' timers"
    if spread < PRINTED_SHARE:  # they print the same share: the noise is below what prints
        spread, noise = PRINTED_SHARE, "the 0.1 points the two py-spy runs' timers print to"
    if abs(value - clean) <= spread:
        return apart + f", within {noise}: the two agree."
    return apart + f", past {noise}: {lean}."


@judged("all")
def four_tools_sentence(rows: list[dict[str, Any]]) -> str:
    """Why the tools disagree, read from their numbers: the spread of the rollout's share, and
    what each tool's way of counting adds to it, where it moved the share past the noise
    (the gap between two unprofiled runs' phase timers) and only there."""
    by = {(row["tool"], row["run"]): row for row in rows if row["rollout"] is not None}
    share = {key: row["rollout"] for key, row in by.items()}
    if len(by) < 2:
        return "Too few tools measured the rollout here to compare them."
    low, high = min(share, key=share.get), max(share, key=share.get)
    text = (
        f"The rollout's share ranges from {share[low]:.0%} ({low[0]}, {low[1]}) to "
        f"{share[high]:.0%} ({high[0]}, {high[1]})."
    )
    clean = share.get(("phase timer", "py-spy's child"))
    if clean is None:
        return text
    spy = by.get(("py-spy", "py-spy's child"))
    if spy is not None:
        paused = by.get(("py-spy, paused per sample", "a second child"), {}).get("sampled")
        said = _spy_against_timer(spy.get("sampled"), paused, clean)
        text += f" In one run py-spy gives it {spy['rollout']:.0%}, {said}."
    second = share.get(("phase timer", "a second child"))
    # the gap as the sampling sentence's two timers print it (to 0.1%), so the two agree
    spread = None if second is None else abs(round(second, 3) - round(clean, 3))
    profiled = share.get(("phase timer", "under cProfile"))
    if profiled is not None:
        lean = (
            "weighs most on the rollout, the phase of many small calls"
            if profiled > clean
            else "weighed more on the update here"
        )
        text += _against_clean(
            "Under cProfile the same timer gives the rollout",
            profiled,
            clean,
            spread,
            f"cProfile's cost per call {lean} (one run each: a direction, no verdict)",
        )
    torch_share = share.get(("torch.profiler", "in this kernel"))
    if torch_share is not None:  # a few iterations: the whole runs' noise is not theirs
        text += (
            f" torch.profiler, from its few profiled iterations, gives {torch_share:.0%} "
            f"against the unprofiled timer's {clean:.0%}, {points(torch_share - clean)} apart: "
            "the timers' noise was measured over whole runs, not over so few iterations, so "
            "no verdict."
        )
    return text


def snakeviz_view(cprof: Any) -> Image | Markdown:
    """snakeviz's sunburst of the cProfile run, as a picture taken in headless Chromium (the
    server and the browser stopped before this returns); one line where none is installed."""
    picture = cprofiler.snakeviz_picture(cprof.path)
    if picture is None:
        command = cprofiler.snakeviz_command(cprof.path)
        return Markdown(f"*{browser.MISSING}; in a terminal, `{command}` draws it.*")
    return Image(filename=str(picture), width=880)
