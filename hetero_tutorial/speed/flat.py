"""All of a network's parameters, and their gradients, as views into one contiguous tensor.

For the small networks of classic-control RL, PyTorch's fixed cost per call,
not the arithmetic, sets the price of a step (notebook 00). A network with
twelve parameter tensors pays it twelve times to clip its gradients and step
the optimizer. With every parameter a view into one flat tensor, and the
gradients laid out the same way (:meth:`FlatParameters.gradients`), each of
those is one or two calls, and copying the weights to another device is a
single copy. :class:`FunctionalAdam` is the learners' optimizer: ``torch.optim.Adam``'s
rule through its functional form, which a compiled step can trace.

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

from collections.abc import Sequence

import torch
from torch import nn
from torch.optim.adam import adam

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.speed.compiler import keep_in_place

SEGMENT_ALIGNMENT = 16
"""Each parameter's segment starts at a multiple of this many elements (64 bytes of float32)."""


def _padded(size: int) -> int:
    return -(-size // SEGMENT_ALIGNMENT) * SEGMENT_ALIGNMENT


class FlatParameters:
    """``module``'s parameters re-seated as views into ``self.data`` (and grads into ``self.grad``).

    Stepping :attr:`tensors` (``[self.data]``) updates the module in place. The learners
    take gradients with ``torch.autograd.grad`` and lay them out flat with
    :meth:`gradients`; a backward pass (``loss.backward()``) accumulates into the gradient
    views in place instead, so the module's ``.grad`` land in ``self.grad`` (zero it with
    ``self.grad.zero_()``, never set the gradients to None): ``with_grad=False`` leaves
    them out.
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
        self.module_parameters = params
        """the module's parameters (views into :attr:`data`): what a loss is differentiated by"""
        self.layout = [
            (name, start, p.shape) for (name, p), start in zip(named, starts, strict=False)
        ]
        """``(name, offset, shape)`` of each parameter's segment"""

    @property
    def tensors(self) -> list[torch.Tensor]:
        """What the optimizer steps: the one flat tensor."""
        return [self.data]

    def gradients(self, grads: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """The gradients of the module's parameters (``torch.autograd.grad``'s, in
        :attr:`module_parameters`' order) laid out like :attr:`tensors`: one flat tensor, its
        padding zero (one ``torch.cat``)."""
        pieces = []
        for grad, (_, _, shape) in zip(grads, self.layout, strict=True):
            pieces.append(grad.reshape(-1))
            if pad := _padded(shape.numel()) - shape.numel():
                pieces.append(grad.new_zeros(pad))
        return [torch.cat(pieces)]

    def adam(self, lr: float, eps: float, mode: str = "eager") -> FunctionalAdam:
        """Adam over the flat tensor, for a step in ``mode`` (a compiled piece's): one fused
        kernel where PyTorch has one and the step runs eagerly (the CPU and CUDA); compiled,
        the plain form that Inductor fuses."""
        fused = mode == "eager" and self.data.device.type in ("cpu", "cuda")
        return FunctionalAdam(self.tensors, lr, eps, fused, mode)

    def copy_from(self, source: FlatParameters) -> None:
        """Overwrite these weights with ``source``'s: one copy, whichever devices they are on."""
        self.data.copy_(source.data)


def clip_norm_(grads: Sequence[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Scale ``grads`` in place to a global L2 norm of at most ``max_norm``; return the norm
    before: ``torch.nn.utils.clip_grad_norm_``'s rule, for gradients that are tensors of
    their own (``torch.autograd.grad``'s) rather than parameters' ``.grad``."""
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    scale = (max_norm / (norm + 1e-6)).clamp(max=1.0)
    for grad in grads:
        grad.mul_(scale)
    return norm


class FunctionalAdam:
    """``torch.optim.Adam`` over ``tensors``, stepped by its functional form,
    ``torch.optim.adam.adam`` (public: in that module's ``__all__``): the same rule and
    state, with the gradients passed in.

    Why not the optimizer object: ``Optimizer.step`` cuts a compiled graph on purpose
    (``torch.compile`` traces it as a graph of its own), where its functional form traces
    into the step's graph. For a ``compiled`` step the learning rate and the step counts are
    tensors on the tensors' device, so that the graph reads a changing rate or count as data
    (a Python number would be a constant of the graph, and compile it again when it
    changed); eagerly they are kept as ``torch.optim.Adam`` keeps them (a Python rate; the
    counts on the CPU unless the kernel is fused), so that no step waits for a device.
    ``fused``: PyTorch's one-kernel Adam (eager steps on a CPU or CUDA, as CleanRL's
    optimizers take it there); a compiled step takes the plain form, which Inductor fuses
    with the rest of the graph (the fused kernel cannot be traced). ``mode``: the compile mode
    of the step that calls it (:data:`~hetero_tutorial.speed.compiler.COMPILE_MODES`).
    """

    def __init__(
        self, tensors: Sequence[torch.Tensor], lr: float, eps: float, fused: bool, mode: str
    ) -> None:
        compiled = mode != "eager"
        self.tensors = list(tensors)
        """what a step moves, in place"""
        self.exp_avgs = [torch.zeros_like(t) for t in tensors]
        self.exp_avg_sqs = [torch.zeros_like(t) for t in tensors]
        on_device = fused or compiled
        self.steps = [torch.zeros((), device=t.device if on_device else "cpu") for t in tensors]
        device = tensors[0].device
        self.lr: float | torch.Tensor = torch.tensor(lr, device=device) if compiled else lr
        """the learning rate: set it with :meth:`set_lr`"""
        self.eps, self.fused = eps, fused
        keep_in_place(mode, [*self.tensors, *self.written])

    def set_lr(self, lr: float) -> None:
        """Set the learning rate of the next steps (in place where it is a tensor)."""
        if isinstance(self.lr, torch.Tensor):
            self.lr.fill_(lr)
        else:
            self.lr = lr

    def step(self, grads: Sequence[torch.Tensor]) -> None:
        """One Adam step of :attr:`tensors` along ``grads`` (one per tensor)."""
        adam(
            self.tensors, list(grads), self.exp_avgs, self.exp_avg_sqs, [], self.steps,
            fused=self.fused or None, foreach=False if not self.fused else None,
            amsgrad=False, beta1=0.9, beta2=0.999, lr=self.lr, weight_decay=0.0,
            eps=self.eps, maximize=False,
        )  # fmt: skip

    @property
    def written(self) -> tuple[torch.Tensor, ...]:
        """The state tensors a step updates in place (the learning rate only its owner sets)."""
        return *self.exp_avgs, *self.exp_avg_sqs, *self.steps


class PerTensorParameters:
    """A module's parameters as PyTorch keeps them, one tensor each: CleanRL's way.

    The same interface as :class:`FlatParameters`, so PPO runs unchanged on either;
    every operation here is one call per parameter tensor (PyTorch's ``foreach``
    kernels batch some of them), which is what flattening saves (``bench ppo_tricks``).
    """

    def __init__(self, module: nn.Module, with_grad: bool = True) -> None:
        self.tensors = list(module.parameters())
        """each parameter, as the module holds it: what the optimizer steps"""
        if not self.tensors:
            raise UsageError(f"{type(module).__name__} has no parameters")
        self.module_parameters = self.tensors

    def gradients(self, grads: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """The gradients of :attr:`module_parameters`, one per tensor: as they come."""
        return list(grads)

    def adam(self, lr: float, eps: float, mode: str = "eager") -> FunctionalAdam:
        """Adam over every parameter tensor, one tensor at a time (CleanRL's on a CPU)."""
        return FunctionalAdam(self.tensors, lr, eps, fused=False, mode=mode)

    @torch.no_grad()
    def copy_from(self, source: PerTensorParameters) -> None:
        """Overwrite these weights with ``source``'s: one copy per tensor."""
        for mine, theirs in zip(self.tensors, source.tensors, strict=True):
            mine.copy_(theirs)
