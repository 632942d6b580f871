"""Env steps per second: Gymnasium's SyncVectorEnv and NumPy vector env vs batched tensor envs.

Writes ``rows`` (env steps per second and spread for each implementation, env id
and number of environments; see :mod:`hetero_tutorial.studies.env_throughput`)
and ``ratios``: at each number of environments, every implementation's speed
over ``gymnasium-sync``'s and over ``gymnasium-vector``'s where that was measured.
Then ``ppo`` (unless ``--no-ppo``): PPO trained on CartPole-v1 to a greedy return of
475 with each implementation, its env steps/s and wall seconds to 475, one row per
implementation, number of environments and seed, and their ``summary`` (see
:mod:`hetero_tutorial.studies.device_ppo`).
"""

from __future__ import annotations

import argparse
from typing import Any

from hetero_tutorial.rl.envs.batched import BATCHED_ENV_IDS
from hetero_tutorial.rl.ppo import options as run_options
from hetero_tutorial.studies import device_ppo
from hetero_tutorial.studies.env_throughput import (
    DEFAULT_NUM_ENVS,
    SYNC_MAX_ENVS,
    measure_throughput,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--envs", nargs="+", default=list(BATCHED_ENV_IDS), choices=BATCHED_ENV_IDS)
    parser.add_argument(
        "--num-envs",
        type=int,
        nargs="+",
        default=DEFAULT_NUM_ENVS,
        help="numbers of environments (default 1 4 16 ... 65536)",
    )
    run_options.add_arguments(parser, only=("threads",))
    parser.add_argument("--repeats", type=int, default=5, help="interleaved timing repeats")
    parser.add_argument(
        "--seconds-per-repeat",
        type=float,
        default=0.05,
        help="steps per repeat are chosen to take about this long (default 0.05)",
    )
    parser.add_argument(
        "--sync-max-envs",
        type=int,
        default=SYNC_MAX_ENVS,
        help=f"skip SyncVectorEnv above this many envs (default {SYNC_MAX_ENVS})",
    )
    parser.add_argument(
        "--ppo-num-envs",
        type=int,
        nargs="+",
        default=list(device_ppo.DEFAULT_NUM_ENVS),
        help="numbers of batched environments PPO trains with (default "
        f"{' '.join(map(str, device_ppo.DEFAULT_NUM_ENVS))}; SyncVectorEnv keeps its tuned 8)",
    )
    parser.add_argument("--ppo-seeds", type=int, nargs="+", default=list(device_ppo.DEFAULT_SEEDS))
    parser.add_argument(
        "--ppo-steps",
        type=int,
        default=None,
        help="every PPO run's budget in env steps (default: each configuration's tuned budget)",
    )
    parser.add_argument("--no-ppo", action="store_true", help="leave out the PPO section")


def run(args: argparse.Namespace) -> dict[str, Any]:
    rows = measure_throughput(
        args.envs,
        args.num_envs,
        repeats=args.repeats,
        threads=args.threads,
        seconds_per_repeat=args.seconds_per_repeat,
        sync_max_envs=args.sync_max_envs,
    )
    ppo_rows = None
    if not args.no_ppo:
        ppo_rows = device_ppo.measure_ppo(
            args.ppo_num_envs, args.ppo_seeds, args.ppo_steps, args.threads, progress=_report
        )
    return device_ppo.record_fields(rows, args.threads, args.sync_max_envs, ppo_rows)


def _report(row: dict[str, Any]) -> None:
    print("ppo", device_ppo.describe_row(row))
