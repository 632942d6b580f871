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
