"""PPO under one placement: env steps/s, greedy return, time per phase, copies per phase.

Example: ``python -m hetero_tutorial bench ppo --env CartPole-v1 --placement hybrid
--hidden 64 --steps 50000 --seed 0 --json ppo.json``. ``--num-envs``,
``--num-steps``, ``--minibatch-size`` and ``--epochs`` override the tuned
defaults, so a run can match another library's hyperparameters.
"""

from __future__ import annotations

import argparse
from typing import Any

from hetero_tutorial.core.placement import PLACEMENT_NAMES, placement
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import train
from hetero_tutorial.studies.copies import ppo_copies

RECORD_TAG = "placement"
"""One record per placement (see the package docstring)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", default="CartPole-v1", help="Gymnasium id (default CartPole-v1)")
    parser.add_argument("--placement", choices=PLACEMENT_NAMES, default="hybrid")
    parser.add_argument(
        "--accelerator", default=None, help="accelerator device, e.g. cuda:1 (default: found)"
    )
    parser.add_argument("--hidden", type=int, default=None, help="hidden width (default 64)")
    parser.add_argument("--steps", type=int, default=50_000, help="environment steps to train")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-envs", type=int, default=None)
    parser.add_argument("--num-steps", type=int, default=None, help="steps per env per rollout")
    parser.add_argument("--minibatch-size", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=None, help="update epochs per rollout")
    parser.add_argument("--threads", type=int, default=None, help="PyTorch CPU threads")
    parser.add_argument(
        "--no-copy-count", action="store_true", help="skip the instrumented first iteration"
    )


def config_from(args: argparse.Namespace) -> PPOConfig:
    """The tuned config for ``--env`` with the command line's overrides applied."""
    overrides = {
        "hidden": args.hidden,
        "num_envs": args.num_envs,
        "num_steps": args.num_steps,
        "minibatch_size": args.minibatch_size,
        "update_epochs": args.epochs,
    }
    given = {name: value for name, value in overrides.items() if value is not None}
    return PPOConfig.tuned(args.env, total_steps=args.steps, **given)


def run(args: argparse.Namespace) -> dict[str, Any]:
    plan = placement(args.placement, args.accelerator)
    print(plan.describe())
    config = config_from(args)
    result = train(
        config, plan, seed=args.seed, threads=args.threads, count_copies=not args.no_copy_count
    )
    # every copy the placement makes, counted on the accelerator or on the meta stand-in (C4)
    counted = ppo_copies(config, args.placement, args.accelerator, args.seed)
    return {**result.fields(), "counted_copies": counted}
