"""The speed door: what makes the series' RL fast, apart from what makes it RL.

``rl/`` says what the algorithms compute, as CleanRL writes them; it reaches the tricks
below only through this package's names, so that a reader of ``rl/`` sees where speed enters
and can ignore it:

* :mod:`~hetero_tutorial.speed.compiler`: a step run eagerly, compiled by ``torch.compile``,
  or CUDA-graphed (:func:`compiled`), one function in every mode;
* :mod:`~hetero_tutorial.speed.graphs`: how many steps one call of a compiled step runs;
* :mod:`~hetero_tutorial.speed.flat`: a network's parameters as one flat tensor, and Adam
  through its functional form (:class:`FunctionalAdam`), which a compiled step can trace;
* :mod:`~hetero_tutorial.speed.paired`: PPO's actor and critic in one batched product;
* :mod:`~hetero_tutorial.speed.cpu_forms`: three computations written another way inside a
  graph compiled for a CPU;
* :mod:`~hetero_tutorial.speed.torch_private`: the private PyTorch names the package uses.

Everything here runs on PyTorch's public API, except the names that list holds.
"""

from hetero_tutorial.speed.compiler import (
    COMPILE_MODES,
    CompiledPiece,
    break_even_iterations,
    compile_cache,
    compile_mode_of,
    compile_switches,
    compile_unavailable,
    compiled,
    require_compile_mode,
    require_compile_switches,
    say_fallback,
    unguarded,
)
from hetero_tutorial.speed.cpu_forms import flags
from hetero_tutorial.speed.flat import (
    FlatParameters,
    FunctionalAdam,
    PerTensorParameters,
    clip_norm_,
)
from hetero_tutorial.speed.graphs import minibatches_per_call, rollout_steps_per_call
from hetero_tutorial.speed.paired import PairedMLP

__all__ = [
    "COMPILE_MODES",
    "CompiledPiece",
    "FlatParameters",
    "FunctionalAdam",
    "PairedMLP",
    "PerTensorParameters",
    "break_even_iterations",
    "clip_norm_",
    "compile_cache",
    "compile_mode_of",
    "compile_switches",
    "compile_unavailable",
    "compiled",
    "flags",
    "minibatches_per_call",
    "require_compile_mode",
    "require_compile_switches",
    "rollout_steps_per_call",
    "say_fallback",
    "unguarded",
]
