"""A count with its noun, singular or plural as the count needs: "1 seed", "3 seeds"; and a
list in words: "32, 128 and 2048"."""

from __future__ import annotations

from collections.abc import Sequence


def counted(count: int | str, noun: str, plural: str | None = None) -> str:
    """``count`` then ``noun``, plural unless the count is one (``plural`` where adding
    an "s" is wrong): ``counted(1, "seed")`` is "1 seed", ``counted(2, "seed")`` "2 seeds".
    A count read back from a record's keys may be a string: ``counted("2", "thread")``."""
    count = int(count)
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def listed(items: Sequence[object], noun: str = "") -> str:
    """``items`` as a sentence lists them: "32", "32 and 128", "32, 128 and 2048" (none: "");
    after ``noun``, plural where there are several: ``listed([32, 128], "width")`` is
    "widths 32 and 128"."""
    words = [str(item) for item in items]
    said = f"{', '.join(words[:-1])} and {words[-1]}" if len(words) > 1 else "".join(words)
    return f"{noun}{'s' * (len(words) > 1)} {said}" if noun else said
