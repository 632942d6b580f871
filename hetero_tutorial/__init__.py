"""hetero-tutorial: where each part of deep RL should run, CPU or GPU, measured on your machine.

The package is in layers, one folder each (README's Layout): ``core/`` (devices,
placements, timing, copies, records), ``rl/`` (environments, networks, PPO, DDPG),
``profiling/``, ``studies/`` (measurements that answer one question), ``allocator/``,
``ledger/`` (the article's claims judged), ``notebook/`` (plots, reports, exercises)
and ``app/`` (the command line).

The names the notebooks use most can be imported from here, e.g.
``from hetero_tutorial import PPOConfig, placement, plots, train``. Each is loaded
on first use (PEP 562), so importing one name costs only its own module: a worker
process that needs PPO does not import matplotlib.
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = {
    # core: where things run, and how they are timed, counted and recorded
    "accelerator": "core.devices",
    "devices_here": "core.devices",
    "describe_machine": "core.machine",
    "placement": "core.placement",
    "Placement": "core.placement",
    "by_mode": "core.modes",
    "quick_mode": "core.modes",
    "format_seconds": "core.timing",
    "measure": "core.timing",
    "compare": "core.timing",
    "CopyCounter": "core.transfers",
    "distinct_placements": "core.configurations",
    "same_devices_note": "core.configurations",
    "display_path": "core.paths",
    # rl: the algorithms
    "PPOConfig": "rl.ppo.config",
    "train": "rl.ppo.runs",
    "train_side_by_side": "rl.ppo.runs",
    "DDPGConfig": "rl.ddpg.config",
    "make_buffer": "rl.buffers",
    "train_overlapped": "rl.overlapped.loop",
    # allocator
    "Allocator": "allocator.allocator",
    "CNNConfig": "allocator.cnn",
    "select_device": "allocator.fixed_rule",
    # notebook helpers
    "check": "notebook.exercises",
    "progress": "notebook.progress",
    "source": "notebook.code",
    "markdown_table": "notebook.tables",
}
"""Names importable from the package's top, and the module (under the package) of each."""

_MODULES = {
    "results": "core.results",
    "transfers": "core.transfers",
    "buffers": "rl.buffers",
    "pyspy": "profiling.pyspy",
    "cprofiler": "profiling.cprofiler",
    "torch_profiler": "profiling.torch_profiler",
    "stacks": "profiling.stacks",
    "flamegraph": "profiling.flamegraph",
    "crossover": "studies.crossover",
    "sweeps": "studies.sweeps",
    "ppo_tricks": "studies.ppo_tricks",
    "env_throughput": "studies.env_throughput",
    "env_agreement": "studies.env_agreement",
    "device_ppo": "studies.device_ppo",
    "copies": "studies.copies",
    "threads": "studies.threads",
    "ddpg_placements": "studies.ddpg_placements",
    "buffer_study": "studies.buffers",
    "trials": "allocator.trials",
    "claims": "ledger.claims",
    "verdicts": "ledger.verdicts",
    "plots": "notebook.plots",
    "env_plots": "notebook.env_plots",
    "env_reports": "notebook.env_reports",
    "reports": "notebook.reports",
    "diagrams": "notebook.diagrams",
}
"""Modules importable from the package's top by their short names."""

__all__ = sorted([*_NAMES, *_MODULES])


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        return getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{_MODULES[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
