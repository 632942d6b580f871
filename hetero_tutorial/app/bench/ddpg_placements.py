"""DDPG under each placement, interleaved: env steps/s and copies per 1000 samples (C4, C7).

The default is the article's pattern A (the transition buffer), whose batches
cross from host to device one field at a time under the hybrid placement. Placements that
resolve to the same devices run once; every placement's copies are counted, on the
accelerator or on the meta device (see :mod:`hetero_tutorial.studies.ddpg_placements`).
"""

from __future__ import annotations

import argparse
from typing import Any

from hetero_tutorial.rl.ddpg.options import add_ddpg_arguments, ddpg_config_from
from hetero_tutorial.studies.ddpg_placements import compare_placements


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # the article's pattern A, and fewer steps than a learning run: each placement runs them
    add_ddpg_arguments(
        parser,
        only=("buffer", "hidden", "steps", "learning_starts"),
        helps={"steps": "env steps per placement"},
        buffer="transition",
        steps=3_000,
    )
    parser.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> dict[str, Any]:
    return compare_placements(ddpg_config_from(args), seed=args.seed, eval_episodes=1)
