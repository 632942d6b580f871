"""Where one compiled PPO minibatch step's time goes on the CPU (:func:`step_breakdown`): its
matrix products, the arithmetic that no compiler removes, against everything else (the
generated kernels, the code that calls them, the guards): the overhead compiling has left.

Notebook 08 sets it beside rejax's step (:mod:`hetero_tutorial.notebook.compile_race`); the
step is :mod:`~hetero_tutorial.studies.compiling`'s ``update`` piece, compiled.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from hetero_tutorial.core.devices import synchronize
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.timing import compare, torch_threads
from hetero_tutorial.speed.compiler import CompiledPiece, compile_unavailable
from hetero_tutorial.studies.compile_rows import Breakdown
from hetero_tutorial.studies.compiling import CALLS, minibatch_learner

MATMULS = {"aten::mm": 0, "aten::bmm": 0, "aten::addmm": 1, "aten::baddbmm": 1}
"""The matrix products a compiled graph calls (MKL's, on a CPU), each with the position of
its first matrix among its inputs (after the added bias, for ``addmm`` and ``baddbmm``)."""


def _matmul_flops(name: str, shapes: list[list[int]]) -> int:
    """Floating-point operations of one product: 2 x rows x inner x columns (x batch)."""
    left, right = shapes[MATMULS[name]], shapes[MATMULS[name] + 1]
    return 2 * int(np.prod(left)) * right[-1]


PEAK_SIZE = 1024
"""Rows (and columns) of the square product whose rate stands for a core's peak."""


def _peak_flops_per_s(device: torch.device, size: int = PEAK_SIZE, calls: int = 5) -> float:
    """The rate of one large square product (``size`` x ``size``): about the core's peak."""
    a, b = (torch.randn(size, size, device=device) for _ in range(2))
    a @ b  # warm-up
    synchronize(device)
    began = time.perf_counter()
    for _ in range(calls):
        a @ b
    synchronize(device)
    return 2 * size**3 * calls / (time.perf_counter() - began)


@guarded("the step breakdown")
def step_breakdown(
    size: int = 256, calls: int = 50, threads: int | None = 1, repeats: int = 5
) -> Breakdown:
    """One compiled PPO minibatch step of ``size`` on the CPU, taken apart.

    ``step_s``: its seconds per call (median of ``repeats`` timed runs, no profiler);
    ``matmul_s``: the seconds per call its matrix products ran (torch.profiler's self time
    of :data:`MATMULS` over ``calls`` calls), within ``profiled_s``, the profiled calls'
    own seconds per call (the profiler on); ``matmul_flops``: their floating-point
    operations per call, from their shapes; ``peak_flops_per_s``: this core's rate on one
    large product (``peak_size`` square). The products are the arithmetic that any
    compiler, XLA too, must do; the rest of the step (generated kernels, the code that
    calls them, the guards) is the overhead compiling has left. Raises a UsageError where
    compiling cannot run here.

    The step timed is the series' own (on a CPU, Inductor's C++ wrapper calls the kernels).
    The products are profiled in a twin of it compiled with Inductor's default Python
    wrapper, which calls the same MKL products through ATen, where the profiler records
    their names and shapes (from the C++ wrapper it records neither).
    """
    device = torch.device("cpu")
    if reason := compile_unavailable(device):
        raise UsageError(f"the breakdown times a compiled step, and compiling cannot run: {reason}")
    with torch_threads(threads):
        call = CALLS["update"](size, "compile", device)  # the study's own update piece
        twin, rollout, storage = minibatch_learner(size, "compile", device)
        twin.step = CompiledPiece(
            twin.gradient_steps, "compile", "the profiled twin", None, traces_autograd=True
        )
        picks = torch.randperm(size, device=device)[None]
        for _ in range(3):  # compile and warm up
            call()
            twin.step(rollout, picks, storage, twin.clip_tensor)
        timing = compare({"step": call}, device=device, warmup=1, repeats=repeats, inner=calls)
        from hetero_tutorial.profiling.torch_profiler import native_stderr_silenced

        began = time.perf_counter()
        # silenced: Kineto's "USDT: ... profiler_start" log line on the process's stderr
        with native_stderr_silenced(), torch.profiler.profile(record_shapes=True) as profile:
            for _ in range(calls):
                twin.step(rollout, picks, storage, twin.clip_tensor)
        profiled_s = (time.perf_counter() - began) / calls
        peak = _peak_flops_per_s(device)
    products = [e for e in profile.events() if e.name in MATMULS]
    return Breakdown(
        size=size,
        step_s=timing["step"].median,
        matmul_s=sum(e.self_cpu_time_total for e in products) / 1e6 / calls,
        profiled_s=profiled_s,
        matmul_calls=len(products) // calls,
        matmul_flops=sum(_matmul_flops(e.name, e.input_shapes) for e in products) // calls,
        peak_flops_per_s=peak,
        peak_size=PEAK_SIZE,
    )
