"""GAIL on HalfCheetah (C12): a round's phases per placement, and the discriminator sweep.

Writes ``sweep`` (seconds per discriminator update on every device at each rows, width and
penalty), ``crossover_rows`` (per width and penalty, the fewest rows at which the
accelerator wins, where one was measured), ``rounds`` (each placement's seconds per phase,
copies, episodes and the discriminator's accuracy) and ``accelerator`` (its name, or None).
The rounds need the expert's demonstrations (``data/gail/halfcheetah/``) and MuJoCo;
``--sweep-only`` (the GPU reference run's step: what C12's rule reads) needs neither.
"""

from __future__ import annotations

import argparse
from typing import Any

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.rl.envs.mujoco import make_halfcheetah
from hetero_tutorial.rl.gail.config import GAILConfig
from hetero_tutorial.rl.gail.demonstrations import load
from hetero_tutorial.studies.gail import (
    SWEEP_ROWS,
    SWEEP_WIDTHS,
    crossover_rows,
    discriminator_sweep,
    placement_cases,
    round_phases,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rows", type=int, nargs="+", default=list(SWEEP_ROWS))
    parser.add_argument("--widths", type=int, nargs="+", default=list(SWEEP_WIDTHS))
    parser.add_argument("--repeats", type=int, default=9, help="timed repeats per setting")
    parser.add_argument("--rounds", type=int, default=4, help="GAIL rounds per placement")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sweep-only", action="store_true", help="the sweep alone: no rounds, no MuJoCo"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    if not args.sweep_only:
        make_halfcheetah().close()  # a missing MuJoCo stops here, in one line
    device = accelerator()
    devices = ["cpu", *([device] if device is not None else [])]
    sweep = discriminator_sweep(devices, args.rows, args.widths, repeats=args.repeats)
    crossing = crossover_rows(sweep, str(device)) if device is not None else {}
    rounds = (
        []
        if args.sweep_only
        else round_phases(GAILConfig(), load(), placement_cases(device), args.rounds, args.seed)
    )
    return {
        "accelerator": str(device) if device is not None else None,
        "sweep": sweep,
        "crossover_rows": [{"width": w, "penalty": p, "rows": r} for (w, p), r in crossing.items()],
        "rounds": rounds,
    }
