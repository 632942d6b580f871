"""Sampled call stacks: which samples were host<->device transfers, and in which training phase.

A sampling profiler such as py-spy looks at the program's call stack about a
hundred times a second. Its raw output, *collapsed stacks*, has one line per
distinct stack: the frames from the outermost to the innermost joined by ``;``,
then how many samples saw that stack::

    <module> (/repo/run.py:9);PPOTrainer.iteration (/repo/hetero_tutorial/ppo.py:561) 12

The share of samples spent somewhere estimates the share of wall time spent
there. This module decides, for every sample,

* whether it was a **transfer**: copying between host and device, or waiting
  for the device (the patterns are the table :data:`TRANSFER_PATTERNS`), and if
  it was, which of three buckets it falls in: a *copy*, a *wait for data*, or the
  phase timer's own ``synchronize`` at a phase boundary (a wait that only measures:
  on a GPU it absorbs the phase's queued compute, so it is reported apart); and
* which **phase** of training it belongs to: the ``with trainer.phase("NAME"):``
  block (found by reading the source) that the sampled line sits in.

Why source lines? ``Tensor.to`` and ``Tensor.cpu`` are C functions: a Python
sampler never sees them as frames. It sees the Python *line* that called them,
so the table matches the text of that line. With ``--native``, py-spy also sees
the C frames, and the table matches CUDA's own copy and wait functions.
"""

from __future__ import annotations

import ast
import linecache
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from hetero_tutorial.core.errors import UsageError

Stack = tuple[str, ...]
"""One distinct call stack: frame strings from the outermost to the innermost."""

Stacks = Counter[Stack]
"""Collapsed stacks: how many samples saw each distinct stack."""


@dataclass(frozen=True)
class TransferPattern:
    """How one kind of host<->device transfer shows up in each profiler.

    Every pattern is a regular expression (``re.search``); None means the
    profiler cannot see this operation by name.
    """

    operation: str
    """what the code does, as a learner would write it"""
    kind: str
    """``"copy"`` (moves data) or ``"wait"`` (the host blocks until the device is done)"""
    source: str | None
    """matched against the innermost Python line of a py-spy sample"""
    cprofile: str | None
    """matched against cProfile's name of a built-in function"""
    torch_event: str | None
    """matched against a torch.profiler event name"""
    native: str | None
    """matched against a native frame of a ``py-spy --native`` sample"""
    note: str
    """why it costs time, and when it does not"""


TRANSFER_PATTERNS: tuple[TransferPattern, ...] = (
    TransferPattern(
        "`.to(device)`, `.cpu()`, `.cuda()`",
        "copy",
        source=r"\.(to|cpu|cuda)\(",
        cprofile=r"method '(to|cpu|cuda)' of 'torch\._C\.",
        torch_event=r"^aten::(to|_to_copy)$",
        native=None,
        note="a copy when the device changes; on the same device `.to` returns the tensor "
        "itself and only the call costs anything",
    ),
    TransferPattern(
        "`.copy_(source)`",
        "copy",
        source=r"\.copy_\(",
        cprofile=r"method 'copy_' of 'torch\._C\.",
        torch_event=r"^aten::copy_$",
        native=None,
        note="a transfer when the source is on another device, else a copy in memory",
    ),
    TransferPattern(
        "`.numpy()`",
        "copy",
        source=r"\.numpy\(",
        cprofile=r"method 'numpy' of 'torch\._C\.",
        torch_event=None,
        native=None,
        note="free for a CPU tensor (a view), but it ends every `.cpu().numpy()` trip back",
    ),
    TransferPattern(
        "`.item()`, `.tolist()`",
        "wait",
        source=r"\.(item|tolist)\(",
        cprofile=r"method '(item|tolist)' of 'torch\._C\.",
        torch_event=r"^aten::(item|_local_scalar_dense)$",
        native=None,
        note="reads values into Python: the host waits for every queued kernel, then copies",
    ),
    TransferPattern(
        "`.pin_memory()`",
        "copy",
        source=r"pin_memory\(",
        cprofile=r"method 'pin_memory' of 'torch\._C\.",
        torch_event=r"^(aten::_?pin_memory|cudaHostAlloc|cudaHostRegister|cudaMallocHost)$",
        native=r"^cu(da)?(HostAlloc|MemHostAlloc|HostRegister|MemHostRegister)",
        note="page-locks a host buffer so copies can be asynchronous; per call it allocates "
        "and copies, so pin a buffer once and reuse it (torch.profiler: `cudaHostAlloc`, also "
        "for `torch.empty(..., pin_memory=True)`)",
    ),
    TransferPattern(
        "`torch.cuda.synchronize()` (and MPS/XPU's)",
        "wait",
        source=r"(?i)synchronize\(",  # torch.cuda's _cuda_synchronize, MPS's _mps_deviceSynchronize
        cprofile=r"_(cuda|xpu)_synchronize|_mps_deviceSynchronize",
        torch_event=r"^cuda(Device|Stream|Event)Synchronize$",
        native=r"^cu(da)?(Ctx|Device|Stream|Event)Synchronize",
        note="blocks the host until the device has finished: queued GPU work shows up here",
    ),
    TransferPattern(
        "CUDA's copy functions",
        "copy",
        source=None,
        cprofile=None,
        torch_event=r"^Memcpy (HtoD|DtoH)\b",  # "(Pageable -> Device)", "(Device -> Pinned)", ...
        native=r"^cu(da)?Memcpy",
        note="the copy itself: torch.profiler's `Memcpy HtoD`/`DtoH` rows on the GPU's timeline "
        "(not `Memcpy DtoD`, a copy within the device, nor the `cudaMemcpyAsync` call that "
        "queues any of them); `--native` sees the `cudaMemcpy*` call, in any direction",
    ),
)
"""Every pattern that counts as host<->device transfer or synchronisation, for each profiler."""


