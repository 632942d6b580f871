"""The dynamic device allocator: measure each phase on each device, then choose a placement.

The article's allocator (claim C10) times 100 forward passes of the actor on the
CPU and on the GPU, with no warm-up and no synchronisation, and compares their
ratio with a threshold looked up by the first layer's width; its table holds
only 128 and 256 (64 and 128 for CNNs), so any other width raises ``KeyError``.
This allocator instead:

* **measures** every phase whose cost depends on where it runs, with the copies
  each choice implies: a rollout step (observations in, forward pass, results
  stored, actions out), the advantages computed where the rollout is stored, the
  batched copy of the rollout to the update device, a gradient step, and the
  weight sync back to the rollout's copy of the policy. Measurements are warmed
  up, synchronised and interleaved (:mod:`hetero_tutorial.core.timing`);
* **prices** every candidate placement from those measurements and picks the
  cheapest: no thresholds, no table keyed by width;
* **remembers** decisions by the workload's signature (asking again costs
  nothing; a network that grows is measured again), keeps its current placement
  when a new best is within a margin (hysteresis, so a close call does not
  flip-flop), and stops measuring when its time budget is spent;
* **explains** itself: a table of measured costs per phase and device, and a
  sentence per phase saying why.

Without an accelerator every phase runs on the CPU, and the choice left is how
many CPU threads PyTorch uses, which it measures too.

The parts, in the order a decision uses them: :mod:`~hetero_tutorial.allocator.workload`
(what an iteration asks), :mod:`~hetero_tutorial.allocator.meter` (timing PPO's own phases),
:mod:`~hetero_tutorial.allocator.pricing` (candidates and their prices),
:mod:`~hetero_tutorial.allocator.decision` (the choice and its reasons); this module
keeps the budget, the cache and the hysteresis. The article's fixed rule, the baseline
to beat, is :mod:`~hetero_tutorial.allocator.fixed_rule`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import torch

from hetero_tutorial.allocator.decision import Decision, explain
from hetero_tutorial.allocator.meter import Cell, LiveMeter, Meter, calls_per_iteration
from hetero_tutorial.allocator.pricing import (
    Candidate,
    PhaseCost,
    candidate_placements,
    thread_choices,
)
from hetero_tutorial.allocator.workload import Workload
from hetero_tutorial.core.devices import devices_here, with_index
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import Timing


class Allocator:
    """Chooses a placement for a workload from measurements, and remembers it by signature.

    ``devices``: the devices to consider (default: the CPU and the accelerator, if any).
    ``threads``: CPU thread counts to try (default: :func:`thread_choices`).
    ``budget_s``: seconds of measuring per decision. The first round of samples
    always runs; another starts only if it is expected to finish within the budget.
    ``margin``: hysteresis. The current placement is kept while its estimate is
    within this fraction of the cheapest.
    ``max_rounds``: at most this many samples per cell.
    ``meter``: builds the meter for a workload (default :class:`LiveMeter`; tests inject fakes).
    ``clock``: the clock the budget is kept by, in seconds.
    """

    def __init__(
        self,
        devices: Sequence[torch.device | str] | None = None,
        threads: Sequence[int] | None = None,
        budget_s: float = 1.0,
        margin: float = 0.05,
        max_rounds: int = 9,
        meter: Callable[[Workload], Meter] = LiveMeter,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.devices = [with_index(d) for d in (devices if devices is not None else devices_here())]
        self.threads = tuple(threads if threads is not None else thread_choices())
        if not self.devices or len(set(self.devices)) != len(self.devices):
            raise UsageError(
                f"give distinct devices to choose from, e.g. ['cpu']; got {self.devices}"
            )
        if not self.threads or min(self.threads) < 1:
            raise UsageError(f"thread counts must be at least 1, got {self.threads}")
        if budget_s <= 0 or margin < 0 or max_rounds < 1:
            raise UsageError(
                f"need budget_s > 0, margin >= 0, max_rounds >= 1; got {budget_s}, {margin}, "
                f"{max_rounds}"
            )
        self.budget_s, self.margin, self.max_rounds = budget_s, margin, max_rounds
        self.meter, self.clock = meter, clock
        self.cache: dict[tuple[Any, ...], Decision] = {}
        """decisions by workload signature"""
        self.current: Decision | None = None
        """the latest decision: what hysteresis holds on to"""
        self.measured = 0
        """how many decisions were measured (the rest came from the cache)"""

    def decide(self, workload: Workload) -> Decision:
        """The placement for ``workload``: remembered if its signature was seen, else measured."""
        key = workload.signature()
        if key in self.cache:  # remembered: this call measured nothing, so it cost no time
            decision = replace(self.cache[key], from_cache=True, measure_seconds=0.0)
        else:
            decision = self._measure_and_choose(workload)
            self.cache[key] = decision
            self.measured += 1
        self.current = decision
        return decision

    def _measure_and_choose(self, workload: Workload) -> Decision:
        meter = self.meter(workload)
        meter.start(self.devices)  # before the clock: a device's start-up is not the decision's
        start = self.clock()
        every = list(candidate_placements(self.devices, self.threads))
        samples = self._first_samples(meter, every, start)
        rounds = self._more_rounds(meter, samples, start)
        costs = {
            cell: PhaseCost(cell, Timing(tuple(seconds)), calls_per_iteration(cell.phase, workload))
            for cell, seconds in samples.items()
        }
        measured = [c for c in every if all(cell in costs for cell in c.cells())]
        priced = [replace(c, costs=tuple(costs[cell] for cell in c.cells())) for c in measured]
        candidates = tuple(sorted(priced, key=lambda c: c.total))
        chosen = self._hold_or_switch(candidates)
        held = chosen != candidates[0]
        skipped = tuple(c.label for c in every if c not in measured)
        return Decision(
            workload=workload.name,
            signature=workload.short_signature(),
            placement=Placement(
                "allocator", chosen.rollout_device, chosen.rollout_device, chosen.update_device
            ),
            threads=chosen.threads,
            chosen=chosen,
            candidates=candidates,
            reasons=explain(chosen, candidates, workload, held, self.margin, skipped),
            measure_seconds=self.clock() - start,
            rounds=rounds,
            held=held,
            skipped=skipped,
        )

    def _first_samples(
        self, meter: Meter, candidates: Sequence[Candidate], start: float
    ) -> dict[Cell, list[float]]:
        """Warm up and sample each cell once, in the candidates' order, while the budget lasts.

        Once one candidate is fully measured, a cell starts only if it should fit in
        the time left (judged by the same phase measured elsewhere), and is not
        sampled if its warm-up alone used up the budget: a device or thread count
        that is slow even to warm up (a CPU shared with other work, at more
        threads than it has free cores) cannot hold up the decision. Plans with
        unmeasured cells are left out of it.
        """
        samples: dict[Cell, list[float]] = {}
        for cell in dict.fromkeys(cell for c in candidates for cell in c.cells()):
            complete = any(all(x in samples for x in c.cells()) for c in candidates)
            if complete and not self._fits(cell, samples, start):
                break
            meter.prepare([cell])
            if complete and self.clock() - start > self.budget_s:
                break
            samples[cell] = [meter.sample(cell)]
        return samples

    def _fits(self, cell: Cell, samples: dict[Cell, list[float]], start: float) -> bool:
        """Whether a warm-up and a sample of ``cell`` should fit in the time left.

        The guess: twice (a warm-up and a sample) the cheapest first sample of the same
        phase on the same device, at any thread count; of the same phase anywhere when the
        device has none yet (0 if none at all). Priced at another device's cost, a CPU
        update at each new thread count (five of them on 16 cores) would look as cheap as
        the accelerator's and start just before the budget ends, overrunning it by its
        own warm-up and sample.
        """
        same_phase = [
            (other.device, s[0]) for other, s in samples.items() if other.phase == cell.phase
        ]
        here = [seconds for device, seconds in same_phase if device == cell.device]
        guess = min(here or [seconds for _, seconds in same_phase], default=0.0)
        return self.clock() - start + 2 * guess <= self.budget_s

    def _more_rounds(self, meter: Meter, samples: dict[Cell, list[float]], start: float) -> int:
        """Sample every measured cell once more per round, interleaved, while another round fits.

        Returns the number of samples each cell has.
        """
        rounds, last_round = 1, sum(seconds[0] for seconds in samples.values())
        while rounds < self.max_rounds and self.clock() - start + last_round <= self.budget_s:
            began = self.clock()
            for cell, seconds in samples.items():
                seconds.append(meter.sample(cell))
            last_round, rounds = self.clock() - began, rounds + 1
        return rounds

    def _hold_or_switch(self, candidates: Sequence[Candidate]) -> Candidate:
        """The cheapest candidate, unless the current placement is within the margin of it."""
        best = candidates[0]
        if self.current is None:
            return best
        held = next((c for c in candidates if c == self.current.chosen), None)
        if held is not None and held.total <= best.total * (1 + self.margin):
            return held
        return best
