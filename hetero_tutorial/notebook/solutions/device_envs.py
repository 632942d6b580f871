"""Solutions to notebook 07's exercises: pieces of Pendulum-v1's batched step."""

from __future__ import annotations

import math

import torch


def wrap_angle(theta: torch.Tensor) -> torch.Tensor:
    """Angles wrapped into [-pi, pi): Gymnasium's ``angle_normalize``, for a whole batch.

    ``remainder`` (unlike C's ``fmod``) has the sign of the divisor, so negative angles
    wrap correctly too.
    """
    return torch.remainder(theta + math.pi, 2 * math.pi) - math.pi


def pendulum_cost(
    theta: torch.Tensor, theta_dot: torch.Tensor, torque: torch.Tensor
) -> torch.Tensor:
    """Pendulum-v1's cost of one step, for a batch: the reward is its negative.

    ``wrap(theta)² + 0.1 theta_dot² + 0.001 u²``, with the torque ``u`` clipped to
    [-2, 2] N m first (as the environment clips it).
    """
    u = torch.clamp(torque, -2.0, 2.0)
    return wrap_angle(theta) ** 2 + 0.1 * theta_dot**2 + 0.001 * u**2


HINTS = {
    "wrap_angle": (
        "Shift the angle so that the interval you want starts at 0, wrap it into one turn, "
        "then shift it back.",
        "One remainder by a full turn of the shifted tensor, then undo the shift. "
        "`torch.remainder` keeps the sign of the divisor (unlike C's `%`), which is what "
        "makes negative angles land in the interval.",
    ),
    "pendulum_cost": (
        "The cost is the sum of three penalties (angle away from upright, speed, torque), "
        "each computed for every environment at once; the torque is clipped before it is "
        "penalised.",
        "`torch.clamp` for the torque, your `my_wrap` for the angle, then one tensor "
        "expression with the weights the markdown gives; no Python loop.",
    ),
}
"""Each exercise's hint ladder: first the idea, then the shape of the code (never the formula)."""
