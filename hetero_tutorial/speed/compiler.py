"""The ``compile`` choice: run a piece eagerly, compiled by ``torch.compile``, or CUDA-graphed.

Small-network RL is bound by per-operation overhead (microseconds per PyTorch call on a
CPU, a kernel launch per call on a GPU), not by arithmetic. ``torch.compile`` traces a
function into a graph, fuses its operations into a few generated kernels (C++/OpenMP on
a CPU, Triton on a GPU) and guards the graph against changes (shapes, dtypes, Python
values it read): a call checks the guards and runs the kernels; a failed guard compiles
again (a *recompile*). CUDA graphs go further on a GPU: a captured sequence of kernels is
replayed with one launch, which needs static shapes (the same buffers every time) and no
host synchronisation inside.

A config asks with two switches, named as LeanRL names them: ``compile`` (torch.compile the
pieces) and ``cudagraphs`` (capture them as CUDA graphs too, which needs ``compile``);
:func:`require_compile_switches` checks them, once, in the config's validation, and
:func:`compile_mode_of` turns them into the mode the pieces run in. Inside, a piece's mode
keeps torch's own words (:data:`COMPILE_MODES`):

* ``"eager"``: the function itself, as it reads;
* ``"compile"``: ``torch.compile(fn)`` (Inductor, default mode); on a CPU with Inductor's
  C++ wrapper (``cpp_wrapper``): the generated code that calls the kernels is C++ too,
  where by default it is Python (see :data:`CPU_OPTIONS`). Inside :func:`unguarded`, once
  the pieces have compiled, their calls skip the guard checks (:data:`STEADY_STANCE`:
  unsafe in general; it says why it is safe here);
* ``"cudagraphs"``: ``torch.compile(fn, mode="reduce-overhead")`` on CUDA: Inductor's
  kernels captured in CUDA graphs, with static input buffers.

:func:`compiled` wraps a function in the mode asked for and returns a
:class:`CompiledPiece`, which records the first call's seconds (where the compiling
happens; under CUDA graphs the second call's too, where the graph is captured) apart from
the later, steady calls. Where compiling cannot work here (no C++ compiler, a Python or
platform that ``torch.compile`` does not support, no Triton for a GPU) the piece runs
eagerly and says why in one line, once per reason (:func:`compile_unavailable`).

Each piece has compiled graphs of its own (``torch.compile``'s ``isolate_recompiles``).
Without it, every ``torch.compile`` of one function (a network's forward, one method of a
class) shares one cache and one limit of 8 recompiles: notebook 08's grid, the same forward
at twelve shapes in full mode, would pass it, and under ``fullgraph=True`` that is an error.
A piece runs through ``torch.compile`` and ``torch.compiler`` only; the private names the
package still uses, and why, are listed in :mod:`hetero_tutorial.speed.torch_private`.
"""

from __future__ import annotations

import functools
import inspect
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import is_in_torch_dispatch_mode

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.paths import REPO_DIR
from hetero_tutorial.speed.torch_private import CHECKED_ON

COMPILE_MODES = ("eager", "compile", "cudagraphs")
"""How a piece runs: as written, compiled by torch.compile, or compiled and CUDA-graphed."""

_SAID: set[str] = set()
"""Fallback reasons already printed (one line per reason, per process)."""


CACHE_DIR = REPO_DIR / "build" / "torch-compile-cache"
"""Where this series keeps torch.compile's cache (generated kernels, compiled graphs)."""


def compile_cache() -> tuple[Path, bool]:
    """Point torch.compile's cache at :data:`CACHE_DIR` (unless ``TORCHINDUCTOR_CACHE_DIR``
    names another folder already); return the folder and whether it was warm (held a cache
    already).

    A warm cache turns a first compile of tens of seconds into a second or two: call this
    before the first compile, so that a second run of a notebook reuses the first's kernels.
    Importing Inductor sets ``TORCHINDUCTOR_CACHE_DIR`` to Inductor's own default folder (in
    the temporary folder, shared by every project of this user) where it is unset, and a
    notebook's kernel inherits it from the process that started it: a variable that names
    that default is taken as unset, or this series would read, and call warm, another
    project's kernels.
    """
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir  # no torch import

    asked = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if asked is None or Path(asked).resolve() == Path(default_cache_dir()).resolve():
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(CACHE_DIR)
    folder = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])
    warm = folder.is_dir() and any(folder.iterdir())
    folder.mkdir(parents=True, exist_ok=True)
    return folder, warm


def cache_files(folder: Path) -> int:
    """How many files the cache ``folder`` holds: their growth over a run counts the kernels
    it compiled afresh (none: every one came from the cache)."""
    return sum(1 for path in folder.rglob("*") if path.is_file())


