"""Reading the forward grid of :func:`~hetero_tutorial.studies.crossover.forward_grid`.

Two questions, answered from its rows (one per device, width and batch size, with the
median and IQR of seconds per call): where an accelerator gets cheaper per sample than
the CPU, past the noise of the two medians (:func:`crossover_cells`,
:func:`crossover_widths`: notebook 00 and claim C3), and from which batch size batching
stops paying (:func:`batches_that_pay`: notebook 00 and the advice of notebook 10), each
also in a sentence (:func:`crossover_sentence`, :func:`batching_sentence`).
"""

from __future__ import annotations

from typing import Any

from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.timing import Spread


def crossover_cells(rows: list[dict[str, Any]]) -> dict[int, dict[int, bool | None]]:
    """Per batch size and width: whether an accelerator is cheaper per sample than the CPU.

    True only where the whole spread of accelerator over CPU (the two medians' IQRs,
    :meth:`Spread.of_medians`) lies below 1, False where it lies at or above 1, None where
    the two are within each other's noise. Per call or per sample is one ratio (same
    batch). Empty when only the CPU was measured (the first accelerator is read).
    """
    accelerators = sorted({r["device"] for r in rows if r["device"] != "cpu"})
    if not accelerators:
        return {}
    cell = {(r["device"], r["width"], r["batch_size"]): r for r in rows}
    cells: dict[int, dict[int, bool | None]] = {}
    for batch_size in sorted({r["batch_size"] for r in rows}):
        cells[batch_size] = {}
        for width in sorted({r["width"] for r in rows}):
            accel = _per_call(cell[(accelerators[0], width, batch_size)])
            spread = Spread.of_medians(accel, _per_call(cell[("cpu", width, batch_size)]))
            cells[batch_size][width] = spread.side(1.0, above=False)
    return cells


def _per_call(row: dict[str, Any]) -> dict[str, float | None]:
    return {"median_s": row["seconds_per_call"], "iqr_s": row.get("iqr_s")}


def crossover_widths(rows: list[dict[str, Any]]) -> dict[int, int | None]:
    """For each batch size, the smallest width at which an accelerator is clearly cheaper per
    sample than the CPU (past the noise, see :func:`crossover_cells`).

    None where it is clearly cheaper at no width measured. Empty when only the CPU was measured.
    """
    return {
        batch: next((w for w, wins in by_width.items() if wins), None)
        for batch, by_width in crossover_cells(rows).items()
    }


BATCH_WITHIN = 0.10
"""A batch size "pays" once its cost per sample is within this fraction of the cheapest."""


def batches_that_pay(
    rows: list[dict[str, Any]], device: str = "cpu", within: float = BATCH_WITHIN
) -> list[dict[str, Any]]:
    """Per width on ``device``, the smallest batch whose cost per sample is within ``within``
    of the cheapest measured: where batching stops paying on this machine.

    One dict per width: ``width``, ``batch_size`` and its ``seconds_per_sample``, and
    ``smallest_batch`` with ``smallest_over_cheapest`` (its cost per sample over the cheapest).
    """
    mine = [r for r in rows if r["device"] == device]
    found = []
    for width in sorted({r["width"] for r in mine}):
        at = sorted((r for r in mine if r["width"] == width), key=lambda r: r["batch_size"])
        cheapest = min(r["seconds_per_sample"] for r in at)
        enough = next(r for r in at if r["seconds_per_sample"] <= cheapest * (1 + within))
        found.append(
            {
                "width": width,
                "batch_size": enough["batch_size"],
                "seconds_per_sample": enough["seconds_per_sample"],
                "smallest_batch": at[0]["batch_size"],
                "smallest_over_cheapest": at[0]["seconds_per_sample"] / cheapest,
            }
        )
    return found


@judged()
def crossover_sentence(rows: list[dict[str, Any]]) -> str:
    """Whether an accelerator beat the CPU per sample anywhere in the grid past the noise, from
    where, and which cells the noise leaves undecided."""
    cells = crossover_cells(rows)
    if not cells:
        return "Only the CPU was measured: no crossover to find without an accelerator."
    widths = crossover_widths(rows)
    unclear = {b: [str(w) for w, wins in row.items() if wins is None] for b, row in cells.items()}
    noise = "; ".join(f"batch {b}: width {', '.join(ws)}" for b, ws in unclear.items() if ws)
    tail = f" Within the two medians' noise (no winner): {noise}." if noise else ""
    found = {batch: width for batch, width in widths.items() if width is not None}
    if not found:
        return (
            "The accelerator was clearly cheaper per sample at no width and batch measured: "
            f"no crossover.{tail}"
        )
    listed = ", ".join(f"batch {b}: from width {w}" for b, w in found.items())
    never = [b for b, w in widths.items() if w is None]
    beyond = f"; at no width for batch {', '.join(map(str, never))}" if never else ""
    return f"The accelerator is cheaper per sample past the noise at {listed}{beyond}.{tail}"


@judged()
def batching_sentence(
    rows: list[dict[str, Any]], device: str = "cpu", within: float = BATCH_WITHIN
) -> str:
    """:func:`batches_that_pay` in a sentence, with what the smallest batch costs; a width
    whose cheapest batch is the largest measured is said to be still falling there (the grid
    does not show where batching stops paying)."""
    largest = max(r["batch_size"] for r in rows if r["device"] == device)
    parts = [
        f"width {b['width']}: batch {b['batch_size']}"
        + (", the largest measured, so still falling" if b["batch_size"] == largest else "")
        + f" (batch {b['smallest_batch']} costs "
        f"{b['smallest_over_cheapest']:.0f}x{' as much per sample' if i == 0 else ''})"
        for i, b in enumerate(batches_that_pay(rows, device, within))
    ]
    return (
        f"On {device}, the smallest batch within {within:.0%} of the cheapest cost per sample: "
        + "; ".join(parts)
        + ". Past it, a larger batch buys little, where the grid measured past it."
    )
