"""Quick benchmarks for the records the claims ledger needs and this machine lacks.

A learner who jumps straight to the ledger (notebook 10) should not wait minutes for
benchmarks they did not ask for: the notebook lists what is missing (:func:`missing`) and
prints the one command that measures it all (:data:`COMMAND`, which runs
:func:`measure_missing`); its parameter ``MEASURE_MISSING`` runs it in place.
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
    "bench.gail": [
        (["gail", "--rows", "64", "1024", "--repeats", "3", "--rounds", "2"], "gail"),
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


WRITTEN_BY = {
    "bench.crossover": "00",
    "bench.ppo": "01",
    "bench.profile": "02",
    "bench.hybrid": "03",
    "bench.ddpg": "04",
    "bench.ddpg_placements": "04",
    "bench.allocator": "05",
    "bench.gail": "09",
}
"""The notebook that writes each record kind the claims read."""
COMMAND = "python -m hetero_tutorial.app.fill_ledger"
"""The one command that measures every record the ledger lacks on this machine."""


def missing() -> dict[str, list[str]]:
    """The record kinds the claims need and this machine lacks, each with the claims it answers."""
    have = verdicts.machines()[verdicts.THIS_MACHINE]
    found: dict[str, list[str]] = {}
    for claim in claims.CLAIMS:
        for kind in claim.needs:
            if not have.get(kind):
                found.setdefault(kind, []).append(claim.id)
    return found


def missing_lines() -> list[str]:
    """What notebook 10 prints instead of measuring: each missing record, the claims and the
    notebook that measure it, then the one command that fills them all."""
    found = missing()
    if not found:
        return ["Every record the claims need is here: nothing to measure."]
    lines = [
        f"not measured yet: {kind} (for {', '.join(ids)}; notebook {WRITTEN_BY[kind]} writes it)"
        for kind, ids in found.items()
    ]
    remedy = (
        f"To measure all of them with small budgets (a few minutes), run `{COMMAND}`, or set "
        "MEASURE_MISSING = True above; or run the notebooks named."
    )
    return [*lines, remedy]


def measure_missing(directory: Path = results.RESULTS_DIR) -> list[str]:
    """Run the quick benchmark of every record kind the claims need but this machine lacks.

    Returns the commands it ran (empty when every measurement was there).
    """
    commands = []
    for kind in missing():
        for arguments, tag in QUICK_BENCHMARKS[kind]:
            argv = [*arguments, "--json", str(directory / f"bench.{tag}.json")]
            cli.bench(argv)
            commands.append("python -m hetero_tutorial bench " + " ".join(argv))
    return commands


if __name__ == "__main__":
    for line in measure_missing() or ["nothing to measure: every record the ledger needs is here"]:
        print(line)
