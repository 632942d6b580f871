"""What a compiled call costs, and how a step must be written to gain from it: five probes.

1. **A compiled call's fixed cost, and its guards.** ``x * 2 + 1`` eagerly and under
   ``torch.compile`` at 64 to 1,048,576 elements: where the compiled call is slower at 64
   elements, its fixed cost (the Python wrappers around the generated kernel) is the
   difference. Then the same graph as the package compiles a piece
   (:func:`hetero_tutorial.speed.compiler.compiled`), its steady calls with the guards
   checked, and skipped (:func:`~hetero_tutorial.speed.compiler.unguarded`) around each call
   and around a whole round of calls, as a PPO iteration holds it; and PPO's minibatch step
   (``--step-size`` transitions, a graph that reads far more than one tensor) checked and
   unguarded around the round. Setting the stance costs microseconds: around each call, the
   difference is what skipping the guards gains net of it.
2. **CartPole's transition, with and without the CPU forms.** The package's one transition
   (:meth:`BatchedCartPole.transition`) eager, compiled as ``compile=True`` compiles it
   (with the flags as bytes, the environments' form in :mod:`hetero_tutorial.speed.cpu_forms`),
   and compiled inside ``cpu_forms(False)`` (bool flags). Same first states, same actions,
   the random draw left out.
3. **Storing flags.** ``x.abs() > 2.4`` compiled, returned as bool, against the same flags
   returned as bytes (``torch.where(mask, 1, 0).to(torch.uint8)``): PyTorch 2.13's CPU
   kernels store a bool tensor element by element.
4. **tanh against its sigmoid form.** ``torch.tanh(x)`` and ``2 * torch.sigmoid(2 * x) - 1``
   (the same function, what the policies' hidden layers compute inside a compiled graph:
   :func:`hetero_tutorial.speed.cpu_forms.tanh`), eager and compiled, on a hidden layer's
   activations (2 networks x batch x 64 units): on the series' CPUs PyTorch's tanh kernel,
   and the one Inductor generates, cost several times a sigmoid.
5. **Inductor's public levers on PPO's minibatch step.** The same step (``--step-size``
   transitions) compiled with the package's options (``cpp_wrapper``, Inductor's C++ wrapper),
   with Inductor's defaults (a Python wrapper), and with ``max_autotune`` (Inductor times its
   C++ GEMM templates against the matrix library for each product and keeps the faster; the
   public option ``torch.compile(mode="max-autotune")`` sets), with and without the C++
   wrapper. Each variant a learner of its own, the same seed; compiling takes minutes for
   the autotuned ones.

One PyTorch thread, every variant warmed up (compiled first), then ``--repeats`` rounds,
the variants interleaved in each; the median seconds per call and the range over rounds.

    .venv/bin/python benchmarks/compile_overhead.py [--sizes 4096 65536] [--repeats 7]
        [--step-size 256] [--probes 1 2 3 4 5]

Prints a table; writes nothing. A probe for the compiled path's targets (benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from functools import partial

import torch

from hetero_tutorial import compile_cache, make_batched_env
from hetero_tutorial.speed.compiler import CPU_OPTIONS, CompiledPiece, unguarded
from hetero_tutorial.speed.compiler import compiled as compiled_piece
from hetero_tutorial.speed.cpu_forms import cpu_forms
from hetero_tutorial.studies.compiling import minibatch_learner

Around = dict[str, Callable[[], AbstractContextManager]]
"""Per variant, what a round of its calls runs inside (by default nothing)."""


def timed(
    variants: dict[str, Callable[[], object]],
    repeats: int,
    calls: int,
    around: Around | None = None,
) -> dict:
    """Median and range of seconds per call, the variants interleaved in every round."""
    for name, variant in variants.items():  # warm-up: compiling happens here
        with (around or {}).get(name, nullcontext)():
            for _ in range(3):
                variant()
    rounds: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, variant in variants.items():
            with (around or {}).get(name, nullcontext)():
                began = time.perf_counter()
                for _ in range(calls):
                    variant()
                rounds[name].append((time.perf_counter() - began) / calls)
    return {name: (statistics.median(s), min(s), max(s)) for name, s in rounds.items()}


def show(size: int, results: dict, baseline: str) -> None:
    base = results[baseline][0]
    for name, (median, low, high) in results.items():
        print(f"{size:>9,}  {name:<24} {median * 1e6:9.1f} us  ({low * 1e6:.1f}-{high * 1e6:.1f})"
              f"  {base / median:5.2f}x {baseline}")  # fmt: skip


def twice_plus_one(x: torch.Tensor) -> torch.Tensor:
    return x * 2.0 + 1.0


def affine_variants(size: int) -> tuple[dict[str, Callable[[], object]], Around]:
    """``x * 2 + 1`` at ``size`` elements, eager and compiled (a graph of its own), and as a
    piece: guards checked, unguarded around each call and around the round."""
    x, compiled = torch.rand(size), torch.compile(twice_plus_one, dynamic=False)
    piece = compiled_piece(twice_plus_one, "compile", "cpu", "x * 2 + 1")

    def unguarded_call() -> object:
        with unguarded([piece]):
            return piece(x)

    variants = {
        "eager": lambda: twice_plus_one(x),
        "compiled": lambda: compiled(x),
        "piece, guards checked": lambda: piece(x),
        "piece, unguarded each": unguarded_call,
        "piece, unguarded round": lambda: piece(x),
    }
    return variants, {"piece, unguarded round": lambda: unguarded([piece])}


def step_variants(size: int) -> tuple[dict[str, Callable[[], object]], Around]:
    """PPO's compiled minibatch step at ``size`` transitions, its guards checked and
    unguarded around the round (one learner: the same graph)."""
    learner, rollout, storage = minibatch_learner(size, "compile", torch.device("cpu"))
    picks = torch.randperm(size)[None]  # one minibatch
    step = partial(learner.step, rollout, picks, storage, learner.clip_tensor)
    variants = {"PPO step, guards checked": step, "PPO step, unguarded round": step}
    return variants, {"PPO step, unguarded round": lambda: unguarded([learner.step])}


LEVERS: dict[str, dict[str, object] | None] = {
    "package (cpp_wrapper)": CPU_OPTIONS,
    "Inductor's defaults": None,
    "max_autotune": {"max_autotune": True},
    "max_autotune, cpp_wrapper": {"max_autotune": True, **CPU_OPTIONS},
}
"""Inductor's options per variant of probe 5 (None: its defaults)."""


