"""The article's fixed rule of thumb (claim C3), corrected: the baseline the allocator must beat."""

from __future__ import annotations

from dataclasses import replace

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import Placement, placement


def select_device(hidden_dim: int, has_heavy_matrix_ops: bool) -> str:
    """The article's rule of thumb (claim C3), with its undefined flag made an explicit argument.

    Up to 128 hidden units: ``"cpu"``; above 256: ``"accelerator"``; in between,
    the accelerator only when ``has_heavy_matrix_ops`` (the article reads this name
    without ever defining it). It returns ``"accelerator"`` where the article
    returns ``'cuda'``, so that it also means MPS or XPU.
    """
    if hidden_dim < 1:
        raise UsageError(f"hidden_dim must be at least 1, got {hidden_dim}")
    if hidden_dim <= 128:
        return "cpu"
    if hidden_dim <= 256:
        return "accelerator" if has_heavy_matrix_ops else "cpu"
    return "accelerator"


def fixed_rule_placement(hidden_dim: int, has_heavy_matrix_ops: bool) -> Placement:
    """The placement the article's rule picks: everything on the device :func:`select_device` names.

    On a machine without an accelerator, "accelerator" falls back to the CPU and
    the placement says so (``accelerator_missing``).
    """
    device = select_device(hidden_dim, has_heavy_matrix_ops)
    return replace(
        placement("all-cpu" if device == "cpu" else "all-accelerator"), name="fixed-rule"
    )
