"""Replay buffer designs side by side: sampling and add throughput, memory, batch correlation (C8).

For each capacity, the three designs of :mod:`hetero_tutorial.rl.buffers` are filled
with the same Pendulum-shaped transitions (3 observation features, 1 action) and
then measured in one run, interleaved (:func:`hetero_tutorial.core.timing.compare`):

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

The synthetic transitions carry their step number in ``obs[0]``, so a batch tells
which time steps it holds.
"""

from __future__ import annotations

import argparse
import tracemalloc
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from hetero_tutorial.core.devices import accelerator, resolve_device
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


def measure_capacity(
    capacity: int,
    batch_size: int,
    devices: Sequence[torch.device],
    repeats: int = 15,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per design x device for buffers of ``capacity`` transitions (see module doc)."""
    data = SyntheticTransitions(capacity, seed)
    buffers = {d: make_buffer(d, capacity, OBS_DIM, ACTION_DIM, seed=seed) for d in DESIGNS}
    memory = {design: fill(buffer, data) for design, buffer in buffers.items()}
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
                {
                    "design": design,
                    "capacity": capacity,
                    "batch_size": batch_size,
                    "device": str(device),
                    "sample_transitions_per_s": batch_size / sample_timings[design].median,
                    "sample_iqr_s": sample_timings[design].iqr,
                    "add_transitions_per_s": adds_per_call / add_timings[design].median,
                    "bytes_per_transition": memory[design],
                    "raw_bytes_per_transition": raw_bytes_per_transition(OBS_DIM, ACTION_DIM),
                    "neighbour_fraction": float(
                        np.mean([neighbour_fraction(buffer.sample(batch_size)) for _ in range(20)])
                    ),
                    "copies_per_batch": copies_per_batch(buffer, batch_size, device),
                }
            )
    return rows


def default_devices() -> list[torch.device]:
    """The CPU, and the accelerator when there is one."""
    found = accelerator()
    return [torch.device("cpu")] + ([found] if found is not None else [])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--capacities",
        type=int,
        nargs="+",
        default=[10_000, 100_000, 1_000_000],
        help="buffer capacities in transitions (default 1e4 1e5 1e6; 1e6 takes minutes)",
    )
    parser.add_argument("--batch-size", type=int, default=256, help="transitions per batch")
    parser.add_argument(
        "--devices",
        nargs="+",
        default=None,
        help="devices to sample to (default: cpu, and the accelerator if there is one)",
    )
    parser.add_argument("--repeats", type=int, default=15, help="interleaved timing repeats")
    parser.add_argument("--seed", type=int, default=0, help="seeds the data and the sampling")


def run(args: argparse.Namespace) -> dict[str, Any]:
    devices = [resolve_device(d) for d in args.devices] if args.devices else default_devices()
    rows = [
        row
        for capacity in args.capacities
        for row in measure_capacity(capacity, args.batch_size, devices, args.repeats, args.seed)
    ]
    return {"batch_size": args.batch_size, "designs": list(DESIGNS), "rows": rows}
