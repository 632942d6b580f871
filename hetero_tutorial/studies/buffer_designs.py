"""The replay buffer study: sampling and add throughput, memory, batch correlation (C8).

For each capacity, the three designs of :mod:`hetero_tutorial.rl.buffers` are filled
with the same Pendulum-shaped transitions (3 observation features, 1 action) and
then measured in one run, interleaved (:func:`hetero_tutorial.core.timing.compare`), in a
Python process of its own (:func:`time_designs` says why):

* ``bytes_per_transition``: the tensor buffer's ``nbytes`` over its capacity; for
  the Python containers, what ``tracemalloc`` saw allocated while filling them
  (their NumPy arrays and Python objects), over the transitions stored;
* ``add_transitions_per_s``: adds into the full buffer (the steady state: every
  add overwrites or evicts the oldest data);
* ``sample_transitions_per_s``: batches of ``batch_size`` sampled back to back to
  each device (the steady-state rate);
* ``neighbour_fraction``: the share of a batch's transitions whose next time step
  is in the same batch, a simple measure of how correlated a batch is (about
  ``batch_size / capacity`` for independent draws);
* ``copies_per_batch``: host<->device copies one ``sample`` makes.

With a CUDA device, :func:`pinned_sampling` also times the path hybrid DDPG samples
through: the tensor buffer in CPU memory gathering each batch into pinned memory and
copying it with ``non_blocking=True``, beside the same buffer without pinning.

The synthetic transitions carry their step number in ``obs[0]``, so a batch tells
which time steps it holds.

:func:`time_designs` hands its rows to a report as dataclasses (a
:class:`~hetero_tutorial.studies.buffer_rows.BufferStudy` of them), whose ``fields()`` are
a ``bench.buffers`` record's.

DDPG trained with each design is :mod:`hetero_tutorial.studies.ddpg_buffers`.
"""

from __future__ import annotations

import multiprocessing
import tracemalloc
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np
import torch

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.timing import compare
from hetero_tutorial.core.transfers import CopyCounter
from hetero_tutorial.rl.buffers import (
    DESIGNS,
    Batch,
    ReplayBuffer,
    TensorReplayBuffer,
    make_buffer,
    raw_bytes_per_transition,
)
from hetero_tutorial.studies.buffer_rows import BufferStudy, GatherRow, PinnedRow, SamplingRow

OBS_DIM, ACTION_DIM = 3, 1
"""Pendulum-v1's observation and action sizes."""
EPISODE_LENGTH = 200
"""Pendulum-v1's time limit: every 200th synthetic transition is truncated."""