def pattern_rows(patterns: Iterable[TransferPattern] = TRANSFER_PATTERNS) -> list[dict[str, str]]:
    """The pattern table as rows for :func:`~hetero_tutorial.notebook.tables.markdown_table`."""
    return [
        {
            "operation": p.operation,
            "kind": p.kind,
            **{
                tool: f"`{getattr(p, tool)}`" if getattr(p, tool) else "—"
                for tool in ("source", "cprofile", "torch_event", "native")
            },
            "note": p.note,
        }
        for p in patterns
    ]


def match(
    name: str, column: str, patterns: Iterable[TransferPattern] = TRANSFER_PATTERNS
) -> TransferPattern | None:
    """The first pattern whose ``column`` (``"source"``, ``"cprofile"``, ...) matches ``name``."""
    for pattern in patterns:
        regex = getattr(pattern, column)
        if regex and re.search(regex, name):
            return pattern
    return None


_FRAME = re.compile(r"^(?P<function>.*?) \((?P<where>[^()]*)\)$")


@dataclass(frozen=True)
class Frame:
    """One frame of a py-spy stack: ``function (file:line)``, or ``function (library.so)``."""

    function: str
    file: str | None = None
    line: int | None = None

    @staticmethod
    @lru_cache(maxsize=65_536)
    def parse(text: str) -> Frame:
        """Parse py-spy's text for a frame (cached: the same frames recur in many stacks)."""
        found = _FRAME.match(text)
        if found is None:
            return Frame(text)
        file, colon, line = found["where"].rpartition(":")
        if colon and line.isdigit():
            return Frame(found["function"], file, int(line))
        return Frame(found["function"], found["where"])

    @property
    def is_python(self) -> bool:
        """True for a frame of Python source (a native frame names a library instead)."""
        return self.line is not None and self.file is not None and self.file.endswith(".py")

    @property
    def label(self) -> str:
        """A short name: the function and, for Python, the last two parts of the path and line."""
        if self.file is None:
            return self.function
        short = "/".join(Path(self.file).parts[-2:])
        return f"{self.function} ({short}:{self.line})" if self.is_python else self.function

    def source(self) -> str:
        """The source line this Python frame was executing, without its comment ('' if unknown)."""
        if not self.is_python:
            return ""
        text = linecache.getline(self.file, self.line).strip()
        return re.sub(r"\s+#.*$", "", text)


def parse_stack(stack: Stack) -> tuple[Frame, ...]:
    return tuple(Frame.parse(text) for text in stack)


def read_collapsed(text: str) -> Stacks:
    """Parse collapsed stacks (py-spy's ``--format raw``): ``frame;frame;... count`` per line.

    A frame's name can hold a line break (py-spy now and then reads a string while the
    sampled interpreter changes it, e.g. during an import): a line without a count is the
    start of a stack that the next line goes on with.
    """
    stacks: Stacks = Counter()
    pending, first = "", 0  # a stack broken over lines so far, and the line it began on
    for number, line in enumerate(text.splitlines(), start=1):
        if not pending and not line.strip():
            continue
        pending, first = pending + line, first or number
        frames, space, count = pending.rstrip().rpartition(" ")
        if space and count.isdigit():
            # an empty stack: a thread sampled with no Python frame (``--idle`` keeps those)
            stacks[tuple(frames.split(";")) if frames else ()] += int(count)
            pending, first = "", 0
    if pending:
        raise UsageError(
            f"line {first} is not a collapsed stack ('frame;frame;... count'): "
            f"{pending[:80]!r}. Record with `py-spy record --format raw`."
        )
    return stacks


