"""A PPO-shaped iteration with Nature-CNN networks on Atari frames: the allocator's CNN workload.

This is a **workload model, not a full Atari PPO**. It does the work of a PPO
iteration, in the same order, on the devices a placement names, with the real
data sizes (uint8 frame stacks of 4 x 84 x 84), so that its seconds per
iteration judge placements fairly:

* **rollout**: ``num_steps`` times, the frames go to the rollout device, the
  actor samples actions, the results are stored, the actions come back and the
  environments step;
* **advantages**: GAE over the rollout, on the storage device;
* **transfer**: the frames and scalars copied to the update device (from pinned
  memory, ``non_blocking``, when that is a CUDA device);
* **update**: ``update_epochs`` passes of minibatch gradient steps of
  :func:`~hetero_tutorial.allocator.allocator.ppo_shaped_loss`;
* **weight sync**: the learner's weights copied to the rollout's copy.

It leaves out what does not depend on the placement (advantage normalisation,
value clipping, a learning-rate schedule, episode statistics) and makes no claim
about how well it learns.

Frames come from a real Atari game through ale-py's vector environment (the
DQN preprocessing: grey, 84 x 84, 4 stacked, frame skip 4) when ale-py is
installed (``pip install -e ".[atari]"``); otherwise from random uint8 frames,
which are labelled synthetic wherever they are reported.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from hetero_tutorial.allocator.allocator import Workload, ppo_shaped_loss
from hetero_tutorial.core.devices import synchronize
from hetero_tutorial.core.errors import UsageError, require_minibatch_fits, require_positive
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import Timing
from hetero_tutorial.rl.nets import DiscreteActorCritic, NatureCNN
from hetero_tutorial.rl.ppo import gae, place_policy
from hetero_tutorial.studies.sweeps import interleaved_costs

FRAME_SOURCES = ("auto", "atari", "synthetic")
COLUMNS = ("action", "logprob", "value", "reward", "done", "advantage", "return")
"""The float32 scalars stored per transition, in this order, beside the uint8 frames."""


@dataclass
class CNNConfig:
    """The CNN workload's knobs. The defaults make an iteration a laptop CPU runs in seconds.

    (CleanRL's Atari PPO uses 8 environments x 128 steps and 4 epochs of
    256-transition minibatches: the same work per step, a longer iteration.)
    """

    game: str = "breakout"
    """the Atari game, as ale-py names its ROM"""
    frames: str = "auto"
    """where frames come from: "atari", "synthetic", or "auto" (Atari when ale-py is installed)"""
    num_envs: int = 8
    """environments stepped together"""
    num_steps: int = 32
    """steps per environment in each rollout"""
    minibatch_size: int = 64
    """transitions per gradient step"""
    update_epochs: int = 2
    """passes over each rollout"""
    hidden: int = 512
    """width of the fully connected layer of each Nature CNN (512 in the DQN paper)"""
    channels: int = 32
    """channels of the first convolution (the next two have twice as many)"""
    learning_rate: float = 2.5e-4
    """Adam's learning rate"""
    gamma: float = 0.99
    """the discount factor"""
    gae_lambda: float = 0.95
    """lambda of generalised advantage estimation"""

    @property
    def batch_size(self) -> int:
        """Transitions per rollout."""
        return self.num_envs * self.num_steps

    @property
    def gradient_steps(self) -> int:
        """Gradient steps per iteration."""
        return self.update_epochs * (self.batch_size // self.minibatch_size)

    def validate(self) -> None:
        """Raise a clear error for settings that cannot work."""
        if self.frames not in FRAME_SOURCES:
            raise UsageError(
                f"frames must be one of {', '.join(FRAME_SOURCES)}; got {self.frames!r}"
            )
        names = ("num_envs", "num_steps", "minibatch_size", "update_epochs", "hidden")
        require_positive(**{name: getattr(self, name) for name in names})
        require_minibatch_fits(self.minibatch_size, self.num_envs, self.num_steps)


class CNNActorCritic(DiscreteActorCritic):
    """A Nature-CNN actor and a Nature-CNN critic on frames, sampling as DiscreteActorCritic does.

    Like the series' MLP actor-critics, actor and critic are separate networks.
    Only :meth:`forward` differs: sampling, log-probabilities and entropy are inherited.
    """

    def __init__(self, num_actions: int, hidden: int = 512, channels: int = 32) -> None:
        nn.Module.__init__(self)  # the parent's constructor would build MLPs; these are CNNs
        self.noise_dim = num_actions
        self.actor = NatureCNN(num_actions, hidden, channels)
        self.critic = NatureCNN(1, hidden, channels)

    def forward(self, frames: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(log-probabilities (B, num_actions), value (B,))``."""
        return torch.log_softmax(self.actor(frames), dim=-1), self.critic(frames)[:, 0]


class SyntheticFrames:
    """Random uint8 frame stacks from ``num_envs`` stand-in environments: Atari's shapes only.

    Steps cost almost nothing, so an iteration with them times the networks and
    the copies alone. Rewards are zero and episodes never end.
    """

    label = "synthetic"

    def __init__(self, num_envs: int, num_actions: int = 4) -> None:
        self.num_envs = num_envs
        self.single_observation_space = gym.spaces.Box(0, 255, NatureCNN.FRAME_SHAPE, np.uint8)
        self.single_action_space = gym.spaces.Discrete(num_actions)
        self.rng = np.random.default_rng()

    def _frames(self) -> np.ndarray:
        return self.rng.integers(0, 256, (self.num_envs, *NatureCNN.FRAME_SHAPE), dtype=np.uint8)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.rng = np.random.default_rng(seed)
        return self._frames(), {}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        none = np.zeros(self.num_envs, dtype=bool)
        return self._frames(), np.zeros(self.num_envs), none, none, {}

    def close(self) -> None:
        """Nothing to release."""


def atari_available() -> bool:
    """Whether ale-py (the Atari emulator, with its bundled ROMs) is installed."""
    return importlib.util.find_spec("ale_py") is not None


def make_frames(config: CNNConfig, num_envs: int | None = None) -> Any:
    """The frame source ``config`` asks for; its ``label`` says which (``"atari:<game>"``...)."""
    use_atari = config.frames == "atari" or (config.frames == "auto" and atari_available())
    num_envs = num_envs or config.num_envs
    if not use_atari:
        return SyntheticFrames(num_envs)
    if not atari_available():
        raise UsageError(
            'frames="atari" needs ale-py: pip install -e ".[atari]" (or use frames="synthetic")'
        )
    from ale_py.vector_env import AtariVectorEnv

    try:
        envs = AtariVectorEnv(config.game, num_envs, num_threads=1)  # stepped in one thread
    except Exception as error:  # ale-py reports an unknown ROM in several ways
        raise UsageError(f"ale-py could not start {config.game!r}: {error}") from None
    envs.label = f"atari:{config.game}"
    return envs


def workload(config: CNNConfig, name: str | None = None) -> Workload:
    """The CNN workload, as the allocator sees it."""
    config.validate()
    probe = make_frames(config, num_envs=1)
    observation_space, action_space = probe.single_observation_space, probe.single_action_space
    probe.close()
    return Workload(
        CNNActorCritic(int(action_space.n), config.hidden, config.channels),
        observation_space,
        action_space,
        num_envs=config.num_envs,
        num_steps=config.num_steps,
        minibatch_size=config.minibatch_size,
        gradient_steps=config.gradient_steps,
        name=name or f"cnn-{config.hidden}",
    )


class CNNTrainer:
    """One CNN workload's state under a placement, advanced one timed iteration at a time."""

    def __init__(self, config: CNNConfig, placement: Placement, seed: int = 0) -> None:
        config.validate()
        self.config, self.placement = config, placement
        self.envs = make_frames(config)
        self.obs, _ = self.envs.reset(seed=seed)
        torch.manual_seed(seed)
        self.rng = torch.Generator().manual_seed(seed)  # every random draw, on the CPU
        num_actions = int(self.envs.single_action_space.n)
        self.learner, self.rollout_policy, self.learner_flat, self.rollout_flat = place_policy(
            CNNActorCritic(num_actions, config.hidden, config.channels), placement
        )
        self.optimizer = self.learner_flat.adam(lr=config.learning_rate, eps=1e-5)
        shape = (config.num_steps, config.num_envs)
        frames = torch.zeros((*shape, *NatureCNN.FRAME_SHAPE), dtype=torch.uint8)
        scalars = torch.zeros((*shape, len(COLUMNS)))
        if placement.pin_storage:
            self.frames, self.scalars = frames.pin_memory(), scalars.pin_memory()
        else:
            self.frames, self.scalars = frames.to(placement.storage), scalars.to(placement.storage)
        self.rewards_dones_cpu = np.zeros((*shape, 2), dtype=np.float32)
        self.iteration_seconds: list[float] = []

    @property
    def frames_label(self) -> str:
        return self.envs.label

    def column(self, name: str) -> torch.Tensor:
        """The (T, N) view of one stored scalar."""
        return self.scalars[..., COLUMNS.index(name)]

    def step(self) -> None:
        """Run one iteration and record its wall time (all devices synchronised at the end)."""
        began = time.perf_counter()
        self.iteration()
        for device in self.placement.devices:
            synchronize(device)
        self.iteration_seconds.append(time.perf_counter() - began)

    def iteration(self) -> None:
        """Rollout, transfer, update, weight sync.

        The ``non_blocking`` copy from pinned storage may still be running when this
        returns; the next rollout cannot overwrite the storage under it: the weight
        sync's copy back to the CPU (rollout on the CPU) or the rollout's first copy
        into CPU storage (rollout on the accelerator) waits for it on the same stream.
        """
        self.rollout()
        pinned = self.placement.pin_storage
        frames_update = self.frames.flatten(0, 1).to(self.placement.update, non_blocking=pinned)
        scalars_update = self.scalars.flatten(0, 1).to(self.placement.update, non_blocking=pinned)
        self.update(frames_update, scalars_update)
        if self.rollout_policy is not self.learner:
            self.rollout_flat.copy_from(self.learner_flat)

    def rollout(self) -> None:
        """Step the environments ``num_steps`` times, filling storage, then compute advantages."""
        device, storage, c = self.placement.rollout, self.placement.storage, self.config
        noise = self.rollout_policy.sample_noise((c.num_steps, c.num_envs), self.rng).to(device)
        for t in range(c.num_steps):
            with torch.inference_mode():
                obs = torch.from_numpy(self.obs).to(device)  # copy 1 of 2 on an accelerator
                action, logprob, value = self.rollout_policy.act(obs, noise[t])
                self.frames[t] = obs
                self.scalars[t, :, :3] = torch.stack([action[:, 0], logprob, value], dim=-1)
                action_cpu = action[:, 0].long().cpu().numpy()  # copy 2 of 2 on an accelerator
            self.obs, reward, terminated, truncated, _ = self.envs.step(action_cpu)
            self.rewards_dones_cpu[t, :, 0] = reward
            self.rewards_dones_cpu[t, :, 1] = terminated | truncated
        with torch.inference_mode():
            rewards_dones = torch.from_numpy(self.rewards_dones_cpu).to(storage)
            self.scalars[..., COLUMNS.index("reward") : COLUMNS.index("done") + 1] = rewards_dones
            last_value = self.rollout_policy.value(torch.from_numpy(self.obs).to(device))
            self._advantages(last_value.to(storage))

    def _advantages(self, last_value: torch.Tensor) -> None:
        c = self.config
        names = ("reward", "value", "done")
        arrays = (*(self.column(name) for name in names), last_value, self.column("advantage"))
        if self.scalars.device.type == "cpu":
            arrays = tuple(array.numpy() for array in arrays)  # NumPy runs this loop faster
        gae(*arrays[:4], c.gamma, c.gae_lambda, out=arrays[4])
        self.column("return").copy_(self.column("advantage") + self.column("value"))

    def update(self, frames: torch.Tensor, scalars: torch.Tensor) -> None:
        """``update_epochs`` passes of minibatch steps; ``frames``: (B, 4, 84, 84) uint8."""
        c, device = self.config, frames.device
        columns = {name: scalars[:, i] for i, name in enumerate(COLUMNS)}
        for _ in range(c.update_epochs):
            order = torch.randperm(len(frames), generator=self.rng).to(device)
            for start in range(0, len(frames) - c.minibatch_size + 1, c.minibatch_size):
                index = order[start : start + c.minibatch_size]
                loss = ppo_shaped_loss(
                    self.learner,
                    frames[index],
                    columns["action"][index, None],
                    columns["logprob"][index],
                    columns["advantage"][index],
                    columns["return"][index],
                )
                self.learner_flat.zero_grad()
                loss.backward()
                self.learner_flat.clip_grad_norm_(0.5)
                self.optimizer.step()

    def close(self) -> None:
        self.envs.close()


def iteration_costs(
    config: CNNConfig,
    placements: Sequence[Placement],
    iterations: int = 3,
    warmup: int = 1,
    seed: int = 0,
    threads: int | None = None,
) -> dict[str, Timing]:
    """Seconds of each of ``iterations`` CNN iterations per placement, interleaved after ``warmup``.

    The CNN counterpart of :func:`hetero_tutorial.studies.sweeps.iteration_costs`.
    """
    return interleaved_costs(
        lambda plan: CNNTrainer(config, plan, seed), placements, iterations, warmup, threads
    )


def frames_label(config: CNNConfig) -> str:
    """What the frames of a run with ``config`` will be: ``"atari:<game>"`` or ``"synthetic"``."""
    source = make_frames(config, num_envs=1)
    source.close()
    return source.label
