"""The speed tricks of the compiled path on a CPU, behind one switch: :data:`CPU_FORMS`.

The networks and environments in ``rl/`` say what they compute; three computations there ask
this module how to write it, because Inductor's CPU code for the plain form measured slower
than for another form of the same function, on the series' CPUs:

* :func:`tanh`: the hidden layers' tanh as ``2 sigmoid(2x) - 1`` (PyTorch's tanh kernel,
  and the one Inductor generates, cost several times a sigmoid of the same tensor);
* :func:`paired_product`: the paired networks' layer product, where Inductor would call the
  CPU's matrix library (MKL), as a loop of its own on a few rows, and turned round for a
  layer a few columns wide;
* :func:`flags`: a batched environment's terminated and truncated flags, as bytes.

Each form applies only inside a graph that ``torch.compile`` traces for a CPU, and only
while :data:`CPU_FORMS` is on (the default). Eager code, and every GPU, get the plain form:
eager PPO learns exactly what it learned without this module, and the compiled forms differ
from the plain ones by float rounding (the tests bound it). ``benchmarks/compile_overhead.py``
times the forms against the plain ones; :func:`cpu_forms` turns the forms off for a block, so
that a study can compile a run both ways. Dynamo guards the switch's value: a graph traced
inside the block is traced again, with the forms, where it is called outside it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

CPU_FORMS = True
"""The switch: write the three computations in their CPU forms inside a compiled graph."""

LIBRARY_ROWS = 64
"""Rows from which a paired layer's product goes to the matrix library: see
:func:`paired_product`."""
NARROW = 16
"""Outputs below this make a layer narrow (an actor's or critic's output layer): see
:func:`paired_product`."""


@contextmanager
def cpu_forms(enabled: bool) -> Iterator[None]:
    """Set :data:`CPU_FORMS` for the block (what pieces traced inside it are written with)."""
    global CPU_FORMS
    saved, CPU_FORMS = CPU_FORMS, enabled
    try:
        yield
    finally:
        CPU_FORMS = saved


def _compiling_for_cpu(x: torch.Tensor) -> bool:
    return CPU_FORMS and torch.compiler.is_compiling() and x.device.type == "cpu"


def tanh(x: torch.Tensor) -> torch.Tensor:
    """``tanh(x)``; in a graph compiled for a CPU, as ``2 sigmoid(2x) - 1``, the same function
    (it fuses into one loop with its neighbours; eagerly it would be three calls). The two
    forms differ by float rounding (about 2e-7)."""
    if _compiling_for_cpu(x):
        return 2 * torch.sigmoid(2 * x) - 1
    return torch.tanh(x)


def paired_product(bias: torch.Tensor, h: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``bias + h @ weight`` for both networks of a pair, (2, rows, in) @ (2, in, out): one
    ``torch.baddbmm``. In a graph compiled for a CPU, the form that measured fastest on the
    series' CPU (the sizes from timing the library's calls eagerly; the gains from compiled
    graphs of either form, timed interleaved):

    * on fewer than :data:`LIBRARY_ROWS` rows (a rollout's at tens of environments), as an
      elementwise product and a sum, which Inductor generates as a loop of its own: the
      library call costs more than the arithmetic of a few rows;
    * a narrow layer (fewer than :data:`NARROW` outputs) on more rows, transposed, as
      ``(weight^T @ h^T)^T``: the library takes about as long for a product two columns wide
      as for one sixty-four wide; turned round, the two columns are two rows, and the
      product and its gradient for the weights take a quarter of the time or less.
    """
    if _compiling_for_cpu(h):
        if h.shape[1] < LIBRARY_ROWS:
            return (h.unsqueeze(-1) * weight.unsqueeze(1)).sum(2) + bias
        if weight.shape[-1] < NARROW:
            return torch.baddbmm(bias.mT, weight.mT.contiguous(), h.mT).mT
    return torch.baddbmm(bias, h, weight)


def flags(*masks: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The boolean ``masks`` as they are; in a graph compiled for a CPU, as bytes (0 or 1),
    which the caller reads back as bool: ``mask.view(torch.bool)`` outside the graph (free),
    ``mask.bool()`` where the graph reads them itself (PyTorch 2.13's Inductor fails to
    compile that view for a CPU). Inductor's CPU code stores a bool tensor element by element:
    599 us for 65,536 flags against 35 us as bytes, on the series' AMD EPYC
    (``benchmarks/compile_overhead.py``, probe 3)."""
    if masks and _compiling_for_cpu(masks[0]):
        return tuple(torch.where(mask, 1, 0).to(torch.uint8) for mask in masks)
    return masks