class SyntheticTransitions:
    """Random Pendulum-shaped transitions, fed to a buffer in order; ``obs[0]`` is the step."""

    def __init__(self, count: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.count = count
        self.obs = rng.uniform(-1.0, 1.0, (count + 1, OBS_DIM)).astype(np.float32)
        self.obs[:, 0] = np.arange(count + 1)
        self.action = rng.uniform(-2.0, 2.0, (count, ACTION_DIM)).astype(np.float32)
        self.reward = rng.uniform(-16.0, 0.0, count).tolist()

    def feed(self, buffer: ReplayBuffer, start: int, steps: int) -> int:
        """Add transitions ``start, start + 1, ...`` (wrapping around); return the next start."""
        for step in range(start, start + steps):
            i = step % self.count
            truncated = (i + 1) % EPISODE_LENGTH == 0
            buffer.add(
                self.obs[i], self.action[i], self.reward[i], self.obs[i + 1], False, truncated
            )
        return start + steps


def fill(buffer: ReplayBuffer, data: SyntheticTransitions) -> float:
    """Fill ``buffer`` to capacity from ``data``; return its bytes per stored transition.

    The tensor buffer's storage is preallocated PyTorch memory, which tracemalloc
    cannot see: its ``nbytes`` is exact. The Python containers allocate as they
    grow: tracemalloc counts what they allocate while being filled.
    """
    if isinstance(buffer, TensorReplayBuffer):
        data.feed(buffer, 0, buffer.capacity)
        return buffer.nbytes / buffer.capacity
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        data.feed(buffer, 0, buffer.capacity)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return grown / len(buffer)


def neighbour_fraction(batch: Batch) -> float:
    """Share of the batch's transitions whose next time step (``obs[0] + 1``) is also in it."""
    steps = batch.obs[:, 0].cpu()
    return float(torch.isin(steps + 1, steps).float().mean())


def copies_per_batch(buffer: ReplayBuffer, batch_size: int, device: torch.device | str) -> int:
    """How many host<->device copies one ``sample(batch_size, device)`` makes.

    ``device="meta"`` (a device without data) stands in for an accelerator on a
    machine that has none: the copies are counted, nothing is moved.
    """
    with CopyCounter() as counter:
        buffer.sample(batch_size, device)
    return counter.total().count


def filled_buffers(
    capacity: int, seed: int = 0
) -> tuple[dict[str, ReplayBuffer], dict[str, float], SyntheticTransitions]:
    """A buffer of each design filled to ``capacity`` from the same synthetic transitions,
    each design's bytes per stored transition, and those transitions."""
    data = SyntheticTransitions(capacity, seed)
    buffers = {d: make_buffer(d, capacity, OBS_DIM, ACTION_DIM, seed=seed) for d in DESIGNS}
    memory = {design: fill(buffer, data) for design, buffer in buffers.items()}
    return buffers, memory, data


def measure_capacity(
    capacity: int,
    batch_size: int,
    devices: Sequence[torch.device],
    repeats: int = 15,
    seed: int = 0,
    filled: tuple[dict[str, ReplayBuffer], dict[str, float], SyntheticTransitions] | None = None,
) -> list[SamplingRow]:
    """One row per design x device for buffers of ``capacity`` transitions (see module doc);
    ``filled``: the buffers of :func:`filled_buffers` to time, instead of filling new ones."""
    buffers, memory, data = filled or filled_buffers(capacity, seed)
    starts = dict.fromkeys(buffers, capacity)
    adds_per_call = 100

    def add(design: str) -> None:
        starts[design] = data.feed(buffers[design], starts[design], adds_per_call)

    add_timings = compare({d: (lambda d=d: add(d)) for d in buffers}, repeats=repeats)
    rows = []
    for device in devices:
        sample_timings = compare(
            {d: (lambda b=b, t=device: b.sample(batch_size, t)) for d, b in buffers.items()},
            device=device,
            repeats=repeats,
            inner=20,  # back-to-back batches: steady-state throughput
        )
        for design, buffer in buffers.items():
            rows.append(
                SamplingRow(
                    design=design,
                    capacity=capacity,
                    batch_size=batch_size,
                    device=str(device),
                    sample_transitions_per_s=batch_size / sample_timings[design].median,
                    sample_iqr_s=sample_timings[design].iqr,
                    add_transitions_per_s=adds_per_call / add_timings[design].median,
                    bytes_per_transition=memory[design],
                    raw_bytes_per_transition=raw_bytes_per_transition(OBS_DIM, ACTION_DIM),
                    neighbour_fraction=float(
                        np.mean([neighbour_fraction(buffer.sample(batch_size)) for _ in range(20)])
                    ),
                    copies_per_batch=copies_per_batch(buffer, batch_size, device),
                )
            )
    return rows


def default_devices() -> list[torch.device]:
    """The CPU, and the accelerator when there is one."""
    found = accelerator()
    return [torch.device("cpu")] + ([found] if found is not None else [])


def pinned_sampling(
    capacity: int,
    batch_size: int,
    device: torch.device,
    repeats: int = 15,
    seed: int = 0,
    filled: TensorReplayBuffer | None = None,
) -> list[PinnedRow]:
    """The tensor buffer sampling to a CUDA ``device`` from CPU storage, pinned and not.

    ``pin_memory=True`` is hybrid DDPG's path (:attr:`Placement.pin_storage`): each
    batch is gathered into page-locked memory and copied with ``non_blocking=True``.
    ``filled``: a tensor buffer already full (else one is filled here); it is timed as the
    unpinned path, and the pinned buffer gets its transitions in one copy of its storage
    (a million adds one at a time take seconds). Timed interleaved; one row each.
    """
    if filled is None:
        filled = TensorReplayBuffer(capacity, OBS_DIM, ACTION_DIM, seed=seed)
        fill(filled, SyntheticTransitions(capacity, seed))
    pinned_buffer = TensorReplayBuffer(capacity, OBS_DIM, ACTION_DIM, pin_memory=True, seed=seed)
    pinned_buffer.copy_rows_from(filled)
    buffers = {False: filled, True: pinned_buffer}
    timings = compare(
        {pinned: (lambda b=b: b.sample(batch_size, device)) for pinned, b in buffers.items()},
        device=device,
        repeats=repeats,
        inner=20,
    )
    return [
        PinnedRow(
            design="tensor",
            pin_memory=pinned,
            capacity=capacity,
            batch_size=batch_size,
            device=str(device),
            sample_transitions_per_s=batch_size / timings[pinned].median,
            sample_iqr_s=timings[pinned].iqr,
            copies_per_batch=copies_per_batch(buffer, batch_size, device),
        )
        for pinned, buffer in buffers.items()
    ]


NO_PINNED_PATH = (
    "no CUDA device: the pinned sampling path of hybrid DDPG (TensorReplayBuffer with "
    "pin_memory=True, copied non_blocking to CUDA) was not timed"
)


def one_capacity(
    capacity: int,
    batch_size: int,
    devices: Sequence[torch.device],
    repeats: int = 15,
    seed: int = 0,
    threads: int | None = None,
) -> tuple[list[SamplingRow], list[PinnedRow]]:
    """One capacity's rows (:func:`measure_capacity`) and, for each CUDA device, its pinned
    rows (:func:`pinned_sampling`), from one filling of its buffers; ``threads``: PyTorch's
    CPU threads to time with (None: as they are)."""
    if threads is not None:
        torch.set_num_threads(threads)
    filled = filled_buffers(capacity, seed)
    rows = measure_capacity(capacity, batch_size, devices, repeats, seed, filled)
    tensor = filled[0]["tensor"]
    pinned = [
        row
        for device in devices
        if device.type == "cuda"
        for row in pinned_sampling(capacity, batch_size, device, repeats, seed, tensor)
    ]
    return rows, pinned


def _send_one_capacity(sender: Connection, arguments: tuple[Any, ...]) -> None:
    """A worker's whole life: :func:`one_capacity` of ``arguments``, sent back (or its error)."""
    from hetero_tutorial.core.processes import die_with_parent

    die_with_parent()  # a parent killed outright takes the worker with it
    try:
        sender.send(one_capacity(*arguments))
    except Exception as error:  # the caller raises it, with the worker's own message
        sender.send(error)


def in_own_process(
    arguments: tuple[Any, ...],
) -> tuple[list[SamplingRow], list[PinnedRow]]:
    """:func:`one_capacity` of ``arguments`` in a fresh Python process (spawned: a new
    interpreter, no copy of this one's heap), its rows sent back through a pipe. A worker
    that dies raises here instead of leaving the caller waiting; leaving this function, by
    an error or a Ctrl-C, ends the worker."""
    spawn = multiprocessing.get_context("spawn")
    receiver, sender = spawn.Pipe(duplex=False)
    worker = spawn.Process(target=_send_one_capacity, args=(sender, arguments), daemon=True)
    worker.start()
    sender.close()  # the worker holds the only sending end: its exit reads as an end of file
    try:
        wait([receiver, worker.sentinel])
        try:
            found = receiver.recv()
        except EOFError:
            worker.join()
            raise RuntimeError(
                f"the buffer study's process for {arguments[0]:,} transitions ended (exit code "
                f"{worker.exitcode}) before it sent its rows: out of memory? try smaller "
                "capacities"
            ) from None
    finally:
        if worker.is_alive():
            worker.kill()
        worker.join()
        receiver.close()
    if isinstance(found, Exception):
        raise found
    return found


@guarded("the buffer sampling study")
def time_designs(
    capacities: Sequence[int],
    batch_size: int,
    devices: Sequence[torch.device],
    repeats: int = 15,
    seed: int = 0,
    fresh_process: bool = True,
) -> BufferStudy:
    """Every design at every capacity and device, and, for each CUDA device, the pinned path
    (:class:`BufferStudy`).

    Each capacity is measured in a fresh Python process (``fresh_process``; False: in this
    one, as a test that replaces the timed functions needs). In one process the figures
    depend on what it allocated before: after the smaller capacities' buffers were filled
    and freed, the largest's batches gathered several times slower than in a process of
    their own, and the smaller ones slowed instead when measured after the largest (the C
    library's allocator places large blocks differently once large blocks were freed). A
    rate of one capacity must not depend on which others ran first.
    """
    cuda = [device for device in devices if device.type == "cuda"]
    rows, pinned = [], []
    run = in_own_process if fresh_process else lambda arguments: one_capacity(*arguments)
    for capacity in capacities:
        found = run((capacity, batch_size, list(devices), repeats, seed, torch.get_num_threads()))
        rows += found[0]
        pinned += found[1]
    return BufferStudy(
        batch_size=batch_size,
        designs=list(DESIGNS),
        rows=rows,
        pinned_rows=pinned,
        pinned_note=None if cuda else NO_PINNED_PATH,
    )


class _Gathers:
    """Batches of rows of one bare table: random rows, or contiguous rows at a random start,
    cycling through pre-drawn indices so that drawing them is not timed."""

    def __init__(self, capacity: int, batch_size: int, rng: np.random.Generator) -> None:
        self.table = torch.rand(capacity, 10)
        self.indices = torch.from_numpy(rng.integers(0, capacity, size=(64, batch_size)))
        self.starts = rng.integers(0, capacity - batch_size, size=64).tolist()
        self.batch_size, self.turn = batch_size, 0

    def random(self) -> torch.Tensor:
        self.turn = (self.turn + 1) % len(self.starts)
        return self.table[self.indices[self.turn]]

    def contiguous(self) -> torch.Tensor:
        self.turn = (self.turn + 1) % len(self.starts)
        start = self.starts[self.turn]
        return self.table[start : start + self.batch_size].clone()  # a copy, as a gather makes


def row_gathers(
    capacities: Sequence[int], batch_size: int, repeats: int = 15, seed: int = 0
) -> list[GatherRow]:
    """Why sampling slows as a buffer grows, without any buffer: one row per capacity, the
    seconds to gather ``batch_size`` random rows of a bare ``(capacity, 10)`` float32 table
    (``random_s``, each repeat in ``random_samples``) and ``batch_size`` contiguous rows at a
    random start (``contiguous_s``, ``contiguous_samples``). Every capacity's two gathers are
    timed interleaved in one run, so repeat ``i`` of every row pairs up. If only the random
    gather slows with the table's size, the cost is memory: random rows of a large table miss
    the CPU's caches, whatever structure holds them."""
    rng = np.random.default_rng(seed)
    tables = {capacity: _Gathers(capacity, batch_size, rng) for capacity in capacities}
    candidates: dict[str, Callable[[], object]] = {}
    for capacity, gathers in tables.items():
        candidates[f"random {capacity}"] = gathers.random
        candidates[f"contiguous {capacity}"] = gathers.contiguous
    timings = compare(candidates, repeats=repeats, inner=20)
    return [
        GatherRow(
            capacity=capacity,
            table_bytes=gathers.table.nbytes,
            random_s=timings[f"random {capacity}"].median,
            contiguous_s=timings[f"contiguous {capacity}"].median,
            random_samples=list(timings[f"random {capacity}"].samples),
            contiguous_samples=list(timings[f"contiguous {capacity}"].samples),
        )
        for capacity, gathers in tables.items()
    ]
