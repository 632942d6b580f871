"""Notebook 02's tables, sentences and bars: transfer shares, phases, cProfile, torch.profiler."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown
from matplotlib import ticker
from matplotlib.figure import Figure

from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import format_seconds
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.profiling import reading, stacks
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


def share_sentence(profile: PySpyProfile, plan: Placement) -> str:
    """The baseline's share against the article's, read with its noise and its machine."""
    share, stderr = profile.shares.share, profile.shares.stderr
    low, high = max(share - 2 * stderr, 0.0), min(share + 2 * stderr, 1.0)
    text = f"The baseline's share: {share:.1%}, within {low:.1%}-{high:.1%} (two standard errors)"
    if plan.accelerator_missing:
        return text + (
            ". No accelerator here: the plan ran on the CPU and moved no data, so this is the "
            "cost of *calling* .to(), .cpu() or .tolist() on CPU tensors. It says nothing for "
            "or against the article's 37%, which is about a GPU (section 11 shows recorded GPU "
            "profiles)."
        )
    side = "below" if high < ARTICLE_C5 else "above" if low > ARTICLE_C5 else "around"
    return text + f": {side} the article's 37% (the ledger's rule for C5 asks for 25%-55%)."


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


def top_frames_table(profile: PySpyProfile) -> Markdown:
    top = stacks.top_frames(profile.training_stacks())
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


def cprofile_table(cprof: Any) -> Markdown:
    seconds = {"tottime": format_seconds, "cumtime": format_seconds, "share": percent}
    return markdown_table(
        cprof.top(10), ["function", "calls", "tottime", "cumtime", "share"], seconds
    )


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


def references_table() -> Markdown:
    found = reference_profiles(with_accelerator=True)
    if not found:
        from hetero_tutorial.core.results import NO_ACCELERATOR_REFERENCES

        return Markdown(NO_ACCELERATOR_REFERENCES)
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


def env_line(env_share: float | None, profile: PySpyProfile) -> str:
    rollout = profile.shares.phase_share().get("rollout", 0.0)
    if env_share is None:
        return f"The whole rollout: {rollout:.0%} of training; solve the exercise to split it."
    return (
        f"Stepping the environments: {env_share:.0%} of training (your function); the whole "
        f"rollout: {rollout:.0%}. The difference is the actor's forward pass and the loop's "
        "bookkeeping, which on a GPU includes the two copies per vector step C5 is about."
    )


def findings(profiles: dict[str, PySpyProfile], cprof: Any) -> list[str]:
    """What notebook 02 measured on this machine, each line from the numbers."""
    lines = []
    baseline = profiles.get("all-accelerator")
    if baseline is not None:
        lines.append(
            f"py-spy: {baseline.shares.total} training samples of the baseline; "
            f"{reading.kinds_sentence(baseline.training_stacks())}"
        )
    lines.append(
        f"cProfile: copy and wait functions took {cprof.transfer_share:.2%} of "
        f"{format_seconds(cprof.total_seconds)} profiled."
    )
    return lines


def patterns_table() -> Markdown:
    """The transfer patterns, one row per operation and one column per profiler."""
    return markdown_table(
        stacks.pattern_rows(),
        {
            "operation": "operation",
            "kind": "kind",
            "source": "py-spy line",
            "cprofile": "cProfile",
            "torch_event": "torch.profiler",
            "native": "py-spy --native",
            "note": "why it costs",
        },
    )


def share_errors(shares: Sequence[float], errors: Sequence[float]) -> np.ndarray:
    """Error bars (2, n) for shares: +- ``errors``, cut at 0% and 100% (a share is neither
    negative nor above one, whatever its standard error)."""
    shares, errors = np.asarray(shares, float), np.asarray(errors, float)
    return np.vstack([np.minimum(errors, shares), np.minimum(errors, 1.0 - shares)])


def transfer_share_bars(runs: dict[str, dict[str, Any]], article: float | None = None) -> Figure:
    """Left: each run's share of training samples in transfers; right: that share per phase.

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
    phases = list(dict.fromkeys(p for r in runs.values() for p in r["transfer_share_by_phase"]))
    width = 0.8 / len(labels)
    for i, label in enumerate(labels):
        values = np.array([runs[label]["transfer_share_by_phase"].get(p, 0.0) for p in phases])
        counts = np.array([runs[label]["samples_by_phase"].get(p, 0) for p in phases])
        spread = np.sqrt(values * (1 - values) / np.maximum(counts, 1))
        x = np.arange(len(phases)) + i * width
        by_phase.bar(x, values, width, yerr=share_errors(values, spread), capsize=3, label=label)
    by_phase.set_xticks(np.arange(len(phases)) + width * (len(labels) - 1) / 2, phases)
    by_phase.set_ylabel("share of the phase's samples")
    by_phase.set_title("in transfers and waits, per phase")
    by_phase.legend()
    for ax in (overall, by_phase):
        ax.yaxis.set_major_formatter(ticker.PercentFormatter(1.0))
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig
