"""Notebook 04's tables, sentences and figures of its buffer designs: memory, sampling speed,
capacity, copies and placements (DDPG with each design: :mod:`ddpg_findings`; the race against
TorchRL: :mod:`buffer_race`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown
from matplotlib import ticker
from matplotlib.figure import Figure

from hetero_tutorial.core import results
from hetero_tutorial.core.machine_load import judged
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.notebook.exercises import UNSOLVED, prediction_line
from hetero_tutorial.notebook.prose import gpu_paragraph
from hetero_tutorial.notebook.solutions import solution
from hetero_tutorial.notebook.tables import markdown_table
from hetero_tutorial.studies.buffer_rows import BufferStudy, GatherRow, SamplingRow
from hetero_tutorial.studies.ddpg_buffers import DDPGSummary

count = "{:,.0f}".format


def copies_sentence(copies: dict[str, int], target: str) -> str:
    """What one batch to ``target`` costs in copies, per design, and what that means."""
    text = f"Copies per batch to {target}: " + ", ".join(f"{d} {n}" for d, n in copies.items())
    if copies["trajectory"] >= copies["transition"]:
        text += ". Pattern B copies no less than pattern A: A, as written, already copies per field"
    return text + f". The tensor buffer moves a batch in {copies['tensor']} copy."


def at_capacity(
    rows: list[SamplingRow], capacity: int, device: str = "cpu"
) -> dict[str, SamplingRow]:
    """Each design's row at one capacity, sampled to ``device``."""
    return {r.design: r for r in rows if r.capacity == capacity and r.device == device}


def memory_table(rows: list[SamplingRow]) -> Markdown:
    """Bytes per stored transition of each design at the largest capacity, against the raw."""
    largest = max(r.capacity for r in rows)
    shown = [
        {
            "design": d,
            "bytes": r.bytes_per_transition,
            "x raw": r.bytes_per_transition / r.raw_bytes_per_transition,
        }
        for d, r in at_capacity(rows, largest).items()
    ]
    table = markdown_table(
        shown,
        {"design": "design", "bytes": "bytes / transition", "x raw": "x raw"},
        {"bytes": "{:.1f}".format, "x raw": "{:.2f}".format},
        timed=False,
    )
    raw = rows[0].raw_bytes_per_transition
    return Markdown(f"{largest:,} transitions stored; raw fields: {raw} bytes\n\n{table.data}")


def speed_table(rows: list[SamplingRow]) -> Markdown:
    columns = {
        "design": "design",
        "capacity": "capacity",
        "device": "to",
        "copies_per_batch": "copies",
        "sample_transitions_per_s": "sampled / s",
        "add_transitions_per_s": "added / s",
        "neighbour_fraction": "neighbour fraction",
    }
    formats = {
        "sample_transitions_per_s": count,
        "add_transitions_per_s": count,
        "capacity": count,
        "neighbour_fraction": "{:.3f}".format,
    }
    return markdown_table([asdict(row) for row in rows], columns, formats)


@judged()
def sampling_sentence(rows: list[SamplingRow]) -> str:
    """The designs' sampling rates to the CPU at the largest capacity, as ratios with the
    spread of the two medians' IQRs (``Spread.of_medians``): a ratio from another run is
    the same figure only where it falls inside that spread."""
    largest = max(r.capacity for r in rows)
    found = at_capacity(rows, largest)

    def faster(top: str, bottom: str) -> Spread:
        return Spread.of_medians(found[bottom].batch_seconds(), found[top].batch_seconds())

    return (
        f"At {largest:,} transitions, batches of {rows[0].batch_size} to the CPU, sampling "
        f"rates: the tensor buffer {faster('tensor', 'transition')} pattern A's, pattern B "
        f"{faster('trajectory', 'transition')} pattern A's, the tensor buffer "
        f"{faster('tensor', 'trajectory')} pattern B's."
    )


SLOWED = 0.05
"""A fall in sampling rate with capacity worth explaining: pattern A's and the tensor buffer's
must both slow past the noise and by more than this for a bare table's gathers to explain it."""


def _faster_or_slower(change: float) -> str:
    """A change in samples per second in words: ``11% faster``, ``3% slower``, ``as fast``."""
    if round(abs(change), 2) == 0:
        return "as fast"
    return f"{abs(change):.0%} {'faster' if change > 0 else 'slower'}"


def _short_of_slowed(change: dict[str, float], slowed: dict[str, bool]) -> str:
    """How pattern A and the tensor buffer fall short of both slowing past the noise by more
    than :data:`SLOWED`, in words from their changes (to 0.1%: 4.9% is not 5%); else empty."""
    names = {"transition": "pattern A", "tensor": "the tensor buffer"}
    small = [d for d in names if slowed[d] and change[d] > -SLOWED]
    if len(small) == 2:
        return (
            f"Pattern A and the tensor buffer both slowed past the noise, by less than "
            f"{SLOWED:.0%} ({-change['transition']:.1%} and {-change['tensor']:.1%})"
        )
    words = [
        f"{name} did not slow past the noise (sampling {_faster_or_slower(change[d])})"
        if not slowed[d]
        else f"{name} slowed past the noise by less than {SLOWED:.0%} ({-change[d]:.1%})"
        for d, name in names.items()
        if not slowed[d] or d in small
    ]
    joined = "; ".join(words)
    return joined[:1].upper() + joined[1:]


def _gather_in_buffer(
    rows: list[SamplingRow], small: GatherRow, large: GatherRow, measured: float
) -> str:
    """The bare table's random gather, which the tensor buffer's sample makes too, as a
    prediction of the buffer's change with capacity (its share of the buffer's sample times
    its own slowdown), beside the change the buffer measured."""
    tensor = at_capacity(rows, small.capacity)["tensor"].batch_seconds()["median_s"]
    share = small.random_s / tensor
    paired = Spread.of_pairs(large.random_samples, small.random_samples, large.random_s /
                             small.random_s, per="repeat")  # fmt: skip
    predicted = share * (paired.value - 1)  # the buffer's predicted slowdown
    said = (
        f" That gather, {paired}, is {share:.0%} of the tensor buffer's sample at "
        f"{small.capacity:,}, so it predicts the buffer {_faster_or_slower(-predicted)} at "
        f"{large.capacity:,}; the buffer measured {_faster_or_slower(measured)}"
    )
    if abs(predicted) < 0.01:
        return said + "."
    carried = -measured / predicted  # the measured change over the predicted, the same way
    if carried > 2:
        return said + (
            f": {carried:.1f}x the predicted change, so the gather explains under half of "
            "it and the rest is the buffer's own."
        )
    if carried >= 0.5:
        return said + ": about as the gather predicts."
    if carried <= 0:
        return said + ": the other way, so the gather's change did not carry into the buffer."
    return said + ": under half that, so the gather's change did not carry into the buffer."


def _mebibytes(size: int) -> str:
    """``1.1 MiB``; from 10 MiB up, ``38 MiB``."""
    mib = size / 2**20
    return f"{mib:.1f} MiB" if mib < 10 else f"{mib:.0f} MiB"


@judged()
def capacity_sentence(rows: list[SamplingRow], gathers: list[GatherRow]) -> str:
    """How much each design's sampling to the CPU slowed from the smallest capacity to the
    largest, and a bare table's random and contiguous gathers; where pattern A and the tensor
    buffer both slowed past the noise by more than :data:`SLOWED`, what they say about why."""
    small, large = min(r.capacity for r in rows), max(r.capacity for r in rows)
    change, slowed = {}, {}
    for design, before in at_capacity(rows, small).items():
        after = at_capacity(rows, large)[design]
        change[design] = after.sample_transitions_per_s / before.sample_transitions_per_s - 1
        seconds = Spread.of_medians(after.batch_seconds(), before.batch_seconds())
        slowed[design] = seconds.beyond(1.0) is True  # the IQRs apart: slower past the noise
    text = (
        f"From {small:,} to {large:,} transitions, sampling to the CPU ran "
        + ", ".join(
            f"{_faster_or_slower(change[d])} ({d}{', past the noise' * slowed[d]})" for d in change
        )
        + "."
    )
    g_small, g_large, batch = gathers[0], gathers[-1], rows[0].batch_size
    random = g_large.random_s / g_small.random_s
    contiguous = g_large.contiguous_s / g_small.contiguous_s
    bare = (
        f"{batch} random rows took {random:.2f}x as "
        f"long at {g_large.capacity:,} rows ({_mebibytes(g_large.table_bytes)}) as at "
        f"{g_small.capacity:,}, {batch} contiguous rows {contiguous:.2f}x"
    )
    if short := _short_of_slowed(change, slowed):
        return (
            f"{text} {short}: no slowdown common to both, past the noise and over "
            f"{SLOWED:.0%}: no memory cost shared by both designs shows at these sizes. A bare "
            "float32 table's gathers, for scale: "
            f"{bare}." + _gather_in_buffer(rows, g_small, g_large, change["tensor"])
        )
    text += (
        f" The tensor buffer, with no Python object per transition, slowed too "
        f"({-change['tensor']:.0%} against pattern A's {-change['transition']:.0%}): Python "
        f"objects are not the whole cause. A bare float32 table, no buffer at all: {bare}"
    )
    # per interleaved repeat: how much more the random gather slowed than the contiguous one
    paired = zip(g_large.random_samples, g_small.random_samples,
                 g_large.contiguous_samples, g_small.contiguous_samples, strict=True)  # fmt: skip
    ratios = [(rl / rs) / (cl / cs) for rl, rs, cl, cs in paired]
    spread = Spread.of_ratios(ratios, per="repeat")  # the median of paired ratios, not 1.62/1.08
    side = spread.beyond(1.0)
    if side is True:
        text += (
            f"; the random gather slowed {spread} as much as the contiguous one, past the noise: "
            "the measurement fits memory as the cause (random rows of a larger table reach "
            "past more of the CPU's caches), though this run does not measure the caches."
        )
    elif side is False:
        text += f"; the contiguous gather slowed more ({spread}): this does not point at caches."
    elif spread.too_few:
        text += (
            f"; the random gather's extra slowdown (median of the paired repeats), {spread}: "
            f"no verdict, {spread.too_few_words()}, so this run cannot tell whether the caches "
            "are the cause."
        )
    else:
        text += (
            f"; the random gather's extra slowdown (median of the paired repeats), {spread}, is "
            "within the noise of the "
            "repeats: this run cannot tell whether the caches are the cause."
        )
    return text


