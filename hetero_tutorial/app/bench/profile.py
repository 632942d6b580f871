"""PPO under py-spy: flame graph, and the share of samples in host<->device transfers (C5).

Example: ``python -m hetero_tutorial bench profile --placement all-accelerator
--hidden 128 --json profile.json``. The record holds ``transfer_share`` (0..1, of
the samples inside the training phases: copies and waits for data), the phase
timer's own synchronisation apart (``timer_sync_share``), ``transfer_share_by_phase``,
``top_frames`` and the path of the flame graph (``flamegraph_svg``). py-spy samples
without pausing the program (``--nonblocking``) unless given ``--blocking``: C5's share
needs that, since a paused host lets the GPU catch up and shrinks the waits. The flame
graph goes to ``build/profiles/``, or beside the record under
``data/reference/<machine>/profiles/`` with ``--reference`` (to commit); the raw
stacks and the speedscope file stay in ``build/profiles/``. On a GPU add
``--native --blocking`` to see CUDA's copy and wait frames: py-spy reads native frames
only from a paused program, so ``--native`` alone is refused before anything starts.
A native profile's record is named apart (``bench.profile.<placement>-native.json``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hetero_tutorial.core import results
from hetero_tutorial.core.machine import fingerprint
from hetero_tutorial.core.placement import placement as make_placement
from hetero_tutorial.profiling.pyspy import (
    PROFILE_DIR,
    profile_fields,
    profile_ppo,
    sampling_without_pauses,
)
from hetero_tutorial.profiling.target import RUNNERS
from hetero_tutorial.rl.ppo import options as run_options
from hetero_tutorial.rl.ppo.options import RunOptions

RECORD_TAG = ("placement", "native")
"""One record per placement, native profiles apart (see the package docstring)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    run_options.add_arguments(parser)
    # the placements the profiled program can train under (profiling.target.RUNNERS)
    parser.add_argument("--placement", choices=list(RUNNERS), default="all-accelerator")
    parser.add_argument("--rate", type=int, default=100, help="samples per second (default 100)")
    parser.add_argument(
        "--native",
        action="store_true",
        help="also sample C/C++/CUDA frames (py-spy --native; needs --blocking)",
    )
    parser.add_argument(
        "--blocking",
        action="store_true",
        help="pause the program for every sample (py-spy's own default: consistent stacks, but "
        "the GPU runs on while the host is paused, which shrinks the waits; default: no pause)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=1800.0,
        help="seconds the run under py-spy may take before both are ended (default 1800)",
    )
    parser.add_argument(
        "--no-idle",
        action="store_true",
        help="drop samples of sleeping threads (default: keep them, so blocking waits count)",
    )


def _out_dir(args: argparse.Namespace) -> Path:
    """Reference runs keep their pictures beside the record, so that both can be committed."""
    if getattr(args, "reference", False):
        return results.REFERENCE_DIR / results.machine_slug(fingerprint()) / "profiles"
    return PROFILE_DIR


def run(args: argparse.Namespace) -> dict[str, Any]:
    nonblocking = sampling_without_pauses(args.native, not args.blocking)  # before any start
    options = RunOptions.from_args(args)
    placement = make_placement(args.placement, options.accelerator)
    print(placement.describe())
    profiles = profile_ppo(
        [args.placement],
        options,
        out_dir=_out_dir(args),
        rate=args.rate,
        native=args.native,
        idle=not args.no_idle,
        nonblocking=nonblocking,
        timeout=args.timeout,
    )
    workload = {"env_id": options.env, "hidden": options.config().hidden, "steps": options.steps}
    workload |= {"seed": options.seed, "threads": options.threads}
    return profile_fields(profiles[args.placement], placement, **workload)
