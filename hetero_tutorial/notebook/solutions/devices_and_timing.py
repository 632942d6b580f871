"""Solutions for notebook 00 (devices and honest timing)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def best_batch_per_width(rows: Sequence[dict[str, Any]], device: str = "cpu") -> dict[int, int]:
    """For each width, the batch size with the lowest seconds per sample on ``device``.

    Past that batch size, batching stops paying on this device: the work per
    sample, not the per-call overhead, sets the cost.
    """
    best: dict[int, tuple[float, int]] = {}
    for row in rows:
        if row["device"] != device:
            continue
        candidate = (row["seconds_per_sample"], row["batch_size"])
        best[row["width"]] = min(best.get(row["width"], candidate), candidate)
    return {width: batch for width, (_, batch) in sorted(best.items())}


HINTS = {
    "best_batch_per_width": (
        "Keep only the rows measured on `device`; then, for each width, you want the row with "
        "the smallest `seconds_per_sample`, and its batch size.",
        "Group the rows by width (a dict from width to the best row so far, replaced whenever "
        "a row is cheaper), then return a dict from each width to its best row's batch size. "
        "A tie keeps the first row met.",
    ),
}
"""Each exercise's hint ladder: first the idea, then the shape of the code (never the formula)."""