def pinned(study: BufferStudy) -> Markdown | None:
    """Hybrid DDPG's pinned sampling path beside the same buffer unpinned; where it was not
    timed (no CUDA), why, as the notebook's GPU prose (one line per notebook without a GPU)."""
    if not study.pinned_rows:
        gpu_paragraph(f"Pinned path: {study.pinned_note or 'not timed'}.")
        return None
    return markdown_table(
        [asdict(row) for row in study.pinned_rows],
        {
            "capacity": "capacity",
            "device": "to",
            "pin_memory": "pinned",
            "sample_transitions_per_s": "sampled / s",
            "copies_per_batch": "copies",
        },
        {"capacity": count, "sample_transitions_per_s": count},
    )


def placements_table(rows: list[dict[str, Any]]) -> Markdown:
    """One row per configuration DDPG ran as (the placements it stood for), its speed."""
    return markdown_table(
        [{**r, "plans": ", ".join(r.get("stands_for", [r["placement"]]))} for r in rows],
        {"plans": "placements (one configuration)", "env_steps_per_s": "steps/s"},
        {"env_steps_per_s": "{:.0f}".format},
    )


def counted_table(counted: dict[str, dict[str, Any]], batch_size: int) -> Markdown:
    """Every placement's copies per 1000 environment steps, in all and by phase, where they
    were counted, and per 1000 transitions its updates sampled (one batch of ``batch_size``
    per step): C7's "per 1000 samples" (:func:`c7_switches_sentence`)."""
    rows = [
        {
            "placement": name,
            "on": found["counted_on"],
            "steps": 1000 * found["copies_per_env_step"],
            "sampled": 1000 * found["copies_per_env_step"] / batch_size,
            "phases": ", ".join(
                f"{p} {c['count_per_1000_steps']:.0f}" for p, c in found["by_phase"].items()
            )
            or found.get("note", "none"),
        }
        for name, found in counted.items()
    ]
    columns = {"placement": "placement", "on": "counted on", "steps": "copies / 1000 env steps",
               "sampled": "copies / 1000 sampled transitions",
               "phases": "by phase, per 1000 env steps"}  # fmt: skip
    formats = {"steps": "{:.0f}".format, "sampled": "{:.1f}".format}
    return markdown_table(rows, columns, formats, timed=False)


