"""All-accelerator baseline vs hybrid PPO side by side, a width sweep, copy costs (C6, C9).

The same measurements as notebook 03: both plans trained from one seed with
their iterations interleaved (time per iteration, copies, CPU/GPU utilisation),
seconds per iteration of every plan over hidden widths, and what pageable,
pinned and non_blocking host-to-device copies cost (with an accelerator).
"""

from __future__ import annotations

import argparse
from typing import Any

import torch

from hetero_tutorial.core.configurations import distinct_placements
from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.errors import require_positive
from hetero_tutorial.core.placement import placement
from hetero_tutorial.core.transfers import copy_costs
from hetero_tutorial.rl.ppo import options as run_options
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import train_side_by_side
from hetero_tutorial.studies.copies import ppo_copies
from hetero_tutorial.studies.sweeps import hybrid_fields, width_sweep

COPY_SIZES = [4_096, 262_144, 16_777_216]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # Pendulum: the article's task for C6, trained for 61,440 steps by each plan
    run_options.add_arguments(
        parser, only=("env", "steps", "seed", "threads"), env="Pendulum-v1", steps=61_440
    )
    parser.add_argument("--widths", type=int, nargs="+", default=[64, 128, 256, 512, 1024])
    parser.add_argument("--sweep-iterations", type=int, default=5)
    parser.add_argument(
        "--sweep-threads",
        type=int,
        nargs="+",
        default=[1, torch.get_num_threads()],
        help="CPU thread counts every plan runs at in the sweep (default: 1 and all cores)",
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    # checked before the side-by-side training, which takes minutes: a bad sweep option
    # must not surface only after it
    require_positive(
        steps=args.steps,
        sweep_iterations=args.sweep_iterations,
        smallest_width=min(args.widths),
        fewest_sweep_threads=min(args.sweep_threads),
    )
    names = ("all-accelerator", "hybrid")
    groups = distinct_placements([placement(name) for name in names])  # the same devices: once
    config = PPOConfig.tuned(args.env, total_steps=args.steps)
    runs = train_side_by_side(
        config,
        [group[0] for group in groups],
        seed=args.seed,
        threads=args.threads,
        eval_every=args.steps // 4,
    )
    sweep = width_sweep(
        args.env, args.widths, iterations=args.sweep_iterations, threads=args.sweep_threads
    )
    device = accelerator()
    copies = copy_costs(COPY_SIZES, device) if device is not None else []
    counted = {name: ppo_copies(config, name, seed=args.seed) for name in names}
    return hybrid_fields(args.env, runs, sweep, copies, counted)
