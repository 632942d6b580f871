"""The training runs the profilers look at, in this process (cProfile) or in a child (py-spy).

py-spy profiles a program it launches, so the runs are also a command:
``python -m hetero_tutorial.profiling.target ppo all-accelerator hybrid --hidden 128``
trains under each placement in turn, in one process, so that importing PyTorch
(seconds) is paid once. Each placement runs inside its own function
(:data:`RUNNERS`), so the frames of a recording say which run a sample came from.
The runs train without the copy counter (a dispatch mode that would appear in
every stack) and without evaluation episodes: their profile is training alone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import PPOResult, train


def ppo(
    placement_name: str,
    *,
    env_id: str = "CartPole-v1",
    hidden: int = 128,
    steps: int = 8192,
    seed: int = 0,
    threads: int | None = 1,
    accelerator: str | None = None,
) -> PPOResult:
    """Train PPO (``steps`` environment steps) under a placement preset, as profilers see it."""
    plan = placement(placement_name, accelerator)
    config = PPOConfig.tuned(env_id, total_steps=steps, hidden=hidden)
    return train(config, plan, seed, threads=threads, count_copies=False, eval_episodes=0)


def run_all_accelerator(**options: Any) -> PPOResult:
    return ppo("all-accelerator", **options)


def run_hybrid(**options: Any) -> PPOResult:
    return ppo("hybrid", **options)


def run_all_cpu(**options: Any) -> PPOResult:
    return ppo("all-cpu", **options)


RUNNERS: dict[str, Callable[..., PPOResult]] = {
    "all-accelerator": run_all_accelerator,
    "hybrid": run_hybrid,
    "all-cpu": run_all_cpu,
}
"""The function each placement trains in: its name in a stack marks the run."""


def command(placements: Sequence[str], **options: object) -> list[str]:
    """The command line that trains under each of ``placements`` in one fresh Python process."""
    argv = [sys.executable, "-m", __spec__.name, "ppo", *placements]
    for name, value in options.items():
        if value is not None:
            argv += [f"--{name.replace('_', '-')}", str(value)]
    return argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__)
    runs = parser.add_subparsers(dest="run", required=True)
    sub = runs.add_parser("ppo", help="PPO under each placement preset in turn")
    sub.add_argument("placements", nargs="+", choices=list(RUNNERS))
    sub.add_argument("--env-id", default="CartPole-v1")
    sub.add_argument("--hidden", type=int, default=128)
    sub.add_argument("--steps", type=int, default=8192)
    sub.add_argument("--seed", type=int, default=0)
    # absent: leave PyTorch's thread count alone (what threads=None asked of command())
    sub.add_argument("--threads", type=int, default=None)
    sub.add_argument("--accelerator", default=None)
    options = vars(parser.parse_args(argv))
    del options["run"]
    for name in options.pop("placements"):
        run = RUNNERS[name](**options)
        print(f"{run.placement}: {run.env_steps} steps, {run.env_steps_per_s:,.0f} steps/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
