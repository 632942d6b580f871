"""The buffer study's rows, typed: what :mod:`hetero_tutorial.studies.buffer_designs` hands a
report, the fields of a ``bench.buffers`` record they are written as and read back from, and
which design a record's rows say samples fastest (:func:`fastest_sampler`, for the ledger).

The figures are those :mod:`~hetero_tutorial.studies.buffer_designs`' docstring describes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.timing import Spread


@dataclass(frozen=True, kw_only=True)
class SamplingRow:
    """One design at one capacity, sampled to one device (the module's docstring says what
    each figure is): a row of a ``bench.buffers`` record."""

    design: str
    capacity: int
    """transitions the buffer held"""
    batch_size: int
    device: str
    """where its batches were sampled to"""
    sample_transitions_per_s: float
    sample_iqr_s: float | None = None
    """the IQR of the seconds per batch (None: a record without it)"""
    add_transitions_per_s: float
    bytes_per_transition: float
    raw_bytes_per_transition: int
    """the bytes of one transition's fields, stored as they are"""
    neighbour_fraction: float
    copies_per_batch: int

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> SamplingRow:
        """A row of a ``bench.buffers`` record, read back."""
        return cls(**row)

    def batch_seconds(self) -> dict[str, float | None]:
        """Median seconds per batch and their IQR, as :meth:`Spread.of_medians` reads them."""
        return {"median_s": self.batch_size / self.sample_transitions_per_s,
                "iqr_s": self.sample_iqr_s}  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class PinnedRow:
    """The tensor buffer in CPU memory sampled to a CUDA device, pinned or not
    (:func:`pinned_sampling`): a row of a ``bench.buffers`` record's ``pinned_rows``."""

    design: str
    pin_memory: bool
    capacity: int
    batch_size: int
    device: str
    sample_transitions_per_s: float
    sample_iqr_s: float | None = None
    copies_per_batch: int

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> PinnedRow:
        return cls(**row)


@dataclass(frozen=True, kw_only=True)
class BufferStudy:
    """Every design at every capacity and device (``rows``) and, for each CUDA device, the
    pinned path (``pinned_rows``; ``pinned_note`` says why there are none)."""

    batch_size: int
    designs: list[str]
    rows: list[SamplingRow]
    pinned_rows: list[PinnedRow]
    pinned_note: str | None

    def fields(self) -> dict[str, Any]:
        """The fields of its ``bench.buffers`` record."""
        return asdict(self)

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> BufferStudy:
        """A study from a ``bench.buffers`` record's fields, read back."""
        return cls(
            batch_size=data["batch_size"],
            designs=list(data["designs"]),
            rows=[SamplingRow.from_dict(row) for row in data["rows"]],
            pinned_rows=[PinnedRow.from_dict(row) for row in data.get("pinned_rows") or []],
            pinned_note=data.get("pinned_note"),
        )


@dataclass(frozen=True, kw_only=True)
class GatherRow:
    """A bare table's gathers at one capacity (:func:`row_gathers`)."""

    capacity: int
    table_bytes: int
    random_s: float
    """median seconds to gather a batch of random rows"""
    contiguous_s: float
    """median seconds to copy a batch of contiguous rows"""
    random_samples: list[float]
    """each repeat's seconds of the random gather, paired with ``contiguous_samples``"""
    contiguous_samples: list[float]


def fastest_sampler(rows: Sequence[dict[str, Any]], device: str = "cpu") -> dict[str, Any]:
    """Which design sampled fastest to ``device`` at the largest capacity measured, and whether
    past the noise.

    Returns ``capacity``, ``rates`` (transitions per second, by design), ``best`` and
    ``runner_up`` (by median rate), ``spread`` (the best's seconds per batch over the
    runner-up's, spread by their IQRs: :meth:`Spread.of_medians`) and ``winner``: the best
    design where that whole spread lies below 1, else None (no clear winner).
    """
    mine = [r for r in rows if r["device"] == device]
    if not mine:
        raise UsageError(f"no buffer rows sampled to {device}; measure it (bench buffers)")
    capacity = max(r["capacity"] for r in mine)
    at = {r["design"]: r for r in mine if r["capacity"] == capacity}
    ranked = sorted(at, key=lambda design: -at[design]["sample_transitions_per_s"])
    best, runner_up = ranked[0], ranked[1] if len(ranked) > 1 else None

    def seconds(design: str) -> dict[str, float]:
        row = at[design]
        return {"median_s": row["batch_size"] / row["sample_transitions_per_s"],
                "iqr_s": row.get("sample_iqr_s")}  # fmt: skip

    spread = Spread.of_medians(seconds(best), seconds(runner_up)) if runner_up else Spread(1.0)
    return {
        "capacity": capacity,
        "rates": {design: at[design]["sample_transitions_per_s"] for design in ranked},
        "best": best,
        "runner_up": runner_up,
        "spread": spread,
        "winner": best if spread.side(1.0, above=False) else None,
    }
