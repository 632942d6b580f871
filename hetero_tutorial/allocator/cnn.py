"""PPO with Nature-CNN networks on Atari frames: the allocator's CNN workload.

This is PPO's own iteration (:class:`~hetero_tutorial.rl.ppo.trainer.PPOTrainer`) with
other environments and another policy: frames of a real Atari game through
ale-py's vector environment (the DQN preprocessing: grey, 84 x 84, 4 stacked,
frame skip 4) when ale-py is installed (``pip install -e ".[atari]"``), otherwise
random uint8 frames, labelled synthetic wherever they are reported; and a Nature
CNN for the actor and another for the critic. The frames stay uint8 in storage
and in the transfer (a quarter of their float32 size). Its seconds per iteration
judge placements; with the notebook's small budgets it makes no claim about how
well it learns.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, replace
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from torch import nn

from hetero_tutorial.allocator.workload import Workload
from hetero_tutorial.core.errors import UsageError, require_minibatch_fits, require_positive
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.rl.envs.spec import VectorEnvs
from hetero_tutorial.rl.nets import DiscreteActorCritic, NatureCNN
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.trainer import PPOTrainer

FRAME_SOURCES = ("auto", "atari", "synthetic")


CNN_PPO = PPOConfig(
    env_id="cnn-frames",  # a label: the frames come from make_frames
    total_steps=8 * 32,  # one iteration; ppo_config() sets the budget
    num_envs=8,
    num_steps=32,
    hidden=512,  # the fully connected layer of each Nature CNN (512 in the DQN paper)
    learning_rate=2.5e-4,
    gamma=0.99,
    gae_lambda=0.95,
    minibatch_size=64,
    update_epochs=2,
)
"""The CNN workload's PPO settings: an iteration a laptop CPU runs in seconds.

(CleanRL's Atari PPO uses 8 environments x 128 steps and 4 epochs of 256-transition
minibatches: the same work per step, a longer iteration.)"""


@dataclass(init=False)
class CNNConfig:
    """The CNN workload's knobs: its frames and network, and the PPO settings it trains with.

    ``CNNConfig(frames="synthetic", num_envs=2, hidden=16)``: keywords that name a
    :class:`PPOConfig` field replace it in :data:`CNN_PPO` (or in ``ppo``, when given).
    """

    game: str
    """the Atari game, as ale-py names its ROM"""
    frames: str
    """where frames come from: "atari", "synthetic", or "auto" (Atari when ale-py is installed)"""
    channels: int
    """channels of the first convolution (the next two have twice as many)"""
    ppo: PPOConfig
    """PPO's settings (environments, rollout length, minibatches, epochs, width, optimiser)"""

    def __init__(
        self,
        game: str = "breakout",
        frames: str = "auto",
        channels: int = 32,
        ppo: PPOConfig | None = None,
        **ppo_fields: Any,
    ) -> None:
        self.game, self.frames, self.channels = game, frames, channels
        self.ppo = replace(ppo or CNN_PPO, **ppo_fields)

    @property
    def hidden(self) -> int:
        """Width of the fully connected layer of each Nature CNN (PPO's ``hidden``)."""
        return self.ppo.hidden

    @property
    def batch_size(self) -> int:
        """Transitions per rollout."""
        return self.ppo.batch_size

    def ppo_config(self, iterations: int = 1) -> PPOConfig:
        """The PPO settings of this workload, for ``iterations`` iterations."""
        return replace(self.ppo, total_steps=iterations * self.batch_size)

    def policy(self, num_actions: int) -> CNNActorCritic:
        """A fresh actor-critic of this workload's size, on the CPU."""
        return CNNActorCritic(num_actions, self.hidden, self.channels)

    def validate(self) -> None:
        """Raise a clear error for settings that cannot work."""
        if self.frames not in FRAME_SOURCES:
            raise UsageError(
                f"frames must be one of {', '.join(FRAME_SOURCES)}; got {self.frames!r}"
            )
        names = ("num_envs", "num_steps", "minibatch_size", "update_epochs", "hidden")
        require_positive(**{name: getattr(self.ppo, name) for name in names})
        require_minibatch_fits(self.ppo.minibatch_size, self.ppo.num_envs, self.ppo.num_steps)


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
    num_envs = num_envs or config.ppo.num_envs
    if not use_atari:
        return SyntheticFrames(num_envs)
    if not atari_available():
        raise UsageError(
            'frames="atari" needs ale-py: pip install -e ".[atari]" (or use frames="synthetic")'
        )
    from ale_py.vector_env import AtariVectorEnv

    try:
        # one thread; SAME_STEP autoreset as PPO expects (info["final_obs"] on episode ends)
        envs = AtariVectorEnv(
            config.game, num_envs, num_threads=1, autoreset_mode=AutoresetMode.SAME_STEP
        )
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
        config.policy(int(action_space.n)),
        observation_space,
        action_space,
        config.ppo_config(),
        name=name or f"cnn-{config.hidden}",
    )


def trainer(
    config: CNNConfig, placement: Placement, seed: int = 0, iterations: int = 1
) -> PPOTrainer:
    """A PPO trainer of the CNN workload under ``placement`` for ``iterations`` iterations:
    frames in, Nature CNNs."""
    config.validate()
    envs = make_frames(config)
    policy = config.policy(_actions(envs))
    return PPOTrainer(config.ppo_config(iterations), placement, seed, envs=envs, policy=policy)


def _actions(envs: VectorEnvs) -> int:
    return int(envs.single_action_space.n)


def frames_label(config: CNNConfig) -> str:
    """What the frames of a run with ``config`` will be: ``"atari:<game>"`` or ``"synthetic"``."""
    source = make_frames(config, num_envs=1)
    source.close()
    return source.label
