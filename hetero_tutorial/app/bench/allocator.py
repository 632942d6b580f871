"""The dynamic allocator against fixed plans: seconds per iteration per network and plan.

For each MLP width (PPO on ``--env``, in order of growing width, one allocator:
a curriculum) and for the Nature-CNN workload, the allocator measures and
decides, then the fixed rule, the three presets and the allocator's placement
train side by side. Example: ``python -m hetero_tutorial bench allocator
--widths 64 256 1024 --iterations 5 --json allocator.json``. The record holds
``decisions`` (per network: the chosen placement and the measured cost table),
``rows`` (per network and plan: seconds per iteration, and the allocator's
decision seconds), ``criterion`` (the allocator against the best fixed plan)
and ``curriculum``.
"""

from __future__ import annotations

import argparse
from typing import Any

from hetero_tutorial.allocator import trials
from hetero_tutorial.allocator.allocator import Allocator
from hetero_tutorial.allocator.cnn import CNNConfig, frames_label


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", default="Pendulum-v1", help="Gymnasium id for the MLP networks")
    parser.add_argument(
        "--widths", type=int, nargs="+", default=[64, 128, 256, 512, 1024], help="MLP widths"
    )
    parser.add_argument("--num-steps", type=int, default=None, help="MLP rollout steps per env")
    parser.add_argument("--epochs", type=int, default=None, help="MLP update epochs")
    parser.add_argument("--no-cnn", action="store_true", help="leave out the CNN workload")
    parser.add_argument("--frames", choices=("auto", "atari", "synthetic"), default="auto")
    parser.add_argument("--game", default="breakout", help="Atari game for real frames")
    parser.add_argument("--cnn-envs", type=int, default=8, help="CNN environments")
    parser.add_argument("--cnn-steps", type=int, default=32, help="CNN rollout steps per env")
    parser.add_argument("--cnn-minibatch", type=int, default=64, help="CNN minibatch size")
    parser.add_argument("--cnn-epochs", type=int, default=2, help="CNN update epochs")
    parser.add_argument("--iterations", type=int, default=5, help="timed iterations per plan")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of measuring/decision")
    parser.add_argument("--margin", type=float, default=0.05, help="hysteresis margin (fraction)")
    parser.add_argument(
        "--threads", type=int, nargs="+", default=None, help="CPU thread counts to try"
    )


def run(args: argparse.Namespace) -> dict[str, Any]:
    overrides = {"num_steps": args.num_steps, "update_epochs": args.epochs}
    overrides = {name: value for name, value in overrides.items() if value is not None}
    networks = [trials.mlp_trial(args.env, w, **overrides) for w in args.widths]
    cnn = CNNConfig(
        game=args.game,
        frames=args.frames,
        num_envs=args.cnn_envs,
        num_steps=args.cnn_steps,
        minibatch_size=args.cnn_minibatch,
        update_epochs=args.cnn_epochs,
    )
    if not args.no_cnn:
        networks.append(trials.cnn_trial(cnn))
    chooser = Allocator(threads=args.threads, budget_s=args.budget, margin=args.margin)
    decisions, rows = trials.compare(
        networks, chooser, args.iterations, progress=lambda name: print("network", name)
    )
    stages = [network.name for network in networks if network.workload.kind == "mlp"]
    return {
        "env_id": args.env,
        "frames": None if args.no_cnn else frames_label(cnn),
        "iterations": args.iterations,
        "budget_s": args.budget,
        "margin": args.margin,
        **trials.record_fields(decisions, rows, stages),
    }