def require_compile_mode(mode: str) -> None:
    """Raise a UsageError naming the modes for anything else."""
    if mode not in COMPILE_MODES:
        raise UsageError(f"a compile mode is one of {', '.join(COMPILE_MODES)}; got {mode!r}")


def require_compile_switches(compile: bool, cudagraphs: bool) -> None:
    """Raise a UsageError, saying what to set instead, unless both switches are booleans and
    ``cudagraphs`` comes with ``compile`` (the graphs capture torch.compile's kernels: without
    compiling there is nothing to capture)."""
    for name, value in (("compile", compile), ("cudagraphs", cudagraphs)):
        if not isinstance(value, bool):
            raise UsageError(
                f"{name} is a switch, True or False; got {value!r}. compile=True "
                "torch.compiles the pieces, cudagraphs=True as well captures them as CUDA "
                "graphs (on CUDA), and both False (the default) runs them eagerly"
            )
    if cudagraphs and not compile:
        raise UsageError(
            "cudagraphs=True captures the compiled pieces as CUDA graphs, so it needs "
            "compile=True too: set both, or neither to run eagerly"
        )


def compile_mode_of(compile: bool, cudagraphs: bool) -> str:
    """The mode (:data:`COMPILE_MODES`) a config's two switches ask for, once they are
    checked (:func:`require_compile_switches`: a leftover mode string such as "eager" is
    truthy, and would otherwise ask for compiling)."""
    require_compile_switches(compile, cudagraphs)
    return "cudagraphs" if cudagraphs else "compile" if compile else "eager"


def compile_switches(mode: str) -> dict[str, bool]:
    """The switches that ask for ``mode``, as keyword arguments of a config or a batched env:
    :func:`compile_mode_of` the other way round, for code that runs every mode in turn."""
    require_compile_mode(mode)
    return {"compile": mode != "eager", "cudagraphs": mode == "cudagraphs"}


def _cpp_compiler() -> str | None:
    """The C++ compiler Inductor would call on a CPU (``$CXX``, else g++, clang++ or c++)."""
    candidates = [os.environ["CXX"]] if os.environ.get("CXX") else ["g++", "clang++", "c++"]
    return next((found for name in candidates if (found := shutil.which(name))), None)


@functools.cache
def _missing_compile_api() -> str | None:
    """What this PyTorch's public compile API lacks of what a compiled piece calls, in words
    (None: nothing): ``isolate_recompiles`` and ``set_stance``'s ``skip_guard_eval_unsafe``.
    Looked for by name, so that an older PyTorch runs the pieces eagerly, saying so, rather
    than failing at a piece's first call."""
    if "isolate_recompiles" not in inspect.signature(torch.compile).parameters:
        return "torch.compile takes no isolate_recompiles"
    set_stance = getattr(torch.compiler, "set_stance", None)
    if (
        set_stance is None
        or "skip_guard_eval_unsafe" not in inspect.signature(set_stance).parameters
    ):
        return "torch.compiler.set_stance takes no skip_guard_eval_unsafe"
    return None


def compile_unavailable(device: torch.device | str, mode: str = "compile") -> str | None:
    """Why ``mode`` cannot run on ``device`` here, in words; None when it can.

    ``"cudagraphs"`` needs a CUDA device; both compiled modes need a Python that
    ``torch.compile`` supports, the public calls a piece makes (:func:`_missing_compile_api`),
    and a C++ compiler on a CPU or Triton on a GPU.
    """
    require_compile_mode(mode)
    device = torch.device(device)
    if mode == "eager":
        return None
    if mode == "cudagraphs" and device.type != "cuda":
        return f"CUDA graphs need a CUDA device, and this piece runs on {device.type}"
    if not torch._dynamo.is_dynamo_supported():
        return f"torch.compile does not support Python {sys.version.split()[0]} in this PyTorch"
    if missing := _missing_compile_api():
        checked = ", ".join(CHECKED_ON)
        return f"in this PyTorch ({torch.__version__}) {missing} (the series checks {checked})"
    if device.type == "cpu" and _cpp_compiler() is None:
        return "no C++ compiler found (torch.compile's CPU code is C++: install g++ or set CXX)"
    if device.type == "cuda":
        try:
            import triton  # noqa: F401  (torch.compile's GPU kernels are Triton's)
        except ImportError:
            return "Triton is not installed (torch.compile's GPU kernels are written in Triton)"
    if device.type not in ("cpu", "cuda"):
        return f"torch.compile is not supported for {device.type} devices in this series"
    return None


