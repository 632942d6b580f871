"""The replay buffer study: sampling and add throughput, memory, batch correlation (C8).

For each capacity, the three designs of :mod:`hetero_tutorial.rl.buffers` are filled
with the same Pendulum-shaped transitions (3 observation features, 1 action) and
then measured in one run, interleaved (:func:`hetero_tutorial.core.timing.compare`), in a
Python process of its own (:func:`measure` says why):

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

DDPG itself is trained with each design side by side (:func:`train_designs`, a
``bench.ddpg`` record per design), summarised over its seeds by :func:`summarise`;
:func:`time_ratio` compares two designs' runs seed by seed, only where they ran the same
settings and seeds (:func:`unpaired_reason`).
"""

from __future__ import annotations

import multiprocessing
import statistics
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import replace
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np
import torch

from hetero_tutorial.core.compiled import compile_switches
from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.machine_load import guarded
from hetero_tutorial.core.placement import Placement, as_placement
from hetero_tutorial.core.timing import Spread, compare
from hetero_tutorial.core.transfers import CopyCounter
from hetero_tutorial.rl.buffers import (
    DESIGNS,
    Batch,
    ReplayBuffer,
    TensorReplayBuffer,
    make_buffer,
    raw_bytes_per_transition,
)
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ddpg.runs import DDPGResult, interleave
from hetero_tutorial.rl.ddpg.trainer import DDPGTrainer

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
) -> list[dict[str, Any]]:
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


def pinned_sampling(
    capacity: int,
    batch_size: int,
    device: torch.device,
    repeats: int = 15,
    seed: int = 0,
    filled: TensorReplayBuffer | None = None,
) -> list[dict[str, Any]]:
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
        {
            "design": "tensor",
            "pin_memory": pinned,
            "capacity": capacity,
            "batch_size": batch_size,
            "device": str(device),
            "sample_transitions_per_s": batch_size / timings[pinned].median,
            "sample_iqr_s": timings[pinned].iqr,
            "copies_per_batch": copies_per_batch(buffer, batch_size, device),
        }
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
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
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
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
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
def measure(
    capacities: Sequence[int],
    batch_size: int,
    devices: Sequence[torch.device],
    repeats: int = 15,
    seed: int = 0,
    fresh_process: bool = True,
) -> dict[str, Any]:
    """The fields of a ``bench.buffers`` record: every design at every capacity and device,
    and, for each CUDA device, the pinned path (``pinned_rows``; ``pinned_note`` says why
    there are none).

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
    return {
        "batch_size": batch_size,
        "designs": list(DESIGNS),
        "rows": rows,
        "pinned_rows": pinned,
        "pinned_note": None if cuda else NO_PINNED_PATH,
    }


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
) -> list[dict[str, Any]]:
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
        {
            "capacity": capacity,
            "table_bytes": gathers.table.nbytes,
            "random_s": timings[f"random {capacity}"].median,
            "contiguous_s": timings[f"contiguous {capacity}"].median,
            "random_samples": list(timings[f"random {capacity}"].samples),
            "contiguous_samples": list(timings[f"contiguous {capacity}"].samples),
        }
        for capacity, gathers in tables.items()
    ]


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


@guarded("the DDPG buffer race")
def train_designs(
    config: DDPGConfig,
    designs: Sequence[str] = DESIGNS,
    placement: Placement | str = "all-cpu",
    seed: int = 0,
    *,
    threads: int | None = 1,
    eval_episodes: int = 10,
    chunk_steps: int = 200,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, DDPGResult]:
    """DDPG with ``config`` and each buffer design, interleaved ``chunk_steps`` at a time, as
    :func:`~hetero_tutorial.rl.ddpg.runs.train_side_by_side` runs placements: a slow minute
    of the machine costs every design alike. Results keyed by design."""
    placement = as_placement(placement)
    trainers = {
        design: DDPGTrainer(replace(config, buffer=design), placement, seed, threads=threads)
        for design in designs
    }
    return interleave(
        trainers, eval_episodes=eval_episodes, chunk_steps=chunk_steps, progress=progress
    )


@guarded("the DDPG buffer race")
def train_seeds(
    config: DDPGConfig,
    seeds: Sequence[int],
    runs: dict[str, list[DDPGResult]],
    *,
    threads: int | None = 1,
    eval_episodes: int = 10,
    follow: Callable[[], Callable[[int, int], None]] | None = None,
) -> dict[str, dict[str, Any]]:
    """:func:`train_designs` for each of ``seeds`` in turn, each result appended to ``runs``
    (per design), so a notebook can spread its seeds over cells that each show a result.
    Returns :func:`summarise` of every run in ``runs`` so far, per design. ``follow``: makes
    one progress callback per seed (``Progress.follow``)."""
    for seed in seeds:
        together = train_designs(
            config,
            list(runs),
            seed=seed,
            threads=threads,
            eval_episodes=eval_episodes,
            progress=follow() if follow is not None else None,
        )
        for design, result in together.items():
            runs[design].append(result)
    return {design: summarise(found) for design, found in runs.items() if found}


def summarise(results: Sequence[DDPGResult]) -> dict[str, Any]:
    """The fields of a ``bench.ddpg`` record: runs of one configuration over several seeds."""
    return summarise_fields([r.fields() for r in results])


def summarise_fields(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """:func:`summarise` from the runs' record fields (as separate processes write them)."""
    eval_means = [run["eval_return_mean"] for run in runs]
    return {
        "buffer": runs[0]["config"]["buffer"],
        "placement": runs[0]["placement"],
        "seeds": [run_settings(run)[0] for run in runs],
        "env_steps_per_s": statistics.median(run["env_steps_per_s"] for run in runs),
        "seconds_per_episode": statistics.median(run["seconds_per_episode"] for run in runs),
        "copies_per_1000_samples": statistics.median(
            run["copies_per_1000_samples"] for run in runs
        ),
        "eval_return_mean": statistics.mean(eval_means),
        "eval_return_by_seed": eval_means,
        "eval_return_spread": max(eval_means) - min(eval_means),
        "runs": list(runs),
    }


