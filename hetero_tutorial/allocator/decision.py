"""The decision: the chosen placement, the measurements behind it, and its reasons in words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hetero_tutorial.allocator.meter import PHASE_UNITS
from hetero_tutorial.allocator.pricing import Candidate, PhaseCost
from hetero_tutorial.allocator.workload import Workload
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.plural import counted
from hetero_tutorial.core.timing import format_seconds
from hetero_tutorial.rl.ppo.trainer import PHASES


@dataclass(frozen=True)
class Decision:
    """A chosen placement, with the measurements behind it and the reasons in words."""

    workload: str
    signature: str
    placement: Placement
    """the chosen devices, named ``"allocator"``"""
    threads: int | None
    """PyTorch CPU threads to train with (None: leave the setting alone)"""
    chosen: Candidate
    candidates: tuple[Candidate, ...]
    """every placement priced, cheapest first"""
    reasons: dict[str, str]
    """a sentence per phase, plus ``"plan"`` (and ``"threads"`` when that was a choice)"""
    measure_seconds: float
    """wall time this call spent measuring (0 for a decision answered from the cache)"""
    rounds: int
    """samples per measured cell (the rounds after the first are interleaved)"""
    held: bool = False
    """True when hysteresis kept the previous placement over a slightly cheaper one"""
    skipped: tuple[str, ...] = ()
    """placements left out because the budget ran out before they were measured"""
    from_cache: bool = False
    """True when the decision was remembered, not measured"""

    @property
    def costs(self) -> list[PhaseCost]:
        """Every measured cell, in phase order."""
        seen = {c.cell: c for candidate in self.candidates for c in candidate.costs}
        return sorted(seen.values(), key=lambda c: (PHASES.index(c.cell.phase), c.cell.where))

    def cost_rows(self) -> list[dict[str, Any]]:
        """The measured costs per phase and device, as table rows."""
        return [cost.row() for cost in self.costs]

    def candidate_rows(self) -> list[dict[str, Any]]:
        return [candidate.row() for candidate in self.candidates]

    def explain(self) -> str:
        return "\n".join(f"- {phase}: {reason}" for phase, reason in self.reasons.items())

    def fields(self) -> dict[str, Any]:
        """The decision as plain data for a results record."""
        return {
            "network": self.workload,
            "signature": self.signature,
            "plan": self.chosen.name,
            "rollout": str(self.placement.rollout_device),
            "storage": str(self.placement.storage_device),
            "update": str(self.placement.update_device),
            "threads": self.threads,
            "estimated_seconds_per_iteration": self.chosen.total,
            "measure_seconds": self.measure_seconds,
            "rounds": self.rounds,
            "held": self.held,
            "skipped": list(self.skipped),
            "costs": self.cost_rows(),
            "candidates": self.candidate_rows(),
            "reasons": self.reasons,
        }


def _phase_reason(
    phase: str,
    chosen: Candidate,
    candidates: Sequence[Candidate],
    said: set[str],
    envs: int | None = None,
) -> str:
    """Why ``phase`` runs where the chosen placement puts it: its cost there and elsewhere
    (``envs``: the environments one vector step of the rollout steps at once). ``said``:
    the placements whose total an earlier phase's reason gave (each is given once)."""
    mine = chosen.cost(phase)
    unit = PHASE_UNITS[phase]
    if phase == "rollout" and envs is not None:
        unit += f" ({envs} environment{'s' * (envs != 1)})"
    text = (
        f"on {mine.cell.where}: {format_seconds(mine.seconds_per_call)} per {unit}, "
        f"x{mine.calls_per_iteration} = {format_seconds(mine.seconds_per_iteration)} per iteration"
    )
    others = {c.cost(phase).cell: c.cost(phase) for c in candidates if c.cost(phase) is not None}
    others.pop(mine.cell, None)
    if others:
        listed = ", ".join(
            f"{cell.where} {format_seconds(o.seconds_per_call)}" for cell, o in others.items()
        )
        text += f" (elsewhere: {listed})"
    cheaper = [o for o in others.values() if o.seconds_per_call < mine.seconds_per_call]
    if cheaper:
        best_alt = min(cheaper, key=lambda o: o.seconds_per_call)
        via = min(
            (
                c
                for c in candidates
                if c.cost(phase) is not None and c.cost(phase).cell == best_alt.cell
            ),
            key=lambda c: c.total,
        )
        text += f"; the estimate for {best_alt.cell.where} is lower for this phase alone"
        if via.label in said:
            text += f", but not in all ({via.label}, above)"
        else:
            total = format_seconds(via.total)
            text += f", but its best placement ({via.label}) costs {total} in all"
            said.add(via.label)
    return text + "."


def _copy_reason(chosen: Candidate, workload: Workload) -> str:
    if chosen.rollout_device == chosen.update_device:
        return (
            f"none: rollout and update share {chosen.rollout_device}, so the update reads the "
            "rollout in place and the rollout's policy is the learner."
        )
    transfer, sync = chosen.cost("transfer"), chosen.cost("weight_sync")
    return (
        f"one batched copy of the rollout ({workload.rollout_bytes:,} bytes) "
        f"{transfer.cell.where}: {format_seconds(transfer.seconds_per_call)}; one weight sync "
        f"{sync.cell.where}: {format_seconds(sync.seconds_per_call)}, per iteration."
    )


def _thread_reason(chosen: Candidate, candidates: Sequence[Candidate]) -> str | None:
    same_devices = [
        c
        for c in candidates
        if (c.rollout_device, c.update_device) == (chosen.rollout_device, chosen.update_device)
    ]
    if chosen.threads is None or len(same_devices) < 2:
        return None
    listed = ", ".join(f"{c.threads}: {format_seconds(c.total)}" for c in same_devices)
    return (
        f"{counted(chosen.threads, 'CPU thread')}; estimated seconds per iteration by thread "
        f"count: {listed}."
    )


def explain(
    chosen: Candidate,
    candidates: Sequence[Candidate],
    workload: Workload,
    held: bool,
    margin: float,
    skipped: Sequence[str] = (),
) -> dict[str, str]:
    """A sentence per phase saying where it runs and why, and one for the plan as a whole."""
    best = candidates[0]
    runner_up = next((c for c in candidates if c != chosen), None)
    summary = (
        f"{chosen.label}: {format_seconds(chosen.total)} per iteration, estimated without the "
        "environments' own steps (the same in every placement)"
    )
    if runner_up is not None:
        summary += f"; next: {runner_up.label} at {format_seconds(runner_up.total)}"
    if held:
        summary += (
            f". Kept from the previous decision: within {margin:.0%} of the cheapest "
            f"({best.label}, {format_seconds(best.total)}), so a close call does not move training"
        )
    if all(c.rollout_device.type == "cpu" and c.update_device.type == "cpu" for c in candidates):
        summary += ". No accelerator: every phase runs on the CPU"
    if skipped:
        summary += f". Not measured within the budget, so not chosen: {', '.join(skipped)}"
    reasons = {"plan": summary + "."}
    threads = _thread_reason(chosen, candidates)
    if threads:
        reasons["threads"] = threads
    envs = getattr(workload.config, "num_envs", None)
    said: set[str] = set()
    reasons["rollout"] = _phase_reason("rollout", chosen, candidates, said, envs)
    reasons["storage"] = (
        f"beside the rollout on {chosen.rollout_device}, written without a copy; advantages "
        f"there: {_phase_reason('advantages', chosen, candidates, said)}"
    )
    reasons["copies"] = _copy_reason(chosen, workload)
    reasons["update"] = _phase_reason("update", chosen, candidates, said)
    return reasons
