"""Replay buffers: three ways to store transitions and hand a batch of them to the learner.

All three share one interface (:class:`ReplayBuffer`): ``add`` one transition as the
environment returns it, ``sample(batch_size, device)`` a :class:`Batch` of exactly
``batch_size`` transitions on ``device``, ``len`` and ``capacity`` (both in
transitions). They differ in how they store and move the data:

* :class:`TransitionReplayBuffer` (the article's pattern A): a Python list of
  per-transition tuples; sampling picks ``batch_size`` tuples and stacks each field
  item by item, then copies each field to the device (one copy per field).
* :class:`TrajectoryReplayBuffer` (pattern B): segments of consecutive transitions
  stored and moved as units; sampling concatenates whole segments, so it touches
  ~``batch_size / segment_length`` Python objects instead of ``batch_size``, but the
  transitions of a batch come in runs of neighbouring time steps (correlated).
* :class:`TensorReplayBuffer`: one preallocated ``(capacity, fields)`` tensor on the
  storage device, filled as a ring; sampling gathers the rows in one operation and
  copies the batch in one copy. No per-sample Python. Its random draws come from one
  CPU generator whatever the storage device, so every placement samples the same rows.

The Python-container designs hold NumPy arrays, as gymnasium returns them (the
article's code called ``torch.stack`` on NumPy arrays, which fails; we stack with
NumPy and make one tensor per field).

``terminated`` (a terminal state: do not bootstrap) and ``truncated`` (a time limit:
do bootstrap) are stored separately; DDPG bootstraps on truncation.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections import deque
from typing import Any, NamedTuple

import numpy as np
import torch

from hetero_tutorial.core.devices import accelerator, resolve_device
from hetero_tutorial.core.errors import UsageError

DESIGNS = ("transition", "trajectory", "tensor")
"""The three buffer designs, by the name the benchmarks and the DDPG config use."""


class Transition(NamedTuple):
    """One validated transition, as the Python-container designs store it (host NumPy)."""

    obs: np.ndarray  # (obs_dim,) float32
    action: np.ndarray  # (action_dim,) float32
    reward: float
    next_obs: np.ndarray  # (obs_dim,) float32
    terminated: bool
    truncated: bool


class Batch(NamedTuple):
    """A batch of transitions on one device; every field is float32 with batch size B first."""

    obs: torch.Tensor  # (B, obs_dim)
    action: torch.Tensor  # (B, action_dim)
    reward: torch.Tensor  # (B,)
    next_obs: torch.Tensor  # (B, obs_dim)
    terminated: torch.Tensor  # (B,) 1.0 where the episode reached a terminal state
    truncated: torch.Tensor  # (B,) 1.0 where the episode was cut by a time limit


def raw_bytes_per_transition(obs_dim: int, action_dim: int) -> int:
    """Bytes of one transition's fields with no container: float32 vectors and reward, two bools."""
    return 4 * (2 * obs_dim + action_dim + 1) + 2


def _vector(value: Any, dim: int, name: str, what: str) -> np.ndarray:
    try:
        array = np.array(value, dtype=np.float32)  # a copy: the caller may reuse its array
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be an array of numbers, got {value!r}") from None
    if array.shape != (dim,):
        raise UsageError(
            f"{name} has shape {array.shape}, but this buffer was built for {what} of shape "
            f"({dim},). Add one transition at a time, shaped like the environment's space."
        )
    return array


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise UsageError(
            f"{name} must be a bool, got {type(value).__name__}. Gymnasium's step() returns "
            "terminated and truncated separately; pass both as they come (no combined 'done')."
        )
    return bool(value)


