"""DDPG under each placement, interleaved: env steps/s and copies per 1000 samples (C4, C7).

The default is the article's pattern A (the transition buffer), whose batches
cross from host to device one field at a time under the hybrid placement. Placements that
resolve to the same devices run once; every placement's copies are counted, on the
accelerator or on the meta device (see :mod:`hetero_tutorial.studies.ddpg_placements`).
"""

from __future__ import annotations

import argparse
from typing import Any

from hetero_tutorial.rl.buffers import DESIGNS
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.studies.ddpg_placements import compare_placements


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--buffer", choices=DESIGNS, default="transition")
    parser.add_argument("--hidden", type=int, default=256, help="units per layer")
    parser.add_argument("--steps", type=int, default=3_000, help="env steps per placement")
    parser.add_argument("--learning-starts", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> dict[str, Any]:
    config = DDPGConfig(
        buffer=args.buffer,
        hidden=args.hidden,
        total_steps=args.steps,
        learning_starts=args.learning_starts,
    )
    return compare_placements(config, seed=args.seed, eval_episodes=1)
