"""DDPG on Pendulum-v1 with one buffer design: env steps per second, copies, greedy return (C7, C8).

One training run per seed (``--seed 0 1 2`` for three). The record's top-level
fields summarise the runs (median speed, mean and spread of the greedy
evaluation returns); ``runs`` holds every run's full result, training curve
included, so the stability of the curves can be judged, not asserted.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from hetero_tutorial.core.placement import ENV_ON_CPU_NAMES
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.options import add_ddpg_arguments, ddpg_config_from
from hetero_tutorial.rl.ddpg.runs import DDPGResult, train
from hetero_tutorial.studies.ddpg_buffers import summarise

RECORD_TAG = "buffer"
"""One record per buffer (see the package docstring)."""


def run_seeds(
    config: DDPGConfig, placement: str, seeds: Sequence[int], threads: int | None
) -> list[DDPGResult]:
    """Train ``config`` under ``placement`` once per seed."""
    return [train(config, placement, seed, threads=threads) for seed in seeds]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_ddpg_arguments(parser)
    parser.add_argument(
        "--seed", type=int, nargs="+", default=[0], help="one run per seed (e.g. 0 1 2)"
    )
    parser.add_argument("--placement", choices=ENV_ON_CPU_NAMES, default="all-cpu")


def run(args: argparse.Namespace) -> dict[str, Any]:
    config = ddpg_config_from(args)
    return summarise(run_seeds(config, args.placement, args.seed, args.threads))
