"""Placements that run the same code: measure each configuration once, and say so.

Without an accelerator, the series' presets all resolve to the CPU: ``all-accelerator``,
``hybrid`` and ``all-cpu`` then build the same trainer, run the same operations on the
same device, and differ only by the noise of the machine. Timing each of them is time
spent printing "1.00x". :func:`distinct_placements` groups placements by what they run
(the device of every phase, and anything else the key names, such as a CPU thread
count), so a study runs one placement per group and reports it for all; :func:`same_devices_note`
says so in a sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import fields
from typing import TypeVar

import torch

from hetero_tutorial.core.placement import Placement

T = TypeVar("T")

_NOT_CODE = ("name", "accelerator_missing")
"""Placement fields that name or describe a placement without changing what it runs."""


def devices_key(placement: Placement) -> tuple[tuple[str, str], ...]:
    """What a placement runs: every field but its name, e.g. ``(("rollout_device", "cpu"), ...)``.

    Read from the dataclass's fields, so a phase added to :class:`Placement` (the
    environments' device, say) is part of the key without a change here.
    """
    return tuple(
        (f.name, str(getattr(placement, f.name)))
        for f in fields(placement)
        if f.name not in _NOT_CODE
    )


def group_same(items: Sequence[T], key: Callable[[T], Hashable]) -> list[list[T]]:
    """``items`` grouped by ``key``, groups in order of first appearance, items in order."""
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return list(groups.values())


def distinct_placements(placements: Sequence[Placement]) -> list[list[Placement]]:
    """Placements grouped by the devices they run on; the first of each group stands for it."""
    return group_same(placements, devices_key)


def where(placement: Placement) -> str:
    """The devices of a placement in a few words: ``"everything on cpu"``, or per phase."""
    devices = {str(device) for device in placement.devices}
    if len(devices) == 1:
        return f"everything on {devices.pop()}"
    return ", ".join(
        f"{name.removesuffix('_device')} on {value}"
        for name, value in devices_key(placement)
        if isinstance(getattr(placement, name), torch.device)
    )


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def same_devices_note(groups: Sequence[Sequence[Placement]]) -> str | None:
    """A sentence for each group of several placements (None when every one is distinct)."""
    notes = [
        f"{_names([p.name for p in group])} resolve to the same devices here "
        f"({where(group[0])}): they run the same code, so it is measured once, as "
        f"{group[0].name}, and stands for all of them."
        for group in groups
        if len(group) > 1
    ]
    return " ".join(notes) or None
