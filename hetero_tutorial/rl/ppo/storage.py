"""Step 3 of PPO: the rollout's storage, preallocated once and filled in place.

The collector writes it, the advantages are computed in it, and the *transfer* phase
copies it to the update device in one batched copy per tensor (:meth:`RolloutStorage.flat_batch`,
``non_blocking`` from pinned memory where it feeds CUDA: the hybrid placement's one big copy).
"""

from __future__ import annotations

import numpy as np
import torch

from hetero_tutorial.rl.envs.spec import EnvSpec

SCALARS = ("logprobs", "values", "rewards", "dones", "advantages", "returns")
"""The float32 numbers stored per transition beside its observation and action."""


class RolloutStorage:
    """A whole rollout, preallocated once on the storage device and filled in place.

    Vector observations, actions and the :data:`SCALARS` share one (T, N, F) float32
    tensor, ``data``: the hybrid plan's transfer is then a single copy and a minibatch
    a single gather. Image observations keep their own dtype (uint8 frames are a
    quarter of their float32 size) in a second tensor, ``frames``. The named
    attributes (``obs``, ``actions``, ``logprobs``, ...) are views into them.
    """

    def __init__(
        self, num_steps: int, num_envs: int, spec: EnvSpec, device: torch.device, pin: bool
    ) -> None:
        shape = (num_steps, num_envs)
        packed = spec.obs_dtype == np.float32 and len(spec.obs_shape) == 1
        widths = {"obs": spec.obs_dim} if packed else {}
        widths |= {"actions": 1 if spec.discrete else spec.action_dim} | dict.fromkeys(SCALARS, 1)
        self.columns: dict[str, slice] = {}
        start = 0
        for name, width in widths.items():
            self.columns[name] = slice(start, start + width)
            start += width
        tensors = [torch.zeros(*shape, start)]
        if not packed:
            dtype = torch.from_numpy(np.zeros(0, spec.obs_dtype)).dtype
            tensors.append(torch.zeros(*shape, *spec.obs_shape, dtype=dtype))
        self.tensors = [t.pin_memory() if pin else t.to(device) for t in tensors]
        """``[data]``, or ``[data, frames]`` for image observations."""
        self.data = self.tensors[0]
        for name, view in self.views(self.tensors).items():
            setattr(self, name, view)
        self._copied_out: torch.cuda.Event | None = None
        """marks the end of the last non-blocking copy out to CUDA (see flat_batch)"""

    def views(self, tensors: list[torch.Tensor]) -> dict[str, torch.Tensor]:
        """Named views of tensors laid out like this storage's, (T, N, ...) or (B, ...).

        Vector fields (obs, actions) keep their last dimension; scalar fields drop it.
        """
        data = tensors[0]
        found = {"obs": tensors[1]} if len(tensors) > 1 else {}
        for name, cols in self.columns.items():
            found[name] = data[..., cols] if name in ("obs", "actions") else data[..., cols.start]
        return found

    def flat_batch(self, device: torch.device, non_blocking: bool) -> list[torch.Tensor]:
        """The rollout as (T * N, ...) tensors on ``device``: one copy per stored tensor.

        A ``non_blocking`` copy out of pinned memory may still be reading it when this
        returns; :meth:`wait_for_copy_out` holds the next write back until it is done.
        """
        batch = [t.flatten(0, 1).to(device, non_blocking=non_blocking) for t in self.tensors]
        if non_blocking and device.type == "cuda":
            # blocking: a wait on it sleeps in the driver; a default event's wait spins a
            # core at 100%, and that spinning would count as the learner's CPU share
            self._copied_out = torch.cuda.Event(blocking=True)
            self._copied_out.record(torch.cuda.current_stream(device))
        return batch

    def wait_for_copy_out(self) -> None:
        """Before writing: wait for the last non-blocking copy out to have read the storage.

        A no-op when there was none (the CPU, or storage on the update device), and
        usually free: a phase timer has synchronised the device already.
        """
        if self._copied_out is not None:
            self._copied_out.synchronize()
            self._copied_out = None