def lever_variants(size: int) -> tuple[dict[str, Callable[[], object]], Around]:
    """PPO's compiled minibatch step at ``size`` transitions under each of :data:`LEVERS`,
    unguarded around the round as a PPO iteration runs it."""
    variants, around = {}, {}
    for name, options in LEVERS.items():
        learner, rollout, storage = minibatch_learner(size, "compile", torch.device("cpu"))
        learner.step = CompiledPiece(
            learner.gradient_steps, "compile", name, None, options, traces_autograd=True
        )
        picks = torch.randperm(size)[None]
        variants[name] = partial(learner.step, rollout, picks, storage, learner.clip_tensor)
        around[name] = partial(unguarded, [learner.step])
    return variants, around


def cartpole_variants(size: int) -> tuple[dict[str, Callable[[], object]], Around]:
    """CartPole's transition at ``size`` environments eager and compiled with and without
    the CPU forms, from the same first states and actions (no random draw): each variant
    steps an env of its own. Dynamo guards the switch's value, so the plain variant's rounds
    run inside ``cpu_forms(False)`` too (outside it, its graph would recompile)."""
    actions = torch.randint(0, 2, (size,), generator=torch.Generator().manual_seed(0))
    envs = [make_batched_env("CartPole-v1", size, check_actions=False) for _ in range(3)]
    for env in envs:
        env.reset(seed=0)
    initial = envs[0].draw_initial_states().clone()
    eager, with_forms, plain = envs
    compiled_with_forms = torch.compile(with_forms.transition, dynamic=False)
    compiled_plain = torch.compile(plain.transition, dynamic=False)
    variants = {
        "eager": lambda: eager.transition(actions, initial),
        "compiled, CPU forms": lambda: compiled_with_forms(actions, initial),
        "compiled, plain forms": lambda: compiled_plain(actions, initial),
    }
    return variants, {"compiled, plain forms": lambda: cpu_forms(False)}


def flag_variants(size: int) -> dict[str, Callable[[], object]]:
    """One comparison's flags at ``size`` elements, compiled, stored as bool or as bytes."""
    x = torch.rand(size) * 3
    as_bool = torch.compile(lambda x: x.abs() > 2.4, dynamic=False)
    as_bytes = torch.compile(lambda x: torch.where(x.abs() > 2.4, 1, 0).to(torch.uint8))
    return {"bool": lambda: as_bool(x), "bytes": lambda: as_bytes(x)}


def tanh_variants(batch: int) -> dict[str, Callable[[], object]]:
    """A paired hidden layer's tanh at ``batch`` rows: as tanh and in its sigmoid form."""
    x = torch.randn(2, batch, 64)

    def sigmoid_form(x: torch.Tensor) -> torch.Tensor:
        return 2 * torch.sigmoid(2 * x) - 1

    compiled_tanh = torch.compile(torch.tanh, dynamic=False)
    compiled_form = torch.compile(sigmoid_form, dynamic=False)
    return {
        "tanh, eager": lambda: torch.tanh(x),
        "sigmoid form, eager": lambda: sigmoid_form(x),
        "tanh, compiled": lambda: compiled_tanh(x),
        "sigmoid form, compiled": lambda: compiled_form(x),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 65536])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--step-size", type=int, default=256)
    parser.add_argument("--probes", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    args = parser.parse_args()
    torch.set_num_threads(1)
    compile_cache()
    if 1 in args.probes:
        print("1. x * 2 + 1: size, variant, seconds per call (range over rounds), speed-up")
        for size in (64, 4096, 65536, 1 << 20):
            variants, around = affine_variants(size)
            show(size, timed(variants, args.repeats, max(20, (1 << 22) // size), around), "eager")
        variants, around = step_variants(args.step_size)
        show(args.step_size, timed(variants, args.repeats, 200, around), "PPO step, guards checked")
    if 2 in args.probes:
        print("\n2. CartPole's transition (no random draw): envs, variant, seconds per step")
        for size in args.sizes:
            calls = max(20, (1 << 21) // size)
            variants, around = cartpole_variants(size)
            show(size, timed(variants, args.repeats, calls, around), "eager")
    if 3 in args.probes:
        print("\n3. Flags of one comparison, compiled: elements, stored as, seconds per call")
        for size in args.sizes:
            calls = max(20, (1 << 21) // size)
            show(size, timed(flag_variants(size), args.repeats, calls), "bool")
    if 4 in args.probes:
        print("\n4. tanh of a hidden layer (2 x batch x 64): batch, variant, seconds per call")
        for batch in (8, 256, 1024):
            calls = max(20, 4096 // batch)
            show(batch, timed(tanh_variants(batch), args.repeats, calls), "tanh, eager")
    if 5 in args.probes:
        print("\n5. PPO's minibatch step under Inductor's levers: size, variant, seconds per step")
        variants, around = lever_variants(args.step_size)
        show(args.step_size, timed(variants, args.repeats, 100, around), "package (cpp_wrapper)")


if __name__ == "__main__":
    main()