def references() -> Markdown | None:
    """Buffer and DDPG records from machines with an accelerator; where none are recorded,
    the notebook's one line about the GPU case (or nothing, once it was shown)."""
    found = results.load_references("bench.buffers", with_accelerator=True)
    found += results.load_references("bench.ddpg", with_accelerator=True)
    if not found:
        gpu_paragraph(results.NO_ACCELERATOR_REFERENCES)
        return None
    rows = []
    for r in found:
        shown = {"machine": r.hardware, "record": r.kind, "date": r.provenance["date"][:10]}
        if r.kind == "bench.buffers":
            shown["rows"] = len(BufferStudy.from_fields(r.data).rows) or None
        else:
            ddpg = DDPGSummary.from_fields(r.data)
            shown |= {"buffer": ddpg.buffer, "sps": ddpg.env_steps_per_s}
        rows.append(shown)
    return markdown_table(
        rows,
        {
            "machine": "machine",
            "record": "record",
            "date": "date",
            "buffer": "DDPG buffer",
            "sps": "DDPG env steps / s",
            "rows": "buffer rows",
        },
        {"sps": "{:.0f}".format},
        timed=False,
    )


def ring_cases() -> list[tuple[int, int, int]]:
    return [(998, 5, 1_000), (0, 3, 10), (7, 12, 5), (4, 0, 8)]


def ring_guess_line(guess: list[int] | None, answer: list[int] | None) -> str:
    """The learner's predicted slots beside the ring's rule on the exercise's first case,
    once ``answer`` (what ``check`` returned) says the exercise is solved."""
    if answer is None:
        return UNSOLVED
    next_slot, adds, capacity = ring_cases()[0]
    found = solution("ring_slots")(next_slot, adds, capacity)
    what = f"The next {adds} adds to a ring of {capacity:,} slots whose next slot is {next_slot}"
    return prediction_line(what, guess, found)


STEP_KINDS = ("ordinary", "terminated", "truncated")
"""The three transitions of the TD-target exercise's first batch, in its order."""


def td_guess_line(guess: Sequence[str] | None, answer: Any) -> str:
    """The learner's guess of which targets keep ``gamma * next_q`` (of :data:`STEP_KINDS`)
    beside those the critic's target keeps on the exercise's first batch, once ``answer``
    (what ``check`` returned) says the exercise is solved."""
    if answer is None:
        return UNSOLVED
    reward, next_q, terminated, truncated, gamma = td_cases()[0]
    target = solution("td_target")(reward, next_q, terminated, truncated, gamma)
    kept = [kind for kind, t, r in zip(STEP_KINDS, target, reward, strict=True) if t != r]
    ordered = None if guess is None else [kind for kind in STEP_KINDS if kind in guess]
    what = "The targets that keep gamma * next_q"

    def show(kinds: Sequence[str]) -> str:
        return " and ".join(kinds) or "none"

    return prediction_line(what, ordered, kept, show=show, variable="MY_TD_GUESS")


def td_cases() -> list[tuple[Any, ...]]:
    """A batch where one transition terminated and one was truncated; then gamma 0 and 1."""
    flags = (torch.tensor([0.0, 1.0, 0.0]), torch.tensor([0.0, 0.0, 1.0]))
    reward, next_q = torch.tensor([-1.0, -2.0, -3.0]), torch.tensor([5.0, 5.0, 5.0])
    rng = np.random.default_rng(0)
    random = [torch.tensor(rng.normal(size=4), dtype=torch.float32) for _ in range(2)]
    ended = (torch.tensor([1.0, 0.0, 0.0, 1.0]), torch.tensor([0.0, 1.0, 0.0, 0.0]))
    return [(reward, next_q, *flags, 0.9), (reward, next_q, *flags, 0.0), (*random, *ended, 1.0)]


def _short(value: float) -> str:
    """A tick label: 500, 10k, 1.5M."""
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:g}{unit}"
    return f"{value:g}"


def buffer_sampling_rates(rows: Sequence[SamplingRow]) -> Figure:
    """Sampled transitions per second against buffer capacity: a line per design and device."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    devices = list(dict.fromkeys(r.device for r in rows))
    for design in dict.fromkeys(r.design for r in rows):
        for device, style in zip(devices, ("-o", "--s", ":^"), strict=False):
            points = sorted(
                (r.capacity, r.sample_transitions_per_s)
                for r in rows
                if r.design == design and r.device == device
            )
            capacities, rates = zip(*points, strict=True)
            ax.plot(capacities, rates, style, label=f"{design} -> {device}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers (10k, 1M), not powers of ten
        axis.set_major_formatter(ticker.FuncFormatter(lambda value, _: _short(value)))
        axis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("buffer capacity (transitions)")
    ax.set_ylabel("sampled transitions per second")
    ax.set_title(f"sampling batches of {rows[0].batch_size}")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    return fig
