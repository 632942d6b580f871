"""Solutions to notebook 04's exercises (replay buffers and DDPG's bootstrap)."""

from __future__ import annotations

import torch


def ring_slots(next_slot: int, count: int, capacity: int) -> list[int]:
    """The slots that the next ``count`` adds write to, in a ring of ``capacity`` slots.

    A ring buffer writes at ``next_slot`` and moves one slot on, back to 0 after the
    last: once full, each add overwrites the oldest transition.
    """
    return [(next_slot + i) % capacity for i in range(count)]


def td_target(
    reward: torch.Tensor,
    next_q: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """DDPG's critic target: bootstrap from ``next_q`` unless the episode *terminated*.

    A truncated episode (a time limit, as every Pendulum-v1 episode ends) did not
    reach a terminal state: its next state still has a value, so it is bootstrapped.
    ``truncated`` is taken only to show that it plays no part.
    """
    return reward + gamma * (1.0 - terminated) * next_q


HINTS = {
    "ring_slots": (
        "Each add writes one slot and moves on by one; after the last slot (capacity - 1) "
        "comes slot 0 again.",
        "A list of `count` slots, starting at `next_slot`, each one further than the last, "
        "brought back into the ring with the remainder of a division.",
    ),
    "td_target": (
        "Only a *terminated* episode has no future. A time limit cuts the episode, but the "
        "state it stopped in still has a value to bootstrap from.",
        "The target is the reward plus a discounted bootstrap term that a mask switches off; "
        "build the mask from `terminated` alone, as a float tensor, and leave `truncated` out "
        "of the formula.",
    ),
}
"""Each exercise's hint ladder: first the idea, then the shape of the code (never the formula)."""