def classify(
    frames: tuple[Frame, ...], patterns: Iterable[TransferPattern] = TRANSFER_PATTERNS
) -> TransferPattern | None:
    """The transfer pattern a sample matches, or None when it was doing something else.

    From the innermost frame outwards: a native frame matches by name (``native``);
    the first Python frame met decides by its source line (``source``), and the
    search stops there, so the callers of a transfer are not counted as one.
    """
    for frame in reversed(frames):
        if frame.is_python:
            return match(frame.source(), "source", patterns)
        found = match(frame.function, "native", patterns)
        if found is not None:
            return found
    return None


@lru_cache(maxsize=1024)
def _phase_blocks(file: str) -> tuple[tuple[int, int, str], ...]:
    """(first line, last line, name) of every ``with <obj>.phase("NAME"):`` block in ``file``.

    A file without ``.phase(`` is not parsed: most frames are PyTorch's, whose big modules
    took seconds to parse and walk per profile."""
    text = "".join(linecache.getlines(file))
    if ".phase(" not in text:
        return ()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ()
    blocks = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                call = item.context_expr
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "phase"
                    and call.args
                    and isinstance(call.args[0], ast.Constant)
                    and isinstance(call.args[0].value, str)
                ):
                    blocks.append((node.lineno, node.end_lineno or node.lineno, call.args[0].value))
    return tuple(blocks)


PHASE_TIMER_FILE = "hetero_tutorial/core/timing.py"
"""The phase timer's module: its ``synchronize`` is the timer's own wait at a phase boundary."""


def in_phase_timer(frames: tuple[Frame, ...]) -> bool:
    """Whether the sample is in the phase timer entering or leaving a phase (its ``phase`` or
    ``synchronize`` frame is on the stack only then: a phase's body runs outside both)."""
    return any(
        frame.is_python
        and frame.file.replace("\\", "/").endswith(PHASE_TIMER_FILE)
        and frame.function.rsplit(".", 1)[-1] in ("phase", "synchronize")
        for frame in frames
    )


def phase_of(frames: tuple[Frame, ...]) -> str | None:
    """The training phase of a sample: the innermost ``with ….phase("NAME"):`` block it is in.

    The same blocks drive :class:`~hetero_tutorial.core.timing.PhaseTimer`, so the
    profile's phases are the phase timer's. None: outside every phase (start-up,
    set-up, evaluation).
    """
    for frame in reversed(frames):
        if frame.is_python:
            inside = [b for b in _phase_blocks(frame.file) if b[0] <= frame.line <= b[1]]
            if inside:
                return min(inside, key=lambda block: block[1] - block[0])[2]
    return None


def agresti_coull(count: int, total: int) -> float:
    """Standard error of ``count / total`` with two samples added on each side (Agresti-Coull):
    none of 50 samples gives +-2.6%, where the plain binomial formula claims +-0."""
    n = total + 4
    p = (count + 2) / n
    return math.sqrt(p * (1 - p) / n)


