"""Tables of notebook 06: an overlap study's configurations, PPO's ratio by policy lag, and
the accelerator's utilisation (live, or from reference records)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from IPython.display import Markdown

from hetero_tutorial.core import results
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.studies.overlap_verdicts import label


def _percent(value: float) -> str:
    return f"{value:.0%}"


def _times(value: float) -> str:
    return f"{value:.2f}x"


def summary_table(summary: Sequence[dict[str, Any]]) -> Markdown:
    """One row per configuration of :func:`~hetero_tutorial.studies.overlap.summarise`."""
    columns = {
        "name": "configuration",
        "env_steps_per_s": "steps/s",
        "speedup_vs_sequential": "x sequential",
        "ideal_speedup": "ideal",
        "share_of_ideal": "of ideal",
        "learner_idle_share": "learner idle",
        "worker_idle_share": "worker idle",
        "dropped_rollouts": "dropped",
        "eval_return_mean": "greedy return",
        "other_load_cores": "others' load (cores)",
    }
    formats = {
        "env_steps_per_s": "{:,.0f}".format,
        "speedup_vs_sequential": _times,
        "ideal_speedup": _times,
        "share_of_ideal": _percent,
        "learner_idle_share": _percent,
        "worker_idle_share": _percent,
        "eval_return_mean": "{:.1f}".format,
        "other_load_cores": "{:.2f}".format,
    }
    return markdown_table([{"name": label(e), **e} for e in summary], columns, formats)


def clipping_table(by_lag: dict[str, dict[str, float]]) -> Markdown:
    """Approx KL and clip fraction at updates' first and last minibatch, per policy lag."""
    columns = {
        "lag": "lag",
        "updates": "updates",
        "start_approx_kl": "approx KL, first minibatch",
        "start_clipfrac": "clip fraction, first",
        "approx_kl": "approx KL, last minibatch",
        "clipfrac": "clip fraction, last",
    }
    formats = {
        "updates": "{:.0f}".format,
        "start_approx_kl": "{:.2e}".format,
        "start_clipfrac": "{:.3f}".format,
        "approx_kl": "{:.2e}".format,
        "clipfrac": "{:.3f}".format,
    }
    return markdown_table([{"lag": lag, **s} for lag, s in by_lag.items()], columns, formats)


def gpu_table(study: dict[str, Any]) -> Markdown:
    """The first seed's runs of a study whose learner ran on an accelerator: the GPU's
    sampled utilisation (percent) and the speed-up over the sequential plan."""
    first = study["seeds"][0]
    rows = [{"name": label(r), **r} for r in study["rows"] if r["seed"] == first]
    columns = {"name": "configuration", "gpu_percent": "GPU %", "speedup_vs_sequential": "x seq."}
    formats = {"gpu_percent": "{:.0f}".format, "speedup_vs_sequential": _times}
    return markdown_table(rows, columns, formats)


def gpu_references() -> Markdown:
    """Every configuration of the committed ``bench.pipeline`` records measured on a machine
    with an accelerator, per machine; a sentence saying so where there are none."""
    rows = [
        {"machine": record.hardware, "name": label(entry), **entry}
        for record in results.load_references("bench.pipeline", with_accelerator=True)
        for entry in record.data["summary"]
    ]
    if not rows:
        return Markdown(results.NO_ACCELERATOR_REFERENCES)
    columns = {"machine": "machine", "name": "configuration", "speedup_vs_sequential": "x seq."}
    return markdown_table(rows, columns, {"speedup_vs_sequential": _times})
