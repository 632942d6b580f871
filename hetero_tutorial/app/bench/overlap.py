"""Rollout and update at the same time: overlapped PPO against the sequential hybrid plan.

Trains, seed by seed, the sequential hybrid plan and then each overlapped configuration
(``--backend`` x ``--workers`` x ``--max-policy-lag``) from the same seed, so drift in
the machine's speed hits them alike. Each row: env steps/s, the speed-up over the
sequential run of its seed, the ideal speed-up from that run's own phase times
(R rollout and U update seconds per iteration: (R + U) / max(R / W_eff, U), W_eff =
min(workers, cores - 1, lag)), learner and worker idle shares, the policy-lag
histogram, dropped rollouts and the greedy return. Example (the acceptance run of
benchmarks/README.md, PPO at CleanRL's settings): ``python -m hetero_tutorial bench overlap
--env Acrobot-v1 --steps 150000 --workers 1 --backend mp ray --max-policy-lag 0 1
--seeds 0 1 2 --json overlap.json``.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.overlapped.engine import BACKENDS
from hetero_tutorial.rl.ppo import options as run_options
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.studies.overlap import overlap_study
from hetero_tutorial.studies.overlap_findings import record_fields


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # Acrobot for 150,000 steps: long enough for the policy lag to show in the learning
    run_options.add_arguments(
        parser, only=("env", "steps", "hidden", "accelerator"), env="Acrobot-v1", steps=150_000
    )
    parser.add_argument("--workers", type=int, nargs="+", default=[1], help="worker counts")
    parser.add_argument("--backend", nargs="+", choices=BACKENDS, default=["mp"])
    parser.add_argument("--max-policy-lag", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--eval-episodes", type=int, default=10, help="greedy episodes per run")
    parser.add_argument(
        "--address",
        default=None,
        help="Ray runs join this cluster ('auto', 'ray://HEAD:10001') instead of a local Ray",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    # CleanRL's ppo.py defaults (PPOConfig's own): 4 envs x 128 steps, 4 epochs of 4 minibatches
    config = PPOConfig(env_id=args.env, total_steps=args.steps)
    config = replace(config, hidden=args.hidden) if args.hidden is not None else config
    hybrid = placement("hybrid", args.accelerator)
    print(hybrid.describe())
    study = overlap_study(
        config,
        workers=args.workers,
        backends=args.backend,
        lags=args.max_policy_lag,
        seeds=args.seeds,
        placement=hybrid,
        eval_episodes=args.eval_episodes,
        progress=lambda label: print(label, flush=True),
        address=args.address,
    )
    fields = record_fields(study)
    for sentence in fields["findings"]:
        print("-", sentence)
    return fields
