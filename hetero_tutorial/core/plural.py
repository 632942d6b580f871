"""A count with its noun, singular or plural as the count needs: "1 seed", "3 seeds"."""

from __future__ import annotations


def counted(count: int | str, noun: str, plural: str | None = None) -> str:
    """``count`` then ``noun``, plural unless the count is one (``plural`` where adding
    an "s" is wrong): ``counted(1, "seed")`` is "1 seed", ``counted(2, "seed")`` "2 seeds".
    A count read back from a record's keys may be a string: ``counted("2", "thread")``."""
    count = int(count)
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
