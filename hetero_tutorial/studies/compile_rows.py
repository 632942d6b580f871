"""The compile study's rows, typed: what :mod:`hetero_tutorial.studies.compiling` hands
notebook 08's report, what is read from them without timing anything (each compiled mode's
speed-up over eager, :func:`speedup_rows`; the accelerator's crossover in each mode,
:func:`crossovers_by_mode`), and the fields of a ``bench.compile`` record they are written as
and read back from (:class:`CompileStudy`).

The figures are those :mod:`~hetero_tutorial.studies.compiling`' docstring describes;
seconds are wall-clock seconds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from hetero_tutorial.core.timing import Spread
from hetero_tutorial.speed.compiler import break_even_iterations
from hetero_tutorial.studies.crossover_grid import crossover_widths


@dataclass(frozen=True, kw_only=True)
class PieceRow:
    """One piece in one mode at one size, timed (:func:`~.compiling.piece_rows`): a row of a
    ``bench.compile`` record's ``rows``."""

    piece: str
    """``act``, ``env_step``, ``update`` (or ``forward``: a :class:`GridRow`)"""
    mode: str
    """``eager``, ``compile`` or ``cudagraphs``"""
    device: str
    size: int
    """the piece's batch: observations, environments or minibatch transitions"""
    seconds: float
    """median seconds per steady call"""
    iqr_s: float
    samples: list[float]
    """each repeat's seconds per call, in order: paired with eager's by repeat"""
    first_call_seconds: float
    compile_seconds: float
    """the first call's seconds over a steady call's (0 for eager): where compiling happens"""

    def fields(self) -> dict[str, Any]:
        """Its fields in a ``bench.compile`` record."""
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class GridRow(PieceRow):
    """Notebook 00's MLP forward at one width and batch (piece ``forward``,
    :func:`~.compiling.forward_grid_rows`): a row of a notebook record's ``grid``."""

    width: int
    """the MLP's hidden units"""
    batch_size: int
    """the same as ``size``, under the crossover grid's name"""


@dataclass(frozen=True, kw_only=True)
class SpeedupRow:
    """A compiled mode of one piece over eager at one size (:func:`~.compiling.speedup_rows`)."""

    piece: str
    device: str
    size: int
    mode: str
    speedup: float
    """eager's seconds over the mode's: the median of the paired repeats' ratios"""
    low: float | None
    """the range of those ratios (None: one repeat)"""
    high: float | None
    compile_seconds: float
    break_even_calls: float | None
    """calls after which compiling paid for itself (None: the mode was not faster)"""
    repeats: int | None = None
    """how many paired ratios the range spans (None in records written before it was kept)"""

    def fields(self) -> dict[str, Any]:
        """Its fields in a ``bench.compile`` record (``repeats`` only where it was kept)."""
        return {k: v for k, v in asdict(self).items() if k != "repeats" or v is not None}


@dataclass(frozen=True, kw_only=True)
class RunRow:
    """PPO or DDPG in one mode, steady against its first unit (:func:`~.compiling.ppo_rows`,
    :func:`~.compiling.ddpg_rows`): a row of a record's ``rows``, and its ``speedups`` where
    compiled."""

    piece: str
    """``ppo-<placement>`` or ``ddpg-<placement>``"""
    unit: str
    """what a run is timed in: PPO's ``iteration``, DDPG's ``update``"""
    device: str
    """the update's device"""
    size: int
    """PPO's environments, DDPG's batch"""
    mode: str
    seconds: float
    """median seconds per steady unit"""
    env_steps_per_s: float
    first_iteration_s: float
    """the first unit's seconds (DDPG's: the step of its first update), where compiling happens"""
    compile_seconds: float
    """the first unit's seconds over eager's (0 for eager)"""
    speedup: float
    """eager over this mode, the median of the turns' paired ratios (1 for eager)"""
    low: float | None
    """the range of those ratios (None for eager)"""
    high: float | None
    break_even_iterations: float | None
    """units after which compiling paid for itself (None for eager, or where not faster)"""
    graph_skips: int
    """graphs CUDA graph trees declined to capture (run uncaptured)"""
    repeats: int | None = None
    """how many paired ratios the range spans (None in records written before it was kept)"""

    def fields(self) -> dict[str, Any]:
        """Its fields in a ``bench.compile`` record (``repeats`` only where it was kept)."""
        return {k: v for k, v in asdict(self).items() if k != "repeats" or v is not None}


@dataclass(frozen=True, kw_only=True)
class Breakdown:
    """One compiled PPO minibatch step on the CPU taken apart (:func:`~.compiling.step_breakdown`
    says how each figure is measured): a notebook record's ``breakdown``."""

    size: int
    """the minibatch's transitions"""
    step_s: float
    """seconds per step, no profiler"""
    matmul_s: float
    """seconds per step its matrix products ran"""
    profiled_s: float
    """seconds per profiled step (the profiler on)"""
    matmul_calls: int
    matmul_flops: int
    """the products' floating-point operations per step"""
    peak_flops_per_s: float
    """this core's rate on one large product"""
    peak_size: int
    """rows (and columns) of that product"""


@dataclass(frozen=True, kw_only=True)
class StepTrace:
    """What TorchDynamo made of one batched env step (:func:`~.compiling.explain_step`)."""

    graphs: int
    graph_breaks: int
    reasons: list[str]
    """each break's reason, in Dynamo's words"""


