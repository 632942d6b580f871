"""Reading a profile: where the training loop starts, and what kind of work each sample was.

* :func:`from_the_loop` trims every stack to start at the training loop's body
  (``PPOTrainer.iteration``), whose box is labelled with its phase: the launcher's
  frames (``runpy``, the profiling target, ``train``) are the same in every sample and
  only push the interesting boxes up the picture.
* :func:`work_kinds` sorts the samples by their innermost frame into kinds of work: the
  arithmetic (the layers' forward passes, the backward pass, the optimizer's step),
  PyTorch's Python around each call (module call wrappers; its C++ dispatch runs under the
  calling line, see :data:`KINDS`), the series' own instrumentation (the phase timer and its
  ``record_function`` ranges, apart, so that what we add to measure is not charged to
  PyTorch), the environments, the loop's own Python, and transfers; :func:`kinds_sentence`
  says, from the shares measured, which kind the time went to, naming the busiest frames.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection

from hetero_tutorial.profiling.stacks import (
    Frame,
    Stack,
    Stacks,
    classify,
    in_phase_timer,
    parse_stack,
    phase_of,
)

LOOP = "PPOTrainer.iteration"
"""The function whose body is one training iteration: the flame graph's bottom row."""

KINDS = {
    "arithmetic": "arithmetic with its C++ dispatch (forward, backward, optimizer step)",
    "instrumentation": "the series' own instrumentation (phase timer, record_function ranges)",
    "per call": "PyTorch's Python around each call (module wrappers, context managers)",
    "environment": "the environments (Gymnasium's step, wrappers, spaces)",
    "loop": "PPO's own Python (indexing, bookkeeping)",
    "transfer": "copies and waits for data",
    "other": "other frames",
}
"""The kinds of work a sample's innermost frame is sorted into, and how a sentence names them.

A Python sampler sees Python frames only: PyTorch's C++ dispatch, each operator's fixed cost
per call, runs under the Python line that called the operator and is counted as that line's
kind (mostly ``arithmetic``). ``per call`` is only the Python part of a call."""

_KIND_PATTERNS = (
    # first: what the series adds to measure itself is not PyTorch's cost of a call
    ("instrumentation", r"autograd/profiler|record_function|_maybe_cupti_monitor|"
                        r"core/timing\.py|core/utilisation\.py"),
    ("per call", r"modules/module\.py|torch/_ops\.py|_ops\.py|contextlib\.py|"
                 r"overrides\.py|optim/optimizer\.py|_python_dispatch|_compile\.py|eval_frame"),
    ("arithmetic", r"autograd/graph\.py|autograd/__init__\.py|_engine_run_backward|rl/nets\.py|"
                   r"speed/cpu_forms\.py|speed/paired\.py|"
                   r"speed/flat\.py|optim/adam\.py|functional\.py|_tensor\.py|linalg"),
    ("environment", r"gymnasium|classic_control|vector/|wrappers/|spaces/|envs\.py|envs/|"
                    r"cartpole|pendulum"),
    ("loop", r"ppo/\w+\.py|ppo\.py"),
)  # fmt: skip
"""Patterns on a frame's ``function (file)``, full path or the label's last two parts."""


def kind_of(frame: Frame) -> str:
    """The kind of work (a key of :data:`KINDS`) of an innermost frame, by its file."""
    where = f"{frame.function} ({(frame.file or '').replace(chr(92), '/')})".lower()
    for kind, pattern in _KIND_PATTERNS:
        if re.search(pattern, where):
            return kind
    return "other"


def work_kinds(stacks: Stacks) -> dict[str, dict[str, object]]:
    """Per kind of work: its share of the samples and its busiest innermost frames (labels).

    A sample that is a transfer (:func:`~hetero_tutorial.profiling.stacks.classify`, the
    phase timer's own syncs left out) counts as ``transfer`` whatever its frame.
    """
    total = sum(stacks.values())
    shares: Counter = Counter()
    frames: dict[str, Counter] = {kind: Counter() for kind in KINDS}
    for stack, count in stacks.items():
        parsed = parse_stack(stack)
        if not parsed:
            continue
        transfer = classify(parsed) is not None and not in_phase_timer(parsed)
        kind = "transfer" if transfer else kind_of(parsed[-1])
        shares[kind] += count
        frames[kind][parsed[-1].label] += count
    return {
        kind: {
            "share": shares[kind] / total if total else 0.0,
            "frames": [label for label, _ in frames[kind].most_common(3)],
        }
        for kind in sorted(KINDS, key=lambda k: -shares[k])
        if shares[kind]
    }


def kinds_sentence(stacks: Stacks) -> str:
    """Where the training samples went, by kind of work (the busiest frames: the notebook's
    table of self time, :func:`work_kinds`)."""
    kinds = work_kinds(stacks)
    if not kinds:
        return "No training samples to read."
    parts = [
        f"{KINDS[kind]} {found['share']:.0%}"
        for kind, found in kinds.items()
        if found["share"] >= 0.01
    ]
    return "By innermost frame: " + "; ".join(parts) + "."


def _trim(stack: Stack) -> Stack:
    """``stack`` from the loop's frame on, that frame labelled with its phase."""
    parsed = parse_stack(stack)
    start = next((i for i, frame in enumerate(parsed) if frame.function == LOOP), None)
    if start is None:
        return stack
    phase = phase_of(parsed) or "?"
    return (f"{phase}: {stack[start]}", *stack[start + 1 :])


def from_the_loop(stacks: Stacks, marked: Collection[Stack] = ()) -> tuple[Stacks, set[Stack]]:
    """Every stack trimmed to start at the training loop (see the module docstring), and the
    trimmed versions of the ``marked`` ones (the transfers, for the flame graph's red)."""
    trimmed: Stacks = Counter()
    for stack, count in stacks.items():
        trimmed[_trim(stack)] += count
    return trimmed, {_trim(stack) for stack in marked}
