"""The networks of the series: MLPs, PPO actor-critics, DDPG actor and critic, a Nature CNN.

All are plain ``nn.Module``s with no device logic: where they run is the
placement's business. PPO's actor and critic run as one :class:`~hetero_tutorial.speed.PairedMLP`
by default, a speed trick (two networks in one batched product per layer) behind the speed
door, or as two ordinary MLPs (:class:`SeparateMLPs`, CleanRL's shape). Orthogonal
initialisation with the usual gains follows the PPO implementation details that CleanRL
documents.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.speed import PairedMLP

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _init(layer: nn.Linear | nn.Conv2d, gain: float) -> nn.Module:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


def _require_sizes(in_features: int, hidden: int, out_features: int, layers: int) -> None:
    """A clear error for an MLP with a size below 1 (torch would fail later, obscurely)."""
    if min(in_features, hidden, out_features, layers) < 1:
        raise UsageError(
            f"an MLP needs positive sizes; got in={in_features}, hidden={hidden}, "
            f"out={out_features}, layers={layers}"
        )


def mlp(
    in_features: int,
    hidden: int,
    out_features: int,
    layers: int = 2,
    activation: type[nn.Module] = nn.Tanh,
    out_gain: float = 1.0,
) -> nn.Sequential:
    """``layers`` hidden layers of width ``hidden`` with ``activation``, then a linear output."""
    _require_sizes(in_features, hidden, out_features, layers)
    modules: list[nn.Module] = []
    width = in_features
    for _ in range(layers):
        modules += [_init(nn.Linear(width, hidden), math.sqrt(2)), activation()]
        width = hidden
    modules.append(_init(nn.Linear(width, out_features), out_gain))
    return nn.Sequential(*modules)


class SeparateMLPs(nn.Module):
    """The two networks of a :class:`PairedMLP` as two ordinary MLPs, CleanRL's shape.

    One ``nn.Linear`` call per layer and network, where the paired version makes one
    batched call per layer for both: the same arithmetic in twice the calls. The
    critic's output is one unit wide (the paired critic's column 0).
    """

    def __init__(
        self,
        in_features: int,
        hidden: int,
        out_features: int,
        out_gains: tuple[float, float],
        layers: int = 2,
    ) -> None:
        super().__init__()
        self.actor = mlp(in_features, hidden, out_features, layers, nn.Tanh, out_gains[0])
        self.critic = mlp(in_features, hidden, 1, layers, nn.Tanh, out_gains[1])

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The actor's (B, out) and the critic's (B, 1) outputs for the same input ``x``."""
        return self.actor(x), self.critic(x)


def actor_critic_body(
    obs_dim: int, hidden: int, out_features: int, paired: bool
) -> PairedMLP | SeparateMLPs:
    """The actor and critic MLPs of PPO's policies: paired (fast) or separate (plain)."""
    body = PairedMLP if paired else SeparateMLPs
    return body(obs_dim, hidden, out_features, out_gains=(0.01, 1.0))


