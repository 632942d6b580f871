"""Replay buffer designs side by side: sampling and add throughput, memory, batch correlation (C8).

The measurements are :mod:`hetero_tutorial.studies.buffer_designs` (see it for each field);
with a CUDA device the record also holds ``pinned_rows``, the tensor buffer sampled
through pinned memory as hybrid DDPG does, beside the same buffer unpinned.
"""

from __future__ import annotations

import argparse
from typing import Any

from hetero_tutorial.core.devices import resolve_device
from hetero_tutorial.studies.buffer_designs import default_devices, time_designs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--capacities",
        type=int,
        nargs="+",
        default=[10_000, 100_000, 1_000_000],
        help="buffer capacities in transitions (default 1e4 1e5 1e6; 1e6 takes minutes)",
    )
    parser.add_argument("--batch-size", type=int, default=256, help="transitions per batch")
    parser.add_argument(
        "--devices",
        nargs="+",
        default=None,
        help="devices to sample to (default: cpu, and the accelerator if there is one)",
    )
    parser.add_argument("--repeats", type=int, default=15, help="interleaved timing repeats")
    parser.add_argument("--seed", type=int, default=0, help="seeds the data and the sampling")


def run(args: argparse.Namespace) -> dict[str, Any]:
    devices = [resolve_device(d) for d in args.devices] if args.devices else default_devices()
    return time_designs(args.capacities, args.batch_size, devices, args.repeats, args.seed).fields()