@dataclass(frozen=True)
class TransferShares:
    """How a profile's samples split into training phases, and into transfers and the rest.

    Transfers come in three buckets, counted per phase: ``copies``, ``waits`` (for data:
    ``.item()``, ``.cpu()``'s wait, the loop's own ``synchronize``) and ``timer_sync`` (the
    phase timer's ``synchronize`` at phase boundaries; at the end of a ``transfer`` phase,
    mostly a ``non_blocking`` copy landing). ``transfer`` is copies + waits, not timer syncs.
    """

    samples: dict[str, int]
    """samples in each phase"""
    transfer: dict[str, int]
    """samples in each phase that were copies or waits for data (timer syncs excluded)"""
    operations: dict[str, int]
    """samples per matched pattern (its ``operation``), over all phases, timer syncs excluded"""
    outside: int
    """samples outside every phase: start-up, set-up, evaluation"""
    copies: dict[str, int] = field(default_factory=dict)
    """samples in each phase that were copies"""
    waits: dict[str, int] = field(default_factory=dict)
    """samples in each phase that waited for data (not the phase timer)"""
    timer_sync: dict[str, int] = field(default_factory=dict)
    """samples in each phase in the phase timer's own ``synchronize``"""

    @property
    def total(self) -> int:
        """Samples inside the training phases: the denominator of every share."""
        return sum(self.samples.values())

    def share_of(self, bucket: str) -> float:
        """Fraction of the training samples in ``bucket`` (0..1): ``"transfer"`` (copies and
        waits for data), ``"copies"``, ``"waits"`` or ``"timer_sync"``."""
        if self.total == 0:
            raise UsageError(
                'no samples fell inside a `with ….phase("NAME"):` block: the run was too short '
                "for the sampling rate, or the code has no phase blocks; raise the steps or rate"
            )
        return sum(getattr(self, bucket).values()) / self.total

    def stderr_of(self, bucket: str) -> float:
        """Standard error of :meth:`share_of` ``bucket``: how far sampling alone may move it."""
        return agresti_coull(sum(getattr(self, bucket).values()), self.total)

    @property
    def share(self) -> float:
        """Fraction of the training samples in copies and waits for data (0..1)."""
        return self.share_of("transfer")

    @property
    def stderr(self) -> float:
        """Standard error of :attr:`share` (Agresti-Coull)."""
        return self.stderr_of("transfer")

    def by_phase(self, bucket: str = "transfer") -> dict[str, float]:
        """Within each phase, the fraction of its samples in ``bucket`` (see :meth:`share_of`)."""
        counts = getattr(self, bucket)
        return {phase: counts.get(phase, 0) / count for phase, count in self.samples.items()}

    def phase_share(self) -> dict[str, float]:
        """Each phase's fraction of the training samples."""
        return {phase: count / self.total for phase, count in self.samples.items()}

    def rows(self) -> list[dict[str, float | int | str]]:
        """One row per phase: samples, share of training, transfer share within it and overall."""
        return [
            {
                "phase": phase,
                "samples": count,
                "phase_share": count / self.total,
                "transfer_in_phase": self.transfer[phase] / count,
                "transfer_of_training": self.transfer[phase] / self.total,
                "timer_sync_of_training": self.timer_sync.get(phase, 0) / self.total,
            }
            for phase, count in self.samples.items()
        ]


def transfer_shares(
    stacks: Stacks, patterns: Iterable[TransferPattern] = TRANSFER_PATTERNS
) -> TransferShares:
    """Count a profile's samples per phase, and those that were transfers (see the module doc)."""
    patterns = tuple(patterns)
    samples: Counter = Counter()
    buckets: dict[str, Counter] = {"copy": Counter(), "wait": Counter(), "timer": Counter()}
    operations: Counter = Counter()
    outside = 0
    for stack, count in stacks.items():
        frames = parse_stack(stack)
        phase = phase_of(frames)
        if phase is None:
            outside += count
            continue
        samples[phase] += count
        found = classify(frames, patterns)
        if found is None:
            continue
        if in_phase_timer(frames):
            buckets["timer"][phase] += count
        else:
            buckets[found.kind][phase] += count
            operations[found.operation] += count
    copies, waits, timer = ({p: bucket[p] for p in samples} for bucket in buckets.values())
    transfer = {phase: copies[phase] + waits[phase] for phase in samples}
    return TransferShares(dict(samples), transfer, dict(operations), outside, copies, waits, timer)


def training_stacks(stacks: Stacks) -> Stacks:
    """Only the stacks inside a training phase (drops start-up, set-up and evaluation)."""
    return Counter({s: n for s, n in stacks.items() if phase_of(parse_stack(s)) is not None})


def transfer_stacks(
    stacks: Stacks, patterns: Iterable[TransferPattern] = TRANSFER_PATTERNS
) -> set[Stack]:
    """The stacks the transfer share counts (not the phase timer's syncs), for a flame graph."""
    patterns = tuple(patterns)
    parsed = ((s, parse_stack(s)) for s in stacks)
    return {s for s, f in parsed if classify(f, patterns) and not in_phase_timer(f)}


def top_frames(stacks: Stacks, n: int = 10) -> list[tuple[str, float]]:
    """The ``n`` innermost frames (lines, for Python) holding the most samples, with their share.

    This is *self* time: where the program was when sampled, not who called it.
    """
    total = sum(stacks.values())
    if total == 0:
        return []
    self_samples: Counter = Counter()
    for stack, count in stacks.items():
        self_samples[Frame.parse(stack[-1]).label] += count
    return [(label, count / total) for label, count in self_samples.most_common(n)]
