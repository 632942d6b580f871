"""Two MLPs of the same shape in one batched product per layer: PPO's actor and critic.

A speed trick, not part of PPO: the same two networks as
:class:`~hetero_tutorial.rl.nets.SeparateMLPs` (the tests check it step for step), in half the
calls. Inside a graph compiled for a CPU, the product and the tanh take the forms of
:mod:`~hetero_tutorial.speed.cpu_forms`; eagerly, the plain ``torch.baddbmm`` and
``torch.tanh``.
"""

from __future__ import annotations

import math
from itertools import pairwise

import torch
from torch import nn

from hetero_tutorial.core.errors import require_positive
from hetero_tutorial.speed import cpu_forms


class PairedMLP(nn.Module):
    """Two MLPs of the same shape evaluated together: PPO's actor and critic.

    Layer ``i`` of both networks is one batched matrix multiply (``torch.baddbmm``)
    on weights stacked as ``(2, in, out)``, where two ``nn.Linear`` layers would
    make two calls. For the small networks of classic control the cost of a call,
    not its arithmetic, sets the price (notebook 00), so pairing the networks
    nearly halves the cost of their forward and backward passes. The two members
    share no weights: member 0 is one network, member 1 the other.
    """

    def __init__(
        self,
        in_features: int,
        hidden: int,
        out_features: int,
        out_gains: tuple[float, float],
        layers: int = 2,
    ) -> None:
        super().__init__()
        require_positive(
            in_features=in_features, hidden=hidden, out_features=out_features, layers=layers
        )
        sizes = [in_features, *[hidden] * layers, out_features]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for fan_in, fan_out in pairwise(sizes):
            last = len(self.weights) == layers
            weight = torch.empty(2, fan_in, fan_out)
            for member, gain in enumerate(out_gains if last else (math.sqrt(2), math.sqrt(2))):
                nn.init.orthogonal_(weight[member], gain)
            self.weights.append(nn.Parameter(weight))
            self.biases.append(nn.Parameter(torch.zeros(2, 1, fan_out)))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Both networks' outputs for the same input ``x`` (B, in): two (B, out) tensors."""
        h = x.expand(2, *x.shape)
        for index, (weight, bias) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = cpu_forms.paired_product(bias, h, weight)  # bias + h @ weight, both networks
            if index < len(self.weights) - 1:
                h = cpu_forms.tanh(h)
        return h[0], h[1]