def say_fallback(what: str, reason: str) -> None:
    """Print the one line that says a piece runs eagerly, and why (once per reason)."""
    if reason not in _SAID:
        _SAID.add(reason)
        print(f"compile: {what} runs eagerly: {reason}", file=sys.stderr)


def _cudagraph_skips() -> int:
    """How many graphs CUDA graph trees have declined to capture in this process so far."""
    return int(torch._dynamo.utils.counters["inductor"]["cudagraph_skips"])


CPU_OPTIONS = {"cpp_wrapper": True}
"""Inductor's options for a compiled piece on a CPU. Its default wrapper, the Python function
that allocates buffers and calls the generated kernels and ATen's matrix products in turn,
costs microseconds a call, and the smaller the graph, the larger its share. The C++ wrapper
does the same work compiled (a few seconds more to compile it, once: the cache keeps it), the
same kernels and so the same numbers. ``bench compile`` and the peers race measure what it
gains."""


START_CALLS = {"eager": 1, "compile": 1, "cudagraphs": 2}
"""The calls a piece takes to start, by mode: the first compiles (CUDA graph trees then run
it once uncaptured, a warm-up); under ``"cudagraphs"`` the second captures the graph."""


STEADY_STANCE: dict[str, Any] = {"stance": "default", "skip_guard_eval_unsafe": True}
"""The compiler's stance inside :func:`unguarded` (the arguments of
:func:`torch.compiler.set_stance`): compiled graphs run without checking their guards. The
check costs microseconds a call, the more the more the graph read (an object's attributes,
each tensor's shape and dtype: PPO's minibatch steps read the learner's weights, Adam's
moments and the rollout's tensors); setting the stance costs microseconds too, so it is set
once around many calls (a PPO iteration), not around each (probe 1 of
``benchmarks/compile_overhead.py`` times a call both ways).

PyTorch calls it unsafe: a call that a guard would have sent to a recompile (a new shape, a
changed Python value the graph read) runs the old graph instead, silently wrong. It is safe
around a PPO iteration because a piece is made for one run, whose shapes never change, and
every value that changes during a run (the learning rate, the clip range, the environments'
state) reaches the graph as a tensor, whose contents no guard reads: after its start, no
call of a piece needs a recompile. ``tests/test_compiled.py`` checks that assumption: it
trains with ``{"stance": "fail_on_recompile"}`` here instead, which checks every call's
guards and raises where one fails."""


def keep_in_place(mode: str, tensors: Iterable[torch.Tensor]) -> None:
    """Keep ``tensors``, which a piece in ``mode`` updates in place (weights, optimizer state,
    the environments' state), where a captured graph writes them.

    Under ``"cudagraphs"`` they are marked as static addresses: the captured graph then writes
    them where they live. CUDA graph trees copy any other input into a buffer of their own at
    each replay, so they decline to capture a graph that mutates one (it would write the
    copy); :attr:`CompiledPiece.graph_skips` counts such refusals. Nothing to do in the other
    modes.
    """
    if mode == "cudagraphs":
        for tensor in tensors:
            torch._dynamo.mark_static_address(tensor)


