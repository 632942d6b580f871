"""Solutions for notebook 02 (profiling the transfer overhead)."""

from __future__ import annotations

from hetero_tutorial.profiling.stacks import Frame, Stacks


def inclusive_share(stacks: Stacks, function: str) -> float:
    """Fraction of the samples with a frame of ``function`` anywhere in their stack (0..1).

    This is *inclusive* time: the function and everything it called. A sample
    counts once even when the function appears in its stack several times
    (recursion), or the share could pass 1.
    """
    total = sum(stacks.values())
    if total == 0:
        raise ValueError("no samples to take a share of")
    inside = sum(
        count
        for stack, count in stacks.items()
        if any(Frame.parse(text).function == function for text in stack)
    )
    return inside / total


HINTS = {
    "inclusive_share": (
        "A sample counts once if any frame of its stack belongs to `function`: the question "
        "for each stack is whether it is in there, not how often.",
        "Sum the counts of the stacks that pass that test and divide by the sum of all the "
        "counts. `stacks.Frame.parse(text).function` gives the function of one frame string.",
    ),
}
"""Each exercise's hint ladder: first the idea, then the shape of the code (never the formula)."""
