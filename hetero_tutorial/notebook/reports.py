"""Tables that summarise measured runs for the notebooks, built on ``tables.markdown_table``."""

from __future__ import annotations

from typing import Any

from IPython.display import Markdown

from hetero_tutorial.core.timing import format_seconds
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.rl.ppo.runs import PPOResult


def _percent(value: float) -> str:
    return f"{value:.0f}"


def ppo_runs_table(runs: dict[str, PPOResult]) -> Markdown:
    """One row per run: median seconds per iteration, steps/s, copies per step, CPU and GPU use."""
    rows = [
        {
            "plan": name,
            "per_iteration": run.median_iteration_seconds,
            "sps": run.env_steps_per_s,
            "copies": run.copies_per_env_step,
            **run.utilisation,
        }
        for name, run in runs.items()
    ]
    columns = {
        "plan": "plan",
        "per_iteration": "median s per iteration",
        "sps": "steps/s",
        "copies": "copies per step",
        "process_cpu_percent": "CPU % (of one core)",
        "gpu_percent": "GPU %",
    }
    formats = {
        "per_iteration": format_seconds,
        "sps": "{:,.0f}".format,
        "copies": "{:.3f}".format,
        "process_cpu_percent": _percent,
        "gpu_percent": _percent,
    }
    return markdown_table(rows, columns, formats)


def ddpg_placements_table(rows: list[dict[str, Any]]) -> Markdown:
    """One row per placement of
    :func:`hetero_tutorial.studies.ddpg_placements.placement_comparison`."""
    columns = {
        "placement": "placement",
        "env_steps_per_s": "steps/s",
        "copies_per_1000_samples": "copies / 1000 samples",
        "copies_by_phase": "copies of the counted steps, by phase",
    }
    formats = {
        "env_steps_per_s": "{:.0f}".format,
        "copies_per_1000_samples": "{:.0f}".format,
        "copies_by_phase": lambda phases: (
            ", ".join(f"{phase} {copies['count']}" for phase, copies in phases.items()) or "none"
        ),
    }
    return markdown_table(rows, columns, formats=formats)


def tricks_table(rows: list[dict[str, Any]]) -> Markdown:
    """One row per PPO speed trick of :func:`hetero_tutorial.studies.ppo_tricks.trick_speeds`."""
    columns = {
        "trick": "trick",
        "what": "what it saves",
        "with_steps_per_s": "steps/s with it",
        "without_steps_per_s": "steps/s without it",
        "ratio": "ratio (median of rounds)",
        "spread": "range over rounds",
    }
    shown = [{**row, "spread": f"{row['ratio_low']:.2f}-{row['ratio_high']:.2f}x"} for row in rows]
    formats = {
        "with_steps_per_s": "{:,.0f}".format,
        "without_steps_per_s": "{:,.0f}".format,
        "ratio": "{:.2f}x".format,
    }
    return markdown_table(shown, columns, formats)