class DiscreteActorCritic(nn.Module):
    """Actor (logits) and critic (value) MLPs for a discrete action space.

    ``paired`` (the default): one :class:`PairedMLP`, whose critic output layer is as
    wide as the actor's and uses column 0; False: :class:`SeparateMLPs`, CleanRL's two.
    Sampling takes its randomness as an argument (Gumbel noise, one number per
    action, from :meth:`sample_noise`) so that the caller decides where random
    numbers come from: PPO draws them on the CPU, which makes every placement
    sample the same actions from the same seed (on batched environments, on their
    device: see ppo/collectors.py).
    """

    def __init__(
        self, obs_dim: int, num_actions: int, hidden: int = 64, paired: bool = True
    ) -> None:
        super().__init__()
        self.noise_dim = num_actions
        self.actor_critic = actor_critic_body(obs_dim, hidden, num_actions, paired)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(log-probabilities (B, num_actions), value (B,))``."""
        logits, critic_out = self.actor_critic(obs)
        return torch.log_softmax(logits, dim=-1), critic_out[:, 0]

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """State values, (B,)."""
        return self(obs)[1]

    def sample_noise(self, shape: tuple[int, ...], generator: torch.Generator) -> torch.Tensor:
        """Standard Gumbel noise of ``shape + (num_actions,)``, drawn where ``generator`` lives."""
        uniform = torch.rand((*shape, self.noise_dim), generator=generator, device=generator.device)
        return -torch.log(-torch.log(uniform.clamp_min(1e-20)))

    def act(
        self, obs: torch.Tensor, noise: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample ``(action (B, 1) as float, log-probability (B,), value (B,))``.

        ``noise``: (B, num_actions) Gumbel noise; argmax(log-probabilities + noise)
        is an exact sample of the softmax distribution (the Gumbel-max trick).
        """
        log_probs, value = self(obs)
        action = (log_probs + noise).argmax(dim=-1, keepdim=True)
        return action.float(), log_probs.gather(-1, action).squeeze(-1), value

    def evaluate(
        self, obs: torch.Tensor, action: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(log-probability, entropy, value)`` of stored actions (B, 1) under this policy."""
        log_probs, value = self(obs)
        entropy = -(log_probs.exp() * log_probs).sum(-1)
        return log_probs.gather(-1, action.long()).squeeze(-1), entropy, value

    def greedy(self, obs: torch.Tensor) -> torch.Tensor:
        """The most likely action, (B,) integers."""
        return self(obs)[0].argmax(dim=-1)


class GaussianActorCritic(nn.Module):
    """Actor MLP for the mean of a diagonal Gaussian, a state-independent log std, and a critic.

    The actor and critic are paired (:class:`PairedMLP`, the critic using column 0
    of its output layer) or, with ``paired=False``, :class:`SeparateMLPs` (the critic
    one unit wide). Sampling takes standard normal noise as an
    argument, for the same reason as :class:`DiscreteActorCritic`.
    """

    def __init__(
        self, obs_dim: int, action_dim: int, hidden: int = 64, paired: bool = True
    ) -> None:
        super().__init__()
        self.noise_dim = action_dim
        self.actor_critic = actor_critic_body(obs_dim, hidden, action_dim, paired)
        self.log_std = nn.Parameter(torch.zeros(action_dim))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mean action (B, A), value (B,))``; the std is ``log_std.exp()``."""
        mean, critic_out = self.actor_critic(obs)
        return mean, critic_out[:, 0]

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """State values, (B,)."""
        return self(obs)[1]

    def sample_noise(self, shape: tuple[int, ...], generator: torch.Generator) -> torch.Tensor:
        """Standard normal noise of ``shape + (action_dim,)``, drawn where ``generator`` lives."""
        return torch.randn((*shape, self.noise_dim), generator=generator, device=generator.device)

    def _log_prob(self, mean: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        z = (action - mean) * torch.exp(-self.log_std)
        return (-0.5 * z.pow(2) - self.log_std - _HALF_LOG_2PI).sum(-1)

    def act(
        self, obs: torch.Tensor, noise: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample ``(action (B, A), log-probability (B,), value (B,))``; noise: N(0, 1), (B, A)."""
        mean, value = self(obs)
        action = mean + self.log_std.exp() * noise
        return action, self._log_prob(mean, action), value

    def evaluate(
        self, obs: torch.Tensor, action: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(log-probability, entropy, value)`` of stored actions (B, A) under this policy."""
        mean, value = self(obs)
        entropy = (self.log_std + 0.5 + _HALF_LOG_2PI).sum().expand(obs.shape[0])
        return self._log_prob(mean, action), entropy, value

    def greedy(self, obs: torch.Tensor) -> torch.Tensor:
        """The mean action, (B, A)."""
        return self(obs)[0]


class DeterministicActor(nn.Module):
    """DDPG's actor: ``tanh`` output scaled to the action bounds."""

    def __init__(
        self,
        obs_dim: int,
        action_dim: int,
        low: torch.Tensor,
        high: torch.Tensor,
        hidden: int = 256,
    ) -> None:
        super().__init__()
        self.net = mlp(obs_dim, hidden, action_dim, activation=nn.ReLU)
        self.register_buffer("scale", (high - low) / 2)
        self.register_buffer("center", (high + low) / 2)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.center + self.scale * torch.tanh(self.net(obs))


class QCritic(nn.Module):
    """DDPG's critic: Q(s, a) from the concatenated observation and action."""

    def __init__(self, obs_dim: int, action_dim: int, hidden: int = 256) -> None:
        super().__init__()
        self.net = mlp(obs_dim + action_dim, hidden, 1, activation=nn.ReLU)

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([obs, action], dim=-1)).squeeze(-1)


class NatureCNN(nn.Module):
    """The DQN "Nature" network: 84x84x4 frames -> ``out_features`` (Mnih et al., 2015).

    Input: uint8 or float frames shaped (B, 4, 84, 84); uint8 is scaled to [0, 1].
    ``hidden`` is the width of the fully connected layer (512 in the paper).
    """

    FRAME_SHAPE = (4, 84, 84)

    def __init__(self, out_features: int, hidden: int = 512, channels: int = 32) -> None:
        super().__init__()
        self.features = nn.Sequential(
            _init(nn.Conv2d(4, channels, 8, stride=4), math.sqrt(2)),
            nn.ReLU(),
            _init(nn.Conv2d(channels, 2 * channels, 4, stride=2), math.sqrt(2)),
            nn.ReLU(),
            _init(nn.Conv2d(2 * channels, 2 * channels, 3, stride=1), math.sqrt(2)),
            nn.ReLU(),
            nn.Flatten(),
        )
        self.head = nn.Sequential(
            _init(nn.Linear(2 * channels * 7 * 7, hidden), math.sqrt(2)),
            nn.ReLU(),
            _init(nn.Linear(hidden, out_features), 0.01),
        )

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        if tuple(frames.shape[1:]) != self.FRAME_SHAPE:
            raise UsageError(
                f"NatureCNN expects frames shaped (batch, 4, 84, 84); got {tuple(frames.shape)}"
            )
        x = frames.float() / 255.0 if frames.dtype == torch.uint8 else frames
        return self.head(self.features(x))
