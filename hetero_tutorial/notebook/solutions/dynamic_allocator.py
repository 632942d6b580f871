"""Solutions for notebook 05 (the dynamic allocator)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def plan_seconds(
    cost_rows: Sequence[dict[str, Any]], rollout: str, update: str, threads: int | None
) -> float:
    """Seconds per iteration of a placement, priced from the allocator's measured cost table.

    The rollout and the advantages run on ``rollout``, the update on ``update``.
    When the two differ, the plan also pays one batched transfer of the rollout
    (``rollout -> update``) and one weight sync (``update -> rollout``): copies
    are part of the price. CPU rows carry the thread count; the other rows None.
    """

    def on(device: str) -> tuple[str, str | None, int | None]:
        return device, None, threads if device == "cpu" else None

    wanted = {("rollout", *on(rollout)), ("advantages", *on(rollout)), ("update", *on(update))}
    if rollout != update:
        wanted |= {("transfer", rollout, update, None), ("weight_sync", update, rollout, None)}
    return sum(
        row["seconds_per_iteration"]
        for row in cost_rows
        if (row["phase"], row["device"], row["target"], row["threads"]) in wanted
    )


HINTS = {
    "plan_seconds": (
        "A placement pays each phase on the device it puts it on: find each phase's row for "
        "that device (CPU rows also by thread count), and pay the copies only when rollout "
        "and update run on different devices.",
        "Select rows by `phase`, `device`, `target` and `threads` and add their "
        "`seconds_per_iteration`: rollout and advantages on `rollout`, the update on "
        "`update`; if the two differ, also the transfer (from rollout to update) and the "
        "weight sync (from update to rollout).",
    ),
}
"""Each exercise's hint ladder: first the idea, then the shape of the code (never the formula)."""
