"""Pricing: every candidate placement's seconds per iteration, from the measured cells.

A :class:`Candidate` puts the rollout (and its storage) on one device and the update
on another, at a CPU thread count; its price is the sum of its cells' seconds per
iteration, copies included. No thresholds, no table keyed by width.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from hetero_tutorial.allocator.meter import Cell
from hetero_tutorial.core.machine import usable_cores
from hetero_tutorial.core.timing import Timing
from hetero_tutorial.rl.ppo.trainer import PHASES


@dataclass(frozen=True)
class PhaseCost:
    """What one cell measured: seconds per call, and per iteration."""

    cell: Cell
    timing: Timing
    calls_per_iteration: int

    @property
    def seconds_per_call(self) -> float:
        return self.timing.median

    @property
    def seconds_per_iteration(self) -> float:
        return self.timing.median * self.calls_per_iteration

    def row(self) -> dict[str, Any]:
        return {
            "phase": self.cell.phase,
            "device": self.cell.device,
            "target": self.cell.target,
            "threads": self.cell.threads,
            "where": self.cell.where,
            "seconds_per_call": self.seconds_per_call,
            "iqr_s": self.timing.iqr,
            "samples": len(self.timing.samples),
            "calls_per_iteration": self.calls_per_iteration,
            "seconds_per_iteration": self.seconds_per_iteration,
        }


def placement_name(rollout: torch.device, update: torch.device) -> str:
    """The series' name for a (rollout, update) pair: a preset's name where one matches."""
    on_cpu = rollout.type == "cpu", update.type == "cpu"
    return {
        (True, True): "all-cpu",
        (True, False): "hybrid",
        (False, False): "all-accelerator",
        (False, True): "reverse-hybrid",
    }[on_cpu]


@dataclass(frozen=True)
class Candidate:
    """A placement the allocator prices: rollout and storage on one device, update on another."""

    rollout_device: torch.device
    """where the rollout runs, and the storage with it"""
    update_device: torch.device
    threads: int | None
    """PyTorch CPU threads (None when no priced phase runs on the CPU)"""
    costs: tuple[PhaseCost, ...] = field(default=(), compare=False)
    """the measured cells this placement runs"""

    @property
    def name(self) -> str:
        return placement_name(self.rollout_device, self.update_device)

    @property
    def label(self) -> str:
        """The name, with the thread count where it is set: ``"all-cpu, 2 threads"``."""
        if self.threads is None:
            return self.name
        return f"{self.name}, {self.threads} thread{'s' if self.threads > 1 else ''}"

    def cells(self) -> list[Cell]:
        """The cells this placement runs in an iteration (copies only when the devices differ)."""
        r, u = self.rollout_device, self.update_device
        on_r, on_u = (self.threads if d.type == "cpu" else None for d in (r, u))
        cells = [
            Cell("rollout", str(r), on_r),
            Cell("advantages", str(r), on_r),
            Cell("update", str(u), on_u),
        ]
        if r != u:
            cells += [
                Cell("transfer", str(r), None, str(u)),
                Cell("weight_sync", str(u), None, str(r)),
            ]
        return cells

    def seconds(self, phase: str) -> float:
        """Seconds per iteration of ``phase`` (0 for a copy this placement does not make)."""
        return sum(c.seconds_per_iteration for c in self.costs if c.cell.phase == phase)

    @property
    def total(self) -> float:
        """Estimated seconds per iteration of the placement-dependent phases."""
        return sum(c.seconds_per_iteration for c in self.costs)

    def cost(self, phase: str) -> PhaseCost | None:
        return next((c for c in self.costs if c.cell.phase == phase), None)

    def row(self) -> dict[str, Any]:
        return {
            "plan": self.name,
            "rollout": str(self.rollout_device),
            "update": str(self.update_device),
            "threads": self.threads,
            **{f"{phase}_s": self.seconds(phase) for phase in PHASES},
            "total_s": self.total,
        }


def candidate_placements(
    devices: Sequence[torch.device], threads: Sequence[int]
) -> Iterator[Candidate]:
    """Every (rollout, update, threads) to price: every device pair at the first thread count first.

    The thread count varies only where a CPU phase runs. This is the order of
    measuring, so a tight budget still sees every device before extra thread counts.
    """
    for count in threads:
        for rollout in devices:
            for update in devices:
                if "cpu" in (rollout.type, update.type):
                    yield Candidate(rollout, update, count)
                elif count == threads[0]:
                    yield Candidate(rollout, update, None)


def thread_choices(cores: int | None = None) -> tuple[int, ...]:
    """CPU thread counts worth trying: 1, 2, 4, ... and the number of usable cores."""
    if cores is None:
        cores = usable_cores()
    choices = [1]
    while choices[-1] * 2 < cores:
        choices.append(choices[-1] * 2)
    return tuple(choices + ([cores] if cores > 1 else []))
