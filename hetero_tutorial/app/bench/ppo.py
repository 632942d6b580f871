"""PPO under one placement: env steps/s, greedy return, time per phase, copies per phase.

Example: ``python -m hetero_tutorial bench ppo --env CartPole-v1 --placement hybrid
--hidden 64 --steps 50000 --seed 0 --json ppo.json``. ``--num-envs``,
``--num-steps``, ``--minibatch-size`` and ``--epochs`` override the tuned
defaults, so a run can match another library's hyperparameters. The run options are
PPO's everywhere (:mod:`hetero_tutorial.rl.ppo.options`).
"""

from __future__ import annotations

import argparse
from typing import Any

from hetero_tutorial.core.placement import PLACEMENT_NAMES
from hetero_tutorial.core.placement import placement as make_placement
from hetero_tutorial.rl.ppo import options as run_options
from hetero_tutorial.rl.ppo.options import RunOptions
from hetero_tutorial.rl.ppo.runs import train
from hetero_tutorial.studies.copies import ppo_copies

RECORD_TAG = "placement"
"""One record per placement (see the package docstring)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    run_options.add_arguments(parser)
    parser.add_argument("--placement", choices=PLACEMENT_NAMES, default="hybrid")
    parser.add_argument(
        "--no-copy-count", action="store_true", help="skip the instrumented first iteration"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    options = RunOptions.from_args(args)
    placement = make_placement(args.placement, options.accelerator)
    print(placement.describe())
    config = options.config()
    result = train(
        config,
        placement,
        seed=options.seed,
        threads=options.threads,
        count_copies=not args.no_copy_count,
    )
    # every copy the placement makes, counted on the accelerator or on the meta stand-in (C4)
    counted = ppo_copies(config, args.placement, options.accelerator, options.seed)
    return {**result.fields(), "counted_copies": counted}
