"""Where GAIL's discriminator should run (C12), measured: a round's phases, and the sweep.

Two measurements. :func:`round_phases` runs GAIL rounds under each placement (all on the
CPU; the discriminator alone on the accelerator; all but the environments on it) and times
every phase, its copies counted. :func:`discriminator_sweep` times the one phase whose size
implementations disagree on, the discriminator's update, over the rows per update (64 to
65,536 expert rows and as many of the policy's), its width (64, 256) and the gradient
penalty (off, on), on every device, interleaved: C12's "even with 64 hidden units" may be
C3's batch axis rather than an exception to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from hetero_tutorial.core.devices import synchronize
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.placement import Placement, placement
from hetero_tutorial.core.timing import compare, torch_threads
from hetero_tutorial.rl.gail.config import GAILConfig
from hetero_tutorial.rl.gail.demonstrations import Demonstrations
from hetero_tutorial.rl.gail.discriminator import DiscriminatorLearner
from hetero_tutorial.rl.gail.trainer import PHASES, GAILTrainer
from hetero_tutorial.studies.crossover_grid import crossover_cells

SWEEP_ROWS = (64, 256, 1_024, 4_096, 16_384, 65_536)
"""Rows of expert data (and as many of the policy's) per update: TorchRL's GAIL takes 256,
ikostrikov's 128, tianshou's 1,024, imitation's tuned HalfCheetah 8,192."""
SWEEP_WIDTHS = (64, 256)
HALFCHEETAH_DIMS = (17, 6)
"""HalfCheetah-v5's observation and action sizes: the discriminator's input."""
PENALTY = 10.0
"""The gradient penalty's weight where it is on (ikostrikov's)."""


@dataclass(frozen=True)
class PlacementCase:
    """One way to place GAIL: PPO's placement and the discriminator's device."""

    name: str
    placement: Placement
    disc_device: torch.device


def placement_cases(accelerator: torch.device | None) -> list[PlacementCase]:
    """All on the CPU; with an accelerator, also the discriminator alone on it, and all but
    the environments on it."""
    cpu = placement("all-cpu")
    cases = [PlacementCase("all on the CPU", cpu, torch.device("cpu"))]
    if accelerator is not None:
        on = placement("all-accelerator", accelerator)
        cases += [
            PlacementCase("discriminator on the accelerator", cpu, accelerator),
            PlacementCase("all but the environments on the accelerator", on, accelerator),
        ]
    return cases


@guarded("the GAIL rounds")
def round_phases(
    config: GAILConfig,
    demonstrations: Demonstrations,
    cases: Sequence[PlacementCase],
    rounds: int,
    seed: int = 0,
    threads: int | None = None,
) -> list[dict[str, Any]]:
    """``rounds`` GAIL rounds under each case, interleaved round by round; per case the
    seconds of each phase per round (the first round, with its one-off costs and its copies
    counted, left out), the copies of the first round per phase, the generator's episodes
    (their true returns) and the discriminator's accuracy per round."""
    if rounds < 2:
        raise UsageError(f"need 2 rounds or more (the first is counted, not timed); got {rounds}")
    config = replace(config, total_steps=rounds * config.num_envs * config.num_steps)
    with torch_threads(threads):
        trainers = {
            case.name: GAILTrainer(config, case.placement, demonstrations, seed,
                                   disc_device=case.disc_device, count_copies=True)
            for case in cases
        }  # fmt: skip
        first: dict[str, dict[str, float]] = {}
        for index in range(rounds):
            for name, trainer in trainers.items():
                trainer.run_iteration()
                if index == 0:
                    first[name] = dict(trainer.timer.seconds)
    rows = []
    for case in cases:
        trainer = trainers[case.name]
        steady = {p: trainer.timer.seconds[p] - first[case.name].get(p, 0.0) for p in PHASES
                  if p in trainer.timer.seconds}  # fmt: skip
        rows.append(
            {
                "case": case.name,
                "seconds_per_round": {p: s / (rounds - 1) for p, s in steady.items()},
                "copies": trainer.counter.by_phase() if trainer.counter else {},
                "episodes": list(trainer.collector.episodes),
                "accuracy": list(trainer.accuracy),
                "round_steps": config.num_envs * config.num_steps,
            }
        )
        trainer.close()
    return rows


def _update(learner: DiscriminatorLearner, expert: torch.Tensor, policy: torch.Tensor):
    return lambda: learner.update(expert, policy)


@guarded("the discriminator sweep")
def discriminator_sweep(
    devices: Sequence[torch.device],
    rows: Sequence[int] = SWEEP_ROWS,
    widths: Sequence[int] = SWEEP_WIDTHS,
    penalties: Sequence[float] = (0.0, PENALTY),
    repeats: int = 9,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Seconds per discriminator update on each device, interleaved device by device, at
    every (rows, width, penalty): the rows already on the device, as after a round's copy."""
    if not devices or not rows or not widths or repeats < 1:
        raise UsageError("give devices, rows and widths, and 1 repeat or more")
    obs_dim, action_dim = HALFCHEETAH_DIMS
    found = []
    for width in widths:
        for penalty in penalties:
            for count in rows:
                torch.manual_seed(seed)
                candidates = {}
                for device in devices:
                    learner = DiscriminatorLearner(
                        obs_dim, action_dim, width, 3e-4, penalty, device
                    )
                    expert, policy = (torch.randn(count, obs_dim + action_dim, device=device)
                                      for _ in range(2))  # fmt: skip
                    candidates[str(device)] = _update(learner, expert, policy)
                inner = max(1, 4_096 // count)  # short updates timed several to a repeat
                timings = compare(
                    candidates,
                    sync=lambda: [synchronize(d) for d in devices],
                    warmup=2,
                    repeats=repeats,
                    inner=inner,
                )
                for device, timing in timings.items():
                    found.append({"device": device, "rows": count, "width": width,
                                  "penalty": penalty, "median_s": timing.median,
                                  "iqr_s": timing.iqr, "repeats": len(timing.samples)})  # fmt: skip
    return found


def crossover_rows(sweep: Sequence[dict[str, Any]], accelerator: str) -> dict[tuple, int | None]:
    """Per (width, penalty): the fewest rows at which ``accelerator``'s update beats the
    CPU's by its whole IQR (None where it never does within the sweep)."""
    found: dict[tuple, int | None] = {}
    for width in sorted({r["width"] for r in sweep}):
        for penalty in sorted({r["penalty"] for r in sweep}):
            at = {(r["device"], r["rows"]): r for r in sweep
                  if r["width"] == width and r["penalty"] == penalty}  # fmt: skip
            wins = [
                count for (device, count), row in sorted(at.items(), key=lambda kv: kv[0][1])
                if device == accelerator and ("cpu", count) in at
                and row["median_s"] + row["iqr_s"] / 2
                < at[("cpu", count)]["median_s"] - at[("cpu", count)]["iqr_s"] / 2
            ]  # fmt: skip
            found[(width, penalty)] = min(wins) if wins else None
    return found


def grid_crossing(grid: Sequence[dict[str, Any]], width: int) -> tuple[int, int] | None:
    """Where notebook 00's width x batch grid (a ``bench.crossover`` record's ``grid``) puts
    the accelerator's forward below the CPU's at ``width``: the batch below the first that
    wins and that batch, the grid's own resolution; None where it never wins there (or the
    grid has no accelerator or no such width)."""
    cells = crossover_cells([r for r in grid if r["width"] == width])
    batches = sorted(cells)
    wins = [b for b in batches if cells[b].get(width)]
    if not wins:
        return None
    below = [b for b in batches if b < wins[0]]
    return (below[-1] if below else wins[0], wins[0])
