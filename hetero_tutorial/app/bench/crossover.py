"""CPU vs accelerator: MLP forward grid, one policy step (C1), one value update (C2).

Writes the fields of notebook 00: ``grid`` (seconds per sample for each device,
width and batch size), ``crossover_width_by_batch``, ``policy_step`` and
``value_update`` (median and IQR per device) with their CPU/accelerator
speed-ups, and ``timers`` (first call, naive and honest timing per device, measured
before anything else runs on the device, so that "first call" is the process's first).
"""

from __future__ import annotations

import argparse
from typing import Any

from hetero_tutorial.studies.crossover import building_blocks

FULL_WIDTHS = [32, 64, 128, 256, 512, 1024, 2048]
FULL_BATCHES = [1, 4, 16, 64, 256, 1024, 4096]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--widths", type=int, nargs="+", default=FULL_WIDTHS)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=FULL_BATCHES)
    parser.add_argument("--repeats", type=int, default=9, help="timed repeats per grid cell")


def run(args: argparse.Namespace) -> dict[str, Any]:
    return building_blocks(args.widths, args.batch_sizes, repeats=args.repeats)