def run_settings(run: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """``(seed, settings)`` of one DDPG run's record fields; the settings are everything that
    shaped the run (config, placement, threads) but its buffer design and its seed.

    Records written while ``DDPGConfig`` held the seed, the placement and the threads keep
    them in ``config``; newer ones beside it, as PPO's do. Both read the same here.
    """
    settings = dict(run["config"])
    if isinstance(settings.get("compile"), str):
        # Records written while DDPGConfig's compile was a mode ("eager", "compile",
        # "cudagraphs") read as the two switches that replaced it, so that an older run
        # pairs with a newer one of the same settings. The records stay as measured.
        settings |= compile_switches(settings["compile"])
    if "seed" in settings:
        seed = settings.pop("seed")
    else:
        seed = run["seed"]
        settings |= {"placement": run["placement"], "threads": run["threads"]}
    settings.pop("buffer", None)
    return seed, settings


def unpaired_reason(top: dict[str, Any], bottom: dict[str, Any]) -> str | None:
    """Why two ``bench.ddpg`` records' runs cannot be paired seed by seed; None when they can.

    A paired ratio means something only when the two ran the same seeds, in the same
    order, with the same settings apart from the buffer: otherwise it compares other
    workloads (another step count, width or placement), not two buffer designs.
    """
    runs = top.get("runs", []), bottom.get("runs", [])
    read = [[run_settings(run) for run in side] for side in runs]
    seeds = [[seed for seed, _ in side] for side in read]
    if not seeds[0] or seeds[0] != seeds[1]:
        return f"the two ran different seeds ({seeds[0]} and {seeds[1]}), so none pair up"
    differ = sorted({
        key
        for (_, a), (_, b) in zip(*read, strict=True)
        for key in a.keys() | b.keys()
        if a.get(key) != b.get(key)
    })  # fmt: skip
    if differ:
        return f"the two ran different settings besides the buffer ({', '.join(differ)})"
    return None


def time_ratio(top: dict[str, Any], bottom: dict[str, Any]) -> tuple[Spread, str]:
    """``top``'s time per episode over ``bottom``'s (two ``bench.ddpg`` records' fields, whose
    seeds ran side by side), spread by their seeds; where no whole episode ran with updates
    (a short run), the inverse ratio of their speeds per step. Returns the spread and what
    it is per (``"per episode"`` or ``"per step"``). Raises :class:`UsageError` when the two
    cannot be paired (:func:`unpaired_reason`)."""
    reason = unpaired_reason(top, bottom)
    if reason is not None:
        raise UsageError(f"cannot compare these DDPG runs: {reason}; run both designs together")
    value = top["seconds_per_episode"] / bottom["seconds_per_episode"]
    if np.isfinite(value):
        runs = [[run["seconds_per_episode"] for run in r["runs"]] for r in (top, bottom)]
        return Spread.of_pairs(*runs, value=value, per="seed"), "per episode"
    value = bottom["env_steps_per_s"] / top["env_steps_per_s"]
    runs = [[run["env_steps_per_s"] for run in r["runs"]] for r in (bottom, top)]
    per = "per step (no whole episode ran with updates)"
    return Spread.of_pairs(*runs, value=value, per="seed"), per
