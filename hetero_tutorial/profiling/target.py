"""The training runs the profilers look at, in this process (cProfile) or in a child (py-spy).

py-spy profiles a program it launches, so the runs are also a command:
``python -m hetero_tutorial.profiling.target ppo all-accelerator hybrid --hidden 128``
(the run options of every PPO command, :mod:`hetero_tutorial.rl.ppo.options`)
trains under each placement in turn, in one process, so that importing PyTorch
(seconds) is paid once. Each placement runs inside its own function
(:data:`RUNNERS`), so the frames of a recording say which run a sample came from.
The runs train without the copy counter (a dispatch mode that would appear in
every stack) and without evaluation episodes: their profile is training alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from hetero_tutorial.core.placement import placement as make_placement
from hetero_tutorial.core.processes import die_with_parent
from hetero_tutorial.rl.ppo import options as run_options
from hetero_tutorial.rl.ppo.options import RunOptions
from hetero_tutorial.rl.ppo.runs import PPOResult, train


def ppo(placement_name: str, options: RunOptions) -> PPOResult:
    """Train PPO under a placement preset with the run ``options``, as profilers see it."""
    placement = make_placement(placement_name, options.accelerator)
    config = options.config()
    return train(
        config, placement, options.seed, threads=options.threads, count_copies=False,
        eval_episodes=0,
    )  # fmt: skip


def run_all_accelerator(options: RunOptions) -> PPOResult:
    return ppo("all-accelerator", options)


def run_hybrid(options: RunOptions) -> PPOResult:
    return ppo("hybrid", options)


def run_all_cpu(options: RunOptions) -> PPOResult:
    return ppo("all-cpu", options)


RUNNERS: dict[str, Callable[..., PPOResult]] = {
    "all-accelerator": run_all_accelerator,
    "hybrid": run_hybrid,
    "all-cpu": run_all_cpu,
}
"""The function each placement trains in: its name in a stack marks the run."""


def command(placements: Sequence[str], options: RunOptions) -> list[str]:
    """The command line that trains under each of ``placements`` in one fresh Python process."""
    return [sys.executable, "-m", __spec__.name, "ppo", *placements, *options.argv()]


def main(argv: list[str] | None = None) -> int:
    die_with_parent()  # py-spy launched this program: it goes when py-spy goes
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__)
    runs = parser.add_subparsers(dest="run", required=True)
    sub = runs.add_parser("ppo", help="PPO under each placement preset in turn")
    sub.add_argument("placements", nargs="+", choices=list(RUNNERS))
    run_options.add_arguments(sub)
    args = parser.parse_args(argv)
    options = RunOptions.from_args(args)
    for name in args.placements:
        run = RUNNERS[name](options)
        print(f"{run.placement}: {run.env_steps} steps, {run.env_steps_per_s:,.0f} steps/s")
        # the phase timer of this very run, for the profiler that launched it to read back
        print(PHASE_SECONDS, name, json.dumps(dict(run.phase_seconds)), flush=True)
    return 0


PHASE_SECONDS = "phase-seconds:"
"""How a run's line of phase-timer seconds starts in the program's output."""


def phase_seconds(output: str) -> dict[str, dict[str, float]]:
    """Each run's phase-timer seconds, read from the output of :func:`main`."""
    found = {}
    for line in output.splitlines():
        if line.startswith(PHASE_SECONDS):
            _, name, numbers = line.split(" ", 2)
            found[name] = json.loads(numbers)
    return found


if __name__ == "__main__":
    raise SystemExit(main())
