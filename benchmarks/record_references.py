"""Record every benchmark of the series as reference records of this machine.

What: runs each ``python -m hetero_tutorial bench NAME --reference`` with its full
default budget (the same measurements the notebooks make in full mode), so that
``data/reference/<machine>/`` holds what the claims ledger needs. Why: a machine
with a GPU answers the claims a CPU-only machine cannot; its records, committed,
show every learner what a GPU measured. How long: about 30-40 minutes on a 2-core
CPU machine, less with a GPU. Run with the project's interpreter:

    .venv/bin/python benchmarks/record_references.py [--only crossover ppo ...]

Then record the notebooks' run times with ``python -m hetero_tutorial run
--reference`` (and ``--quick --reference``), and regenerate the README's tables:
``python -m hetero_tutorial ledger --readme``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

COMMANDS = {
    "crossover": ["crossover"],
    "ppo": ["ppo", "--placement", "all-accelerator", "--steps", "50000"],
    "profile": ["profile", "--placement", "all-accelerator", "--hidden", "128", "--native"],
    "profile-hybrid": ["profile", "--placement", "hybrid", "--hidden", "128", "--native"],
    "hybrid": ["hybrid"],
    "buffers": ["buffers"],
    "ddpg-transition": [
        "ddpg",
        "--buffer",
        "transition",
        "--steps",
        "5000",
        "--seed",
        "0",
        "1",
        "2",
    ],
    "ddpg-trajectory": [
        "ddpg",
        "--buffer",
        "trajectory",
        "--steps",
        "5000",
        "--seed",
        "0",
        "1",
        "2",
    ],
    "ddpg-tensor": ["ddpg", "--buffer", "tensor", "--steps", "5000", "--seed", "0", "1", "2"],
    "ddpg_placements": ["ddpg_placements"],
    "allocator": ["allocator"],
}
"""Each reference benchmark's command-line arguments (after ``bench``)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(COMMANDS), help="run only these")
    args = parser.parse_args()
    failed = []
    for name in args.only or list(COMMANDS):
        command = [sys.executable, "-m", "hetero_tutorial", "bench", *COMMANDS[name], "--reference"]
        print("$", " ".join(command[1:]), flush=True)
        if subprocess.run(command).returncode != 0:
            failed.append(name)
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
