"""hetero-tutorial: where each part of deep RL should run, CPU or GPU, measured on your machine.

The package is in layers, one folder each (CONTRIBUTING.md's Layout): ``core/`` (devices,
placements, timing, copies, records), ``rl/`` (environments, networks, buffers, and a
folder each for PPO, DDPG and the overlapped engine), ``profiling/``, ``studies/``
(measurements that answer one question each), ``allocator/``, ``ledger/`` (the article's
claims judged), ``notebook/`` (one report module per notebook, shared figures and tables,
exercises) and ``app/`` (the command line).

Every name a notebook uses can be imported from here, e.g.
``from hetero_tutorial import PPOConfig, placement, plots, train``; besides these, a
notebook imports only its own report module (``hetero_tutorial.notebook.<topic>_report``).
Each name is loaded on first use (PEP 562), so importing one costs only its own module:
a worker process that needs PPO does not import matplotlib.
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = {
    # core: where things run, and how they are timed, counted and recorded
    "accelerator": "core.devices",
    "devices_here": "core.devices",
    "describe_machine": "core.machine",
    "cores_line": "core.machine",
    "usable_cores": "core.machine",
    "how_busy": "core.machine_load",
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
    # rl: the algorithms, and the pieces of them the notebooks show with source()
    "PPOConfig": "rl.ppo.config",
    "RunOptions": "rl.ppo.options",
    "RolloutStorage": "rl.ppo.storage",
    "gae": "rl.ppo.advantages",
    "ppo_loss": "rl.ppo.learner",
    "PPOLearner": "rl.ppo.learner",
    "PPOTrainer": "rl.ppo.trainer",
    "train": "rl.ppo.runs",
    "train_side_by_side": "rl.ppo.runs",
    "DDPGConfig": "rl.ddpg.config",
    "DDPGLearner": "rl.ddpg.learner",
    "make_buffer": "rl.buffers",
    "BatchedCartPole": "rl.envs.batched",
    "make_batched_env": "rl.envs.batched",
    "compiled": "speed.compiler",
    "compile_unavailable": "speed.compiler",
    "compile_cache": "speed.compiler",
    "cache_files": "speed.compiler",
    "train_overlapped": "rl.overlapped.loop",
    "default_workers": "rl.overlapped.loop",
    "LagSchedule": "rl.overlapped.schedule",
    "RolloutWorker": "rl.overlapped.worker",
    "configuration_label": "rl.overlapped.timeline",
    "GAILConfig": "rl.gail.config",
    "GAILTrainer": "rl.gail.trainer",
    "discriminator_loss": "rl.gail.discriminator",
    # allocator
    "Allocator": "allocator.allocator",
    "CNNConfig": "allocator.cnn",
    "frames_label": "allocator.cnn",
    "thread_choices": "allocator.pricing",
    "select_device": "allocator.fixed_rule",
    # studies the ledger shows
    "c4_sensitivity": "studies.copies",
    # notebook helpers
    "check": "notebook.exercises",
    "hint": "notebook.exercises",
    "gpu_paragraph": "notebook.prose",
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
    "reading": "profiling.reading",
    "crossover": "studies.crossover",
    "neighbours": "studies.neighbours",
    "sweeps": "studies.sweeps",
    "ppo_tricks": "studies.ppo_tricks",
    "annealing": "studies.annealing",
    "env_throughput": "studies.env_throughput",
    "env_agreement": "studies.env_agreement",
    "device_ppo": "studies.device_ppo",
    "compiling": "studies.compiling",
    "compile_rows": "studies.compile_rows",
    "compile_breakdown": "studies.compile_breakdown",
    "copies": "studies.copies",
    "threads": "studies.threads",
    "ddpg_placements": "studies.ddpg_placements",
    "buffer_designs": "studies.buffer_designs",
    "buffer_rows": "studies.buffer_rows",
    "ddpg_buffers": "studies.ddpg_buffers",
    "overlap": "studies.overlap",
    "overlap_findings": "studies.overlap_findings",
    "crossover_findings": "studies.crossover_findings",
    "gail": "studies.gail",
    "demonstrations": "rl.gail.demonstrations",
    "trials": "allocator.trials",
    "criterion": "allocator.criterion",
    "curriculum": "allocator.curriculum",
    "article": "ledger.article",
    "claims": "ledger.claims",
    "verdicts": "ledger.verdicts",
    "plots": "notebook.plots",
    "tables": "notebook.tables",
    "diagrams": "notebook.diagrams",
    "peer_races": "notebook.peer_races",
    "buffer_race": "notebook.buffer_race",
    "compile_race": "notebook.compile_race",
    "device_envs_figures": "notebook.device_envs_figures",
    "env_rates": "notebook.env_rates",
    "overlap_figures": "notebook.overlap_figures",
    "neighbour_findings": "notebook.neighbour_findings",
    "curriculum_findings": "notebook.curriculum_findings",
    "ddpg_findings": "notebook.ddpg_findings",
    "forward_grid": "notebook.forward_grid",
    "step_drift": "notebook.step_drift",
    "fill_ledger": "app.fill_ledger",
}
"""Modules importable from the package's top by their file names (no two share one)."""

__all__ = sorted([*_NAMES, *_MODULES])


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        return getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{_MODULES[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
