"""What each PPO speed trick buys per environment step (paired nets, flat parameters, one gather).

Trains PPO (all on the CPU, one thread by default) once per variant: all tricks,
all but one for each trick, and none (CleanRL's shape), interleaving their
iterations round by round. The record's ``rows`` give, per trick, steps per second
with and without it, the median per-round ratio and its range over ``rounds``.
Example: ``python -m hetero_tutorial bench ppo_tricks --rounds 7 --json tricks.json``.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, replace
from typing import Any

from hetero_tutorial.rl.ppo import options as run_options
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.studies.ppo_tricks import trick_speeds


def add_arguments(parser: argparse.ArgumentParser) -> None:
    run_options.add_arguments(parser, only=("env", "hidden", "threads"))
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument("--iterations", type=int, default=3, help="iterations a round, per variant")


def run(args: argparse.Namespace) -> dict[str, Any]:
    # CleanRL's ppo.py defaults (PPOConfig's own): 4 envs x 128 steps, 4 epochs of 4 minibatches
    config = PPOConfig(env_id=args.env)
    config = replace(config, hidden=args.hidden) if args.hidden is not None else config
    measured = trick_speeds(config, args.rounds, args.iterations, args.threads)
    return {"env_id": args.env, "threads": args.threads, "config": asdict(config), **measured}