class CompiledPiece:
    """A function in one compile mode; times its start apart from the later calls.

    ``start_seconds`` holds the start calls (:data:`START_CALLS`: where compiling and
    capturing happen, with a run each), ``steady_seconds`` the later calls. ``mode`` is the
    mode it really runs in: ``"eager"`` after a fallback, with ``fallback`` saying why.
    ``graph_skips``: how many graphs CUDA graph trees declined to capture for it (they then
    run uncaptured: correct, and as slow as ``"compile"``), over all its calls; 0 outside
    ``"cudagraphs"``. ``inductor``: Inductor's options for the compiled modes (None: its
    defaults). ``updates``: the tensors the piece updates in place (see :func:`keep_in_place`).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        mode: str,
        what: str,
        fallback: str | None,
        inductor: dict[str, Any] | None = None,
        traces_autograd: bool = False,
        updates: Sequence[torch.Tensor] = (),
    ) -> None:
        self.eager_fn, self.what, self.mode, self.fallback = fn, what, mode, fallback
        keep_in_place(mode, updates)
        self.tracing = (
            torch._dynamo.config.patch(trace_autograd_ops=True)
            if traces_autograd and mode != "eager"
            else nullcontext()
        )
        """what a call runs inside: Dynamo's switch for tracing ``torch.autograd.grad``
        into the graph, for a piece that differentiates (see :func:`compiled`)"""
        if mode == "eager":
            self.fn = fn
        else:
            options: dict[str, Any] = {"options": inductor} if inductor else {}
            if mode == "cudagraphs":
                options["mode"] = "reduce-overhead"
            # A run's shapes never change: specialise on them (without this, a second size of
            # the same piece, as a benchmark's, turns the graph dynamic for every later size).
            # One graph or an error: a graph break would split the piece silently.
            # Graphs of its own (see the module's docstring).
            self.fn = torch.compile(
                fn, dynamic=False, fullgraph=True, isolate_recompiles=True, **options
            )
        self.start_calls = START_CALLS[mode]
        self.start_seconds = 0.0
        """seconds of the start calls so far"""
        self.calls = 0
        self.steady_seconds = 0.0
        self.steady_calls = 0
        self.graph_skips = 0
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.mode != "eager" and is_in_torch_dispatch_mode(include_infra_modes=False):
            # A dispatch mode that watches every operation (the copy counter) cannot see
            # inside a compiled graph, and Dynamo refuses to trace under one: run the same
            # arithmetic eagerly, on no clock.
            return self.eager_fn(*args, **kwargs)
        graphed = self.mode == "cudagraphs"
        skips = _cudagraph_skips() if graphed else 0
        began = time.perf_counter()
        with self.tracing:
            out = self.fn(*args, **kwargs)
        seconds = time.perf_counter() - began
        if graphed:  # a graph may be declined at any call that meets a new one
            self.graph_skips += _cudagraph_skips() - skips
        self.calls += 1
        if self.calls <= self.start_calls:
            self.start_seconds += seconds
        else:
            self.steady_seconds += seconds
            self.steady_calls += 1
        return out

    @property
    def compile_seconds(self) -> float:
        """The start calls' seconds over as many steady calls' (0 before a steady call, or
        eagerly): what compiling and capturing cost."""
        if self.mode == "eager" or not self.steady_calls:
            return 0.0
        steady = self.steady_seconds / self.steady_calls
        return max(0.0, self.start_seconds - self.start_calls * steady)


def compiled(
    fn: Callable[..., Any],
    mode: str,
    device: torch.device | str,
    what: str,
    traces_autograd: bool = False,
    updates: Sequence[torch.Tensor] = (),
) -> CompiledPiece:
    """``fn`` in ``mode`` for ``device``: eagerly, with one line saying why, where ``mode``
    cannot run here (see :func:`compile_unavailable`). ``what`` names the piece in that line.

    ``traces_autograd``: ``fn`` differentiates (``torch.autograd.grad``, a learner's step).
    Dynamo cuts a graph there unless its switch ``trace_autograd_ops`` is on; on, the
    backward pass joins the graph, so that one piece of code, the step as CleanRL writes it,
    runs eagerly and compiled. The switch is private (:mod:`~hetero_tutorial.speed.torch_private`)
    and set only around the piece's calls; a PyTorch without it runs the piece eagerly.
    ``updates``: the tensors ``fn`` updates in place (:func:`keep_in_place`).
    """
    reason = compile_unavailable(device, mode)
    tracing = traces_autograd and mode != "eager"
    if reason is None and tracing and not hasattr(torch._dynamo.config, "trace_autograd_ops"):
        reason = f"this PyTorch ({torch.__version__}) cannot trace torch.autograd.grad"
    if reason is not None:
        say_fallback(what, reason)
        return CompiledPiece(fn, "eager", what, reason)
    inductor = CPU_OPTIONS if torch.device(device).type == "cpu" else None
    return CompiledPiece(fn, mode, what, None, inductor, traces_autograd, updates)


@contextmanager
def unguarded(pieces: Sequence[CompiledPiece]) -> Iterator[None]:
    """Run the block under :data:`STEADY_STANCE` (compiled graphs unguarded) where every one
    of ``pieces`` runs in ``"compile"`` and has made its start calls; as it is otherwise.

    Wrap what calls the pieces many times (a PPO iteration), and only where nothing else
    that is compiled runs inside: the stance holds for every compiled call in the block.
    Before the pieces have compiled, their first calls check their guards as always, and
    under ``"cudagraphs"`` the calls keep their checks (the skip was measured on a CPU only).
    """
    steady = bool(pieces) and all(
        piece.mode == "compile" and piece.calls >= piece.start_calls for piece in pieces
    )
    with torch.compiler.set_stance(**STEADY_STANCE) if steady else nullcontext():
        yield


def break_even_iterations(
    compile_seconds: float, eager_seconds: float, compiled_seconds: float
) -> float | None:
    """Iterations after which compiling has paid for itself: compile seconds over the
    seconds it saves per iteration (None where the compiled iteration is not faster)."""
    saved = eager_seconds - compiled_seconds
    return compile_seconds / saved if saved > 0 else None
