"""All of a network's parameters, and their gradients, as views into one contiguous tensor.

For the small networks of classic-control RL, PyTorch's fixed cost per call,
not the arithmetic, sets the price of a step (notebook 00). A network with
twelve parameter tensors pays it twelve times to zero its gradients, clip
them and step the optimizer. With every parameter a view into one flat tensor
(and every gradient a view into a second one), each of those is one or two
calls, and copying the weights to another device is a single copy.

Build it after the module has moved to its device (``module.to(...)`` would
replace the views with new tensors).

Each parameter's segment starts on a 64-byte boundary (:data:`SEGMENT_ALIGNMENT`):
a view that starts a few floats into a line makes CUDA fall back to slower,
unvectorised kernels. The padding between segments is zero in the weights and in
the gradients, and stays zero: no module reads it, so no gradient reaches it, Adam
moves a parameter with zero gradient and zero moments by zero, and zeros add
nothing to the gradient norm.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from hetero_tutorial.core.errors import UsageError

SEGMENT_ALIGNMENT = 16
"""Each parameter's segment starts at a multiple of this many elements (64 bytes of float32)."""


def _padded(size: int) -> int:
    return -(-size // SEGMENT_ALIGNMENT) * SEGMENT_ALIGNMENT


class FlatParameters:
    """``module``'s parameters re-seated as views into ``self.data`` (and grads into ``self.grad``).

    ``self.parameter`` is the one tensor to give the optimizer; it shares
    ``self.data``'s memory, so stepping it updates the module in place.
    Backward passes accumulate into the gradient views in place, so the module's
    gradients land in ``self.grad`` (zero it with :meth:`zero_grad`, never set
    the gradients to None).
    """

    def __init__(self, module: nn.Module, with_grad: bool = True) -> None:
        named = list(module.named_parameters())
        params = [p for _, p in named]
        if not params:
            raise UsageError(f"{type(module).__name__} has no parameters to flatten")
        if len({(p.device, p.dtype) for p in params}) != 1:
            raise UsageError("flatten a module once all its parameters share one device and dtype")
        starts = [0]
        for p in params:
            starts.append(starts[-1] + _padded(p.numel()))
        self.data = params[0].new_zeros(starts[-1])  # padding: zeros, and zeros it stays
        self.grad = torch.zeros_like(self.data) if with_grad else None
        for p, offset in zip(params, starts, strict=False):
            segment = slice(offset, offset + p.numel())
            self.data[segment] = p.detach().reshape(-1)
            p.data = self.data[segment].view_as(p)
            if self.grad is not None:
                p.grad = self.grad[segment].view_as(p)
        self.parameter = nn.Parameter(self.data, requires_grad=with_grad)
        self.parameter.grad = self.grad
        self.layout = [
            (name, start, p.shape) for (name, p), start in zip(named, starts, strict=False)
        ]
        """``(name, offset, shape)`` of each parameter's segment, as :meth:`views` cuts them"""

    def views(self, flat: torch.Tensor) -> dict[str, torch.Tensor]:
        """The module's parameters, by name, as views into ``flat`` (laid out like :attr:`data`).

        For ``torch.func.functional_call``: the module computed with ``flat`` as its weights.
        The compiled steps differentiate these views and lay their gradients out flat with
        :meth:`flatten`.
        """
        return {
            name: flat[start : start + shape.numel()].view(shape)
            for name, start, shape in self.layout
        }

    def flatten(self, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        """One tensor per parameter, by name (as :meth:`views` gives them), laid out flat like
        :attr:`data`, its padding zero: one ``torch.cat``.

        The compiled steps (PPO's, DDPG's) differentiate the views, not the flat tensor: the
        flat tensor's gradient would be assembled by a loop that tests, for every element,
        which segment it lies in, where a concatenation lets each gradient be written in place.
        """
        pieces = []
        for name, _, shape in self.layout:
            pieces.append(tensors[name].reshape(-1))
            if pad := _padded(shape.numel()) - shape.numel():
                pieces.append(tensors[name].new_zeros(pad))
        return torch.cat(pieces)

    def adam(self, lr: float, eps: float = 1e-8) -> torch.optim.Adam:
        """An Adam optimiser over the flat parameter: one fused kernel where PyTorch has one.

        Fused Adam exists for the CPU and CUDA in every PyTorch this package supports;
        elsewhere (MPS, XPU on older releases) the default implementation runs.
        """
        fused = self.data.device.type in ("cpu", "cuda")
        return torch.optim.Adam([self.parameter], lr=lr, eps=eps, fused=fused)

    def zero_grad(self) -> None:
        """Zero every gradient with one call."""
        self.grad.zero_()

    def clip_grad_norm_(self, max_norm: float) -> torch.Tensor:
        """Scale the gradients so their global L2 norm is at most ``max_norm``; return the norm.

        The same rule as ``torch.nn.utils.clip_grad_norm_``, in three calls.
        """
        return clip_norm_(self.grad, max_norm)

    def copy_from(self, source: FlatParameters) -> None:
        """Overwrite these weights with ``source``'s: one copy, whichever devices they are on."""
        self.data.copy_(source.data)


def clip_norm_(grad: torch.Tensor, max_norm: float) -> torch.Tensor:
    """Scale ``grad`` in place to an L2 norm of at most ``max_norm``; return its norm before."""
    norm = torch.linalg.vector_norm(grad)
    grad.mul_((max_norm / (norm + 1e-6)).clamp(max=1.0))
    return norm


class AdamState(NamedTuple):
    """What :func:`adam_update` keeps between the steps of one flat tensor, on its device:
    the first and second moment estimates, the 0-d count of steps taken and the 0-d learning
    rate. Tensors all, so that a compiled step reads a changing rate or count as data, where
    a Python number would be a constant of the graph and compile it again when it changed."""

    exp_avg: torch.Tensor
    exp_avg_sq: torch.Tensor
    steps: torch.Tensor
    lr: torch.Tensor

    @classmethod
    def of(cls, weights: torch.Tensor, lr: float) -> AdamState:
        """A fresh state for ``weights`` (no steps taken) at learning rate ``lr``."""
        return cls(
            torch.zeros_like(weights),
            torch.zeros_like(weights),
            weights.new_zeros(()),
            torch.tensor(lr, device=weights.device),
        )

    @property
    def written(self) -> tuple[torch.Tensor, ...]:
        """The tensors a step updates in place (the learning rate only its owner sets)."""
        return self.exp_avg, self.exp_avg_sq, self.steps


def adam_update(
    weights: torch.Tensor,
    grad: torch.Tensor,
    state: AdamState,
    eps: float,
    betas: tuple[float, float] = (0.9, 0.999),
) -> None:
    """One step of Adam on ``weights`` and its ``state``, in place: ``torch.optim.Adam``'s
    rule (no weight decay) as plain tensor operations, so that ``torch.compile`` traces it
    into the same graph as the gradient (PyTorch's fused kernel would be a call of its own).
    """
    beta1, beta2 = betas
    state.steps.add_(1)
    state.exp_avg.lerp_(grad, 1 - beta1)
    state.exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction1 = 1 - beta1**state.steps
    bias_correction2_sqrt = (1 - beta2**state.steps).sqrt()
    denominator = state.exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
    weights.sub_(state.lr / bias_correction1 * state.exp_avg / denominator)


class PerTensorParameters:
    """A module's parameters as PyTorch keeps them, one tensor each: CleanRL's way.

    The same interface as :class:`FlatParameters`, so PPO runs unchanged on either;
    every operation here is one call per parameter tensor (PyTorch's ``foreach``
    kernels batch some of them), which is what flattening saves (``bench ppo_tricks``).
    """

    def __init__(self, module: nn.Module, with_grad: bool = True) -> None:
        self.tensors = list(module.parameters())
        if not self.tensors:
            raise UsageError(f"{type(module).__name__} has no parameters")

    def adam(self, lr: float, eps: float = 1e-8) -> torch.optim.Adam:
        """Adam over every parameter tensor, PyTorch's default implementation (as CleanRL)."""
        return torch.optim.Adam(self.tensors, lr=lr, eps=eps)

    def zero_grad(self) -> None:
        """Drop every gradient (the next backward pass allocates them again)."""
        for tensor in self.tensors:
            tensor.grad = None

    def clip_grad_norm_(self, max_norm: float) -> torch.Tensor:
        """``torch.nn.utils.clip_grad_norm_`` over the tensors; returns the norm."""
        return nn.utils.clip_grad_norm_(self.tensors, max_norm)

    @torch.no_grad()
    def copy_from(self, source: PerTensorParameters) -> None:
        """Overwrite these weights with ``source``'s: one copy per tensor."""
        for mine, theirs in zip(self.tensors, source.tensors, strict=True):
            mine.copy_(theirs)
