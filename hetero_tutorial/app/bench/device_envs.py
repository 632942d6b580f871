"""Env steps per second: Gymnasium's SyncVectorEnv and NumPy vector env vs batched tensor envs.

Writes ``rows`` (env steps per second and spread for each implementation, env id
and number of environments; see :mod:`hetero_tutorial.studies.env_throughput`)
and ``ratios``: at each number of environments, every implementation's speed
over ``gymnasium-sync``'s and over ``gymnasium-vector``'s where that was measured.
"""

from __future__ import annotations

import argparse
from typing import Any

from hetero_tutorial.rl.device_envs import BATCHED_ENV_IDS
from hetero_tutorial.studies.env_throughput import (
    DEFAULT_NUM_ENVS,
    SYNC_MAX_ENVS,
    measure_throughput,
    throughput_ratios,
)

BASELINES = ("gymnasium-sync", "gymnasium-vector")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--envs", nargs="+", default=list(BATCHED_ENV_IDS), choices=BATCHED_ENV_IDS)
    parser.add_argument(
        "--num-envs",
        type=int,
        nargs="+",
        default=DEFAULT_NUM_ENVS,
        help="numbers of environments (default 1 4 16 ... 65536)",
    )
    parser.add_argument("--threads", type=int, default=1, help="PyTorch CPU threads (default 1)")
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


def ratio_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Speed ratios over each baseline measured, per env id and number of environments."""
    found = []
    points = sorted({(row["env_id"], row["num_envs"]) for row in rows})
    for env_id, num_envs in points:
        measured = {
            r["implementation"]
            for r in rows
            if (r["env_id"], r["num_envs"]) == (env_id, num_envs) and r["env_steps_per_s"]
        }
        for baseline in BASELINES:
            if baseline in measured:
                found.append(
                    {
                        "env_id": env_id,
                        "num_envs": num_envs,
                        "baseline": baseline,
                        "ratios": throughput_ratios(rows, env_id, num_envs, baseline),
                    }
                )
    return found


def run(args: argparse.Namespace) -> dict[str, Any]:
    rows = measure_throughput(
        args.envs,
        args.num_envs,
        repeats=args.repeats,
        threads=args.threads,
        seconds_per_repeat=args.seconds_per_repeat,
        sync_max_envs=args.sync_max_envs,
    )
    # The env-throughput fields. A "ppo" section (PPO trained on the batched envs)
    # is to join them here, next to "rows" and "ratios".
    return {
        "rows": rows,
        "ratios": ratio_rows(rows),
        "threads": args.threads,
        "sync_max_envs": args.sync_max_envs,
    }