def crossovers_by_mode(rows: list[GridRow]) -> dict[str, dict[int, int | None]]:
    """Per compiled mode, :func:`~hetero_tutorial.studies.crossover_grid.crossover_widths` of
    the accelerator in that mode against the CPU in its best mode there (``eager``: both
    eager; ``compile``: both compiled; ``cudagraphs``: graphed against the CPU compiled).
    Empty when only the CPU was measured."""
    accelerators = sorted({r.device for r in rows if r.device != "cpu"})
    if not accelerators:
        return {}
    found = {}
    for mode in dict.fromkeys(r.mode for r in rows if r.device == accelerators[0]):
        cpu_mode = "compile" if mode == "cudagraphs" else mode
        picked = [  # as the crossover grid's rows (:mod:`.crossover_grid` reads those)
            r.fields() | {"seconds_per_call": r.seconds}
            for r in rows
            if (r.device, r.mode) in (("cpu", cpu_mode), (accelerators[0], mode))
        ]
        found[mode] = crossover_widths(picked)
    return found


def speedup_rows(rows: Sequence[PieceRow]) -> list[SpeedupRow]:
    """Per piece, device, size and compiled mode: eager seconds over the mode's (the median of
    the paired repeats' ratios, with their range) and the calls to break even."""
    eager = {(r.piece, r.device, r.size): r for r in rows if r.mode == "eager"}
    out = []
    for row in rows:
        base = eager.get((row.piece, row.device, row.size))
        if row.mode == "eager" or base is None:
            continue
        ratios = [e / c for e, c in zip(base.samples, row.samples, strict=True)]
        spread = Spread.of_ratios(ratios)
        out.append(
            SpeedupRow(
                piece=row.piece,
                device=row.device,
                size=row.size,
                mode=row.mode,
                speedup=spread.value,
                low=spread.low,
                high=spread.high,
                compile_seconds=row.compile_seconds,
                break_even_calls=break_even_iterations(
                    row.compile_seconds, base.seconds, row.seconds
                ),
                repeats=spread.count,
            )
        )
    return out


Row = PieceRow | GridRow | SpeedupRow | RunRow


def read_row(row: dict[str, Any]) -> Row:
    """A row of a ``bench.compile`` record, read back as the type its fields say it is."""
    if "env_steps_per_s" in row:
        return RunRow(**row)
    if "width" in row:
        return GridRow(**row)
    if "break_even_calls" in row:
        return SpeedupRow(**row)
    return PieceRow(**row)


BENCH_FIELDS = ("device", "modes", "threads", "rows", "speedups", "tag")
"""The fields ``bench compile`` writes, in order."""
NOTEBOOK_FIELDS = ("device", "threads", "rows", "speedups", "grid", "cache_warm", "breakdown")
"""The fields notebook 08 writes, in order."""


@dataclass(frozen=True, kw_only=True)
class CompileStudy:
    """A ``bench.compile`` record's fields, typed. Two writers write one: ``bench compile``
    (:data:`BENCH_FIELDS`) and notebook 08 (:data:`NOTEBOOK_FIELDS`: the grid and the
    breakdown too, and no modes)."""

    device: str
    """where the pieces ran: the accelerator, else the CPU"""
    modes: list[str] | None = None
    """the modes timed (``bench compile``'s records; the notebook's hold none)"""
    threads: int | None
    """PyTorch's CPU threads"""
    rows: list[PieceRow | RunRow]
    """every piece's rows, then every run's"""
    speedups: list[SpeedupRow | RunRow]
    """each compiled piece's and run's rows over eager"""
    grid: list[GridRow] | None = None
    cache_warm: bool | None = None
    """whether torch.compile's cache held kernels when the notebook started"""
    breakdown: Breakdown | None = None
    """None where compiling could not run on the CPU"""
    tag: str | None = None
    """the name a part run's record is filed under (``bench.compile.TAG.json``)"""
    written: tuple[str, ...] | None = field(default=None, repr=False)
    """the fields its record holds, in order: a record read back keeps its own (one older
    than a field holds none of it); None: its writer's, the notebook's where it has a grid"""

    def fields(self) -> dict[str, Any]:
        """The fields of its ``bench.compile`` record."""
        keys = self.written or (NOTEBOOK_FIELDS if self.grid is not None else BENCH_FIELDS)
        return {key: _plain(getattr(self, key)) for key in keys}

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> CompileStudy:
        """A study from a ``bench.compile`` record's fields, read back."""
        grid, breakdown = data.get("grid"), data.get("breakdown")
        return cls(
            device=data["device"],
            modes=data.get("modes"),
            threads=data.get("threads"),
            rows=[read_row(row) for row in data.get("rows", [])],
            speedups=[read_row(row) for row in data.get("speedups", [])],
            grid=None if grid is None else [GridRow(**row) for row in grid],
            cache_warm=data.get("cache_warm"),
            breakdown=None if breakdown is None else Breakdown(**breakdown),
            tag=data.get("tag"),
            written=tuple(data),
        )


def _plain(value: Any) -> Any:
    """``value`` as JSON holds it: a row as its fields, a list of rows as theirs."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.fields() if hasattr(value, "fields") else asdict(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
