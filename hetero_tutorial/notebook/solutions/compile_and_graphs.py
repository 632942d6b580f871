"""Solutions to notebook 08's exercise: reading the compiled pieces' speed-ups."""

from __future__ import annotations

from typing import Any


def largest_gain(speedups: list[dict[str, Any]]) -> str:
    """The piece whose compiled run gained most over eager at any of its sizes, judged by
    the low end of its range (the gain every repeat agreed on), not its median."""
    best = max(speedups, key=lambda r: r["low"] if r["low"] is not None else r["speedup"])
    return best["piece"]


HINTS = {
    "largest_gain": (
        "Each row is one piece at one size; a gain counts only as far as every repeat agrees, "
        "so compare the bottom of each row's range, not its middle.",
        "One max over the rows with a key that reads the row's low end (falling back to its "
        "speed-up where no range was measured), then return that row's piece name.",
    ),
}
"""Each exercise's hint ladder: first the idea, then the shape of the code (never the formula)."""
