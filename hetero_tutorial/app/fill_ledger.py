"""Quick benchmarks for the records the claims ledger needs and this machine lacks.

Notebook 09 (the ledger) calls :func:`measure_missing` so that a learner who
skipped a notebook still sees every claim judged on their own machine.
"""

from __future__ import annotations

from pathlib import Path

from hetero_tutorial.app import cli
from hetero_tutorial.core import results
from hetero_tutorial.ledger import claims, verdicts

QUICK_BENCHMARKS: dict[str, list[tuple[list[str], str]]] = {
    "bench.crossover": [
        (["crossover", "--widths", "32", "256", "1024", "--batch-sizes", "1", "256"], "crossover"),
    ],
    "bench.ppo": [
        (["ppo", "--placement", "all-accelerator", "--steps", "4096"], "ppo.all-accelerator"),
    ],
    "bench.profile": [
        (
            ["profile", "--placement", "all-accelerator", "--hidden", "128", "--steps", "4096"],
            "profile.all-accelerator",
        ),
    ],
    "bench.hybrid": [
        (
            ["hybrid", "--steps", "4096", "--widths", "128", "512", "--sweep-iterations", "1"],
            "hybrid",
        ),
    ],
    "bench.ddpg": [
        (
            ["ddpg", "--buffer", design, "--steps", "1400", "--learning-starts", "1000"],
            f"ddpg.{design}",
        )
        for design in ("transition", "trajectory")
    ],
    "bench.ddpg_placements": [
        (["ddpg_placements", "--steps", "1400"], "ddpg_placements"),
    ],
    "bench.allocator": [
        (
            [
                "allocator",
                "--widths",
                "64",
                "1024",
                "--num-steps",
                "64",
                "--epochs",
                "2",
                "--iterations",
                "2",
            ],
            "allocator",
        ),
    ],
}
"""Small versions of the benchmarks behind each claim: (command-line arguments, file tag)."""


def measure_missing(directory: Path = results.RESULTS_DIR) -> list[str]:
    """Run the quick benchmark of every record kind the claims need but this machine lacks.

    Returns the commands it ran (empty when every measurement was there).
    """
    have = verdicts.machines()[verdicts.THIS_MACHINE]
    needed = dict.fromkeys(kind for claim in claims.CLAIMS for kind in claim.needs)
    commands = []
    for kind in needed:
        if have.get(kind):
            continue
        for arguments, tag in QUICK_BENCHMARKS[kind]:
            argv = [*arguments, "--json", str(directory / f"bench.{tag}.json")]
            cli.bench(argv)
            commands.append("python -m hetero_tutorial bench " + " ".join(argv))
    return commands