def _check_positive(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise UsageError(f"{name} must be a positive whole number, got {value!r}")
    return int(value)


class ReplayBuffer(ABC):
    """What every design shares: validation of what goes in and of what is asked for."""

    def __init__(self, capacity: int, obs_dim: int, action_dim: int) -> None:
        self.capacity = _check_positive(capacity, "capacity")
        """How many transitions the buffer holds; the oldest are overwritten beyond it."""
        self.obs_dim = _check_positive(obs_dim, "obs_dim")
        self.action_dim = _check_positive(action_dim, "action_dim")
        self._devices: dict[torch.device | str, torch.device] = {}

    @abstractmethod
    def __len__(self) -> int:
        """How many transitions can be sampled now."""

    def add(
        self,
        obs: Any,
        action: Any,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
    ) -> None:
        """Store one transition (arrays or CPU tensors, as ``env.step`` returns them)."""
        try:
            reward = float(reward)
        except (TypeError, ValueError):
            raise UsageError(f"reward must be a number, got {reward!r}") from None
        self._store(
            Transition(
                _vector(obs, self.obs_dim, "obs", "observations"),
                _vector(action, self.action_dim, "action", "actions"),
                reward,
                _vector(next_obs, self.obs_dim, "next_obs", "observations"),
                _flag(terminated, "terminated"),
                _flag(truncated, "truncated"),
            )
        )

    def sample(self, batch_size: int, device: torch.device | str = "cpu") -> Batch:
        """``batch_size`` transitions drawn at random, as float32 tensors on ``device``."""
        batch_size = _check_positive(batch_size, "batch_size")
        if batch_size > len(self):
            raise UsageError(
                f"asked for a batch of {batch_size} but only {len(self)} transitions can be "
                "sampled yet; collect more first (DDPG's learning_starts) or sample fewer."
            )
        return self._sample(batch_size, self._resolve(device))

    def _resolve(self, device: torch.device | str) -> torch.device:
        """``device`` checked by :func:`resolve_device` (a clear error if it is not here;
        ``"meta"`` passes, for counting copies). Remembered per device: sampling asks for
        the same one every step, and resolving costs a microsecond or two.
        """
        if device not in self._devices:
            self._devices[device] = resolve_device(device)
        return self._devices[device]

    @abstractmethod
    def _store(self, transition: Transition) -> None: ...

    @abstractmethod
    def _sample(self, batch_size: int, device: torch.device) -> Batch: ...


def _to_batch(fields: list[np.ndarray], device: torch.device) -> Batch:
    """Host arrays, one per field, to a Batch on ``device``: one copy per field."""
    return Batch(*(torch.from_numpy(field).to(device) for field in fields))


def _stack(items: list[Transition], field: int) -> np.ndarray:
    return np.asarray([item[field] for item in items], dtype=np.float32)


class TransitionReplayBuffer(ReplayBuffer):
    """The article's pattern A: a ring of per-transition tuples in a Python list.

    Sampling draws ``batch_size`` distinct transitions (``random.sample``), builds
    each field by stacking them one by one, and copies each field to the device.
    Every sampled transition costs Python work, so sampling time grows with the
    batch size, and scattered Python objects make a large buffer slower still.
    """

    def __init__(self, capacity: int, obs_dim: int, action_dim: int, seed: int = 0) -> None:
        super().__init__(capacity, obs_dim, action_dim)
        self._items: list[Transition] = []
        self._next = 0
        self._rng = random.Random(seed)

    def __len__(self) -> int:
        return len(self._items)

    def _store(self, transition: Transition) -> None:
        if len(self._items) < self.capacity:
            self._items.append(transition)
        else:
            self._items[self._next] = transition
        self._next = (self._next + 1) % self.capacity

    def _sample(self, batch_size: int, device: torch.device) -> Batch:
        picked = self._rng.sample(self._items, batch_size)
        return _to_batch([_stack(picked, field) for field in range(len(Batch._fields))], device)


class TrajectoryReplayBuffer(ReplayBuffer):
    """The article's pattern B: segments of up to ``segment_length`` consecutive transitions.

    ``add`` collects transitions into an open segment, which is closed (stacked into
    one array per field and stored as a unit) when it reaches ``segment_length`` or
    the episode ends; only closed segments can be sampled. The oldest segments are
    dropped when more than ``capacity`` transitions are stored. The article's
    setting is 1,000 segments of 20 states (``capacity=20_000, segment_length=20``).

    Sampling returns exactly ``batch_size`` transitions, like the other designs: it
    draws whole segments at random (with replacement) until it has enough,
    concatenates them and drops the surplus from the last one. A batch is therefore
    ~``batch_size / segment_length`` runs of neighbouring time steps, whose
    transitions are correlated; pattern A's transitions are drawn independently.
    """

    def __init__(
        self,
        capacity: int,
        obs_dim: int,
        action_dim: int,
        segment_length: int = 20,
        seed: int = 0,
    ) -> None:
        super().__init__(capacity, obs_dim, action_dim)
        self.segment_length = _check_positive(segment_length, "segment_length")
        if self.segment_length > self.capacity:
            raise UsageError(
                f"segment_length ({segment_length}) is larger than the capacity ({capacity}); "
                "a buffer must hold at least one whole segment."
            )
        self._segments: deque[tuple[np.ndarray, ...]] = deque()  # each field: (length, ...)
        self._open: list[Transition] = []
        self._size = 0
        self._rng = random.Random(seed)

    def __len__(self) -> int:
        return self._size

    def _store(self, transition: Transition) -> None:
        self._open.append(transition)
        if len(self._open) == self.segment_length or transition.terminated or transition.truncated:
            self._close_segment()

    def _close_segment(self) -> None:
        segment = tuple(_stack(self._open, field) for field in range(len(Batch._fields)))
        self._segments.append(segment)
        self._size += len(self._open)
        self._open = []
        while self._size > self.capacity:
            self._size -= len(self._segments.popleft()[0])

    def _sample(self, batch_size: int, device: torch.device) -> Batch:
        picked, count = [], 0
        while count < batch_size:
            segment = self._segments[self._rng.randrange(len(self._segments))]
            picked.append(segment)
            count += len(segment[0])
        fields = [
            np.concatenate([segment[field] for segment in picked])[:batch_size]
            for field in range(len(Batch._fields))
        ]
        return _to_batch(fields, device)


DRAWS_PER_COPY = 65_536
"""Random draws the tensor buffer makes and moves to its storage device at a time (512 KiB)."""


class TensorReplayBuffer(ReplayBuffer):
    """A preallocated ring of rows in one float32 tensor on the storage ``device``.

    Each row packs a transition: ``[obs | action | next_obs | reward, terminated,
    truncated]`` (the flags as 0.0/1.0), so ``add`` writes one row and ``sample``
    gathers the rows in one ``index_select`` and moves the batch in one copy; the
    batch's fields are column views of it.

    The row indices come from a CPU generator, as PPO's minibatch orders do: a CUDA
    generator draws another sequence from the same seed, so all-accelerator DDPG
    would learn from other batches than the CPU plans. The draws are made
    :data:`DRAWS_PER_COPY` at a time and copied to the storage device in one copy
    (none for CPU storage); each is an integer in ``[0, 2**62)`` taken modulo the
    number of stored rows, exact integer arithmetic on every device.

    ``pin_memory=True`` (CPU storage feeding a CUDA learner) gathers each batch into
    page-locked memory so that its copy to the accelerator is asynchronous.
    """

    def __init__(
        self,
        capacity: int,
        obs_dim: int,
        action_dim: int,
        device: torch.device | str = "cpu",
        pin_memory: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__(capacity, obs_dim, action_dim)
        self.device = self._resolve(device)
        if pin_memory and (
            self.device.type != "cpu" or getattr(accelerator(), "type", None) != "cuda"
        ):
            raise UsageError(
                "pin_memory=True needs CPU storage and a CUDA GPU to copy to; use "
                "Placement.pin_storage to decide, or leave pin_memory False."
            )
        self.pin_memory = pin_memory
        # Column widths of a row: obs, action, next_obs, then reward and the two flags.
        self._widths = (obs_dim, action_dim, obs_dim, 3)
        self._rows = torch.zeros(
            (capacity, sum(self._widths)), dtype=torch.float32, device=self.device
        )
        self._host_rows = self._rows.numpy() if self.device.type == "cpu" else None  # shares memory
        self._generator = torch.Generator().manual_seed(seed)  # on the CPU, for every device
        self._next = 0
        self._size = 0
        self._draw_more(DRAWS_PER_COPY)

    def __len__(self) -> int:
        return self._size

    def copy_rows_from(self, other: TensorReplayBuffer) -> None:
        """Hold ``other``'s transitions, in its order, in one copy of its storage: a second
        buffer of the same data (pinned, say) without adding a million rows one at a time."""
        if other._rows.shape != self._rows.shape:
            raise UsageError(
                f"copy rows between buffers of one shape; got {tuple(other._rows.shape)} into "
                f"{tuple(self._rows.shape)}"
            )
        self._rows.copy_(other._rows)
        self._next, self._size = other._next, other._size
        self._rows_of_full = False  # the draws were taken as rows of this buffer's old size

    @property
    def nbytes(self) -> int:
        """Bytes of the preallocated storage (the whole capacity, filled or not)."""
        return self._rows.nbytes

    def _store(self, transition: Transition) -> None:
        obs, action, reward, next_obs, terminated, truncated = transition
        fields = (obs, action, next_obs, (reward, terminated, truncated))
        if self._host_rows is not None:  # CPU storage: NumPy writes the row in place
            np.concatenate(fields, out=self._host_rows[self._next])
        else:  # accelerator storage: one host-to-device copy of the row
            self._rows[self._next] = torch.from_numpy(np.concatenate(fields, dtype=np.float32))
        self._next = (self._next + 1) % self.capacity
        self._size = min(self._size + 1, self.capacity)

    def _draw_more(self, count: int) -> None:
        """Draw the next ``count`` random integers on the CPU and move them to the storage."""
        self.draws_cpu = torch.randint(0, 2**62, (count,), generator=self._generator)
        """the current block of draws, as drawn (the same for every storage device)"""
        self._draws = self._draws_as_rows = self.draws_cpu.to(self.device)  # one copy per block
        self._rows_of_full = False  # whether _draws_as_rows holds rows of a full buffer yet
        self._cursor = 0

    def _indices(self, batch_size: int) -> torch.Tensor:
        """The next batch's row indices, on the storage device (see the class docstring).

        Each draw is taken modulo the rows stored when it is used. Once the buffer is full
        that count stays the capacity, so the rest of the block is turned into rows in one
        operation and a batch is a slice of them: the same indices, one operation fewer per
        batch (a tenth of a batch's sampling time here).
        """
        if self._cursor + batch_size > len(self._draws):
            self._draw_more(max(DRAWS_PER_COPY, batch_size))
        start, self._cursor = self._cursor, self._cursor + batch_size
        if self._size < self.capacity:  # still filling: the row count grows with every add
            return self._draws[start : self._cursor] % self._size
        if not self._rows_of_full:
            self._draws_as_rows = self._draws % self.capacity
            self._rows_of_full = True
        return self._draws_as_rows[start : self._cursor]

    def _sample(self, batch_size: int, device: torch.device) -> Batch:
        index = self._indices(batch_size)
        if self.pin_memory:  # gather into page-locked memory, then copy asynchronously
            staging = torch.empty((batch_size, self._rows.shape[1]), pin_memory=True)
            rows = torch.index_select(self._rows, 0, index, out=staging)
        else:
            rows = self._rows.index_select(0, index)
        if device != self.device:
            rows = rows.to(device, non_blocking=self.pin_memory)  # (B, row width): one copy
        obs, action, next_obs, scalars = rows.split(self._widths, dim=1)
        reward, terminated, truncated = scalars.unbind(1)
        return Batch(obs, action, reward, next_obs, terminated, truncated)


def make_buffer(
    design: str,
    capacity: int,
    obs_dim: int,
    action_dim: int,
    *,
    device: torch.device | str = "cpu",
    pin_memory: bool = False,
    segment_length: int = 20,
    seed: int = 0,
) -> ReplayBuffer:
    """A buffer of the named ``design`` (see :data:`DESIGNS`).

    ``device`` and ``pin_memory`` apply to the tensor design (the Python containers
    always live in host memory); ``segment_length`` to the trajectory design.
    """
    if design == "transition":
        return TransitionReplayBuffer(capacity, obs_dim, action_dim, seed=seed)
    if design == "trajectory":
        return TrajectoryReplayBuffer(capacity, obs_dim, action_dim, segment_length, seed=seed)
    if design == "tensor":
        return TensorReplayBuffer(capacity, obs_dim, action_dim, device, pin_memory, seed=seed)
    raise UsageError(f"unknown buffer design {design!r}; choose one of {', '.join(DESIGNS)}")
