"""Solutions for notebook 10 (the claims ledger)."""

from __future__ import annotations


def speedup_and_time_saved(before_s: float, after_s: float) -> tuple[float, float]:
    """A change from ``before_s`` to ``after_s`` seconds as (speed-up, fraction of time saved).

    The two are different numbers: 72 s -> 53 s is a 1.36x speed-up and saves 26% of
    the time; the article calls it "28% faster", which is neither.
    """
    if before_s <= 0 or after_s <= 0:
        raise ValueError("durations must be positive")
    return before_s / after_s, 1 - after_s / before_s


HINTS = {
    "speedup_and_time_saved": (
        "A speed-up compares rates (how many times as much work per second); time saved "
        "compares durations (what fraction of the old time is gone). The same change gives "
        "two different percentages.",
        "Return a tuple of two numbers, each a ratio of `before_s` and `after_s`; a slowdown "
        "should come out as a speed-up below 1 and a negative saving.",
    ),
}
"""Each exercise's hint ladder: first the idea, then the shape of the code (never the formula)."""
