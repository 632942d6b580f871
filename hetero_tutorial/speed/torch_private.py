"""The private PyTorch names this package uses, in one list: where, why, and on which releases.

A name with a leading underscore (``torch._dynamo``, ``torch.utils._python_dispatch``) is
PyTorch's own: it may change or go in any release, without a deprecation. The series keeps
to the public API wherever one does the job (``torch.compile``, ``torch.compiler``: a
compiled piece is called through nothing else) and lists here what remains, so that a
learner who copies a line can see which lines are tied to one PyTorch, and why no public
call does their job. ``tests/test_torch_private.py`` reads the package's code: it fails
where the package uses a private name that :data:`PRIVATE_NAMES` does not hold, where the
list holds one that the package no longer uses or this PyTorch lacks, and where the
PyTorch installed is not among :data:`CHECKED_ON`.
"""

from __future__ import annotations

CHECKED_ON = ("2.13.0",)
"""The PyTorch releases whose tests passed with every name below (``constraints.txt`` pins
the one the set-up installs). After an upgrade, run the tests and add the release here."""

PRIVATE_NAMES: dict[str, str] = {
    "torch._dynamo": (
        "allocator/meter.py imports it with itself: the first optimizer a process builds "
        "imports it (seconds, once), which would otherwise land in a measuring budget"
    ),
    "torch._dynamo.config.patch": (
        "speed/compiler.py sets Dynamo's switch trace_autograd_ops around a learner's "
        "compiled step, so that torch.autograd.grad, the backward pass, is traced into "
        "the step's one graph (off, Dynamo cuts the graph there, and torch.compile has no "
        "public option for it); a PyTorch without the switch runs the step eagerly"
    ),
    "torch._dynamo.config": (
        "speed/compiler.py asks whether this PyTorch has the switch trace_autograd_ops "
        "(above) before a learner's step compiles, so that it runs eagerly, saying why"
    ),
    "torch._dynamo.is_dynamo_supported": (
        "speed/compiler.py asks whether torch.compile supports this Python and platform "
        "before a piece compiles, so that it runs eagerly, saying why; torch.compile "
        "itself only raises, at the first call"
    ),
    "torch._dynamo.mark_static_address": (
        "speed/compiler.py (keep_in_place): under CUDA graphs, a tensor a captured graph "
        "updates in place must keep its address, or CUDA graph trees decline the graph; "
        "torch.compiler has no public way to say so"
    ),
    "torch._dynamo.utils.counters": (
        "speed/compiler.py counts the graphs CUDA graph trees declined (cudagraph_skips), "
        "studies/compiling.py the graphs and graph breaks of one traced step: no public "
        "call reports either"
    ),
    "torch.cuda._get_nvml_device_index": (
        "core/utilisation.py maps a CUDA device to NVML's index of it through "
        "CUDA_VISIBLE_DEVICES, as torch.cuda.utilization does, to read NVML's own samples"
    ),
    "torch._inductor.runtime.cache_dir_utils.default_cache_dir": (
        "speed/compiler.py (compile_cache) tells Inductor's default cache folder, which "
        "importing Inductor writes into TORCHINDUCTOR_CACHE_DIR, from one a learner set"
    ),
    "torch.utils._python_dispatch.TorchDispatchMode": (
        "core/transfers.py (the copy counter) and studies/crossover.py (the operator "
        "counter) see every operation PyTorch dispatches; the __torch_dispatch__ "
        "extension point is documented, its base class lives in a private module"
    ),
    "torch.utils._python_dispatch.is_in_torch_dispatch_mode": (
        "speed/compiler.py runs a compiled piece eagerly under such a mode (the copy "
        "counter), where Dynamo refuses to trace"
    ),
}
"""Each private name the package uses, as its code writes it, and the reason."""
