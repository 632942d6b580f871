"""torch.compile (and CUDA graphs on CUDA) vs eager: per piece, and PPO and DDPG end to end.

Writes ``rows``: one per piece, mode, device and size, with ``piece``, ``mode``,
``device``, ``size``, ``seconds`` (median per call, per steady PPO iteration or per DDPG
update) and ``compile_seconds``; ``speedups``: each compiled mode over eager at each size,
the range of the paired repeats, and the calls to break even (PPO's and DDPG's rows carry
theirs, in iterations or updates). Pieces: ``act``
at batches of observations, ``env_step`` at numbers of batched CartPole environments,
``update`` at minibatch sizes (see :mod:`hetero_tutorial.studies.compiling`); end to end:
PPO under ``all-device`` at the races' settings, and ``hybrid`` (unless ``--no-ppo``), and
DDPG on Pendulum under ``hybrid``, its update compiled (unless ``--ddpg-steps 0``).
``--tag NAME`` names the record apart (``bench.compile.NAME.json``): a run of some pieces
only, beside another of the rest, as the GPU reference run records it in two halves.
"""

from __future__ import annotations

import argparse
from typing import Any

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.options import add_ddpg_arguments
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.studies import compiling as study
from hetero_tutorial.studies.compile_rows import (
    CompileStudy,
    PieceRow,
    RunRow,
    SpeedupRow,
    speedup_rows,
)

RECORD_TAG = "tag"
"""A run named apart keeps its own record (see the package docstring)."""

PPO_NUM_ENVS = (8, 1024)
"""All-device PPO at the peers race's two points (rejax's settings: 32 steps per env)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pieces",
        nargs="*",
        default=list(study.PIECES),
        choices=study.PIECES,
        help="the pieces to time alone (default all; none: the PPO and DDPG runs only)",
    )
    for piece in study.PIECES:
        parser.add_argument(
            f"--{piece.replace('_', '-')}-sizes",
            type=int,
            nargs="+",
            default=list(study.SIZES[piece]),
            help=f"{study.SIZE_NAMES[piece]} sizes of {piece} (default "
            f"{' '.join(map(str, study.SIZES[piece]))})",
        )
    add_ddpg_arguments(
        parser, only=("threads",), helps={"threads": "PyTorch CPU threads (default 1)"}
    )
    parser.add_argument("--repeats", type=int, default=7, help="interleaved timing repeats")
    parser.add_argument(
        "--ppo-num-envs", type=int, nargs="+", default=list(PPO_NUM_ENVS), help="all-device PPO"
    )
    parser.add_argument("--ppo-iterations", type=int, default=5, help="timed PPO iterations")
    parser.add_argument("--no-ppo", action="store_true", help="leave out the PPO runs")
    parser.add_argument(
        "--ddpg-steps", type=int, default=200, help="timed DDPG update steps (0: no DDPG run)"
    )
    parser.add_argument(
        "--tag", default=None, help="name the record apart: bench.compile.TAG.json (a part run)"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.ddpg_steps < 0:  # before any measuring
        raise UsageError(f"--ddpg-steps must be 0 (no DDPG run) or more; got {args.ddpg_steps}")
    device = accelerator() or placement("all-cpu").update_device
    modes = study.modes_here(device)
    rows: list[PieceRow | RunRow] = []
    for piece in args.pieces:
        sizes = getattr(args, f"{piece}_sizes")
        found = study.piece_rows(piece, sizes, device, modes, args.repeats, threads=args.threads)
        rows += found
        for row in speedup_rows(found):
            print(_describe(row))
    speedups: list[SpeedupRow | RunRow] = list(speedup_rows(rows))
    if not args.no_ppo:
        for num_envs in args.ppo_num_envs:
            config = PPOConfig.tuned("CartPole-v1", num_envs=num_envs, anneal_lr=False)
            config = study.with_iterations(config, args.ppo_iterations)
            for name in (
                ("all-device", "hybrid") if num_envs == PPO_NUM_ENVS[0] else ("all-device",)
            ):
                found = study.ppo_rows(
                    config, placement(name), modes, args.ppo_iterations, 0, args.threads
                )
                rows += found
                speedups += [r for r in found if r.mode != "eager"]
                for row in found:
                    print(_describe(row))
    if args.ddpg_steps > 0:
        found = study.ddpg_rows(
            DDPGConfig(), placement("hybrid"), modes, args.ddpg_steps, threads=args.threads
        )
        rows += found
        speedups += [r for r in found if r.mode != "eager"]
        for row in found:
            print(_describe(row))
    return CompileStudy(
        device=str(device),
        modes=modes,
        threads=args.threads,
        rows=rows,
        speedups=speedups,
        tag=args.tag,
    ).fields()


def _describe(row: SpeedupRow | RunRow) -> str:
    spread = f" ({row.low:.2f}-{row.high:.2f}x)" if row.low is not None else ""
    return (
        f"{row.piece} {row.mode} on {row.device}, size {row.size}: "
        f"{row.speedup:.2f}x eager{spread}, compile {row.compile_seconds:.1f} s"
    )
