"""The workload: what one PPO iteration asks of the hardware, as the allocator sees it.

A :class:`Workload` is a policy (an actor-critic on the CPU), the spaces of one
environment, and the PPO settings that fix how much work an iteration does. Its
:meth:`~Workload.signature` says everything that sets the cost of a phase, so a
decision can be remembered and re-measured when the network grows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.rl.envs.spec import EnvSpec, env_spec, space_spec
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.policy import make_policy
from hetero_tutorial.rl.ppo.storage import RolloutStorage
from hetero_tutorial.speed import PairedMLP

LAYER_KINDS = {nn.Linear: "mlp", PairedMLP: "mlp", nn.Conv2d: "cnn"}
"""The layers whose cost a signature can describe, and the network kind each implies."""

POLICY_METHODS = ("sample_noise", "act", "evaluate")
"""The actor-critic interface the allocator drives (as in ``nets.DiscreteActorCritic``)."""


def network_kind(network: nn.Module) -> str:
    """``"cnn"`` for a network with convolutions, ``"mlp"`` for one of linear layers only.

    Anything else is refused: a signature describes a layer by its shapes, and
    the cost of, say, a recurrent layer also depends on a sequence length that
    the signature cannot see, so a remembered decision could silently go stale.
    """
    missing = [name for name in POLICY_METHODS if not callable(getattr(network, name, None))]
    if missing:
        raise UsageError(
            f"{type(network).__name__} has no {', '.join(missing)}: the allocator drives "
            "actor-critics with sample_noise(shape, generator), act(obs, noise) and "
            "evaluate(obs, actions), like hetero_tutorial.rl.nets.DiscreteActorCritic."
        )
    kinds, covered = set(), set()
    for module in network.modules():
        if id(module) in covered:
            continue
        is_leaf = next(module.children(), None) is None
        has_weights = next(module.parameters(recurse=False), None) is not None
        if type(module) in LAYER_KINDS:
            kinds.add(LAYER_KINDS[type(module)])
            covered.update(id(inner) for inner in module.modules())
        elif is_leaf and has_weights:
            raise UsageError(
                f"unknown network type: it has a {type(module).__name__} layer. The allocator "
                "knows MLPs (nn.Linear or speed.PairedMLP layers) and CNNs (nn.Conv2d, then "
                "nn.Linear layers)."
            )
    if not kinds:
        raise UsageError("unknown network type: it has no nn.Linear or nn.Conv2d layer.")
    return "cnn" if "cnn" in kinds else "mlp"


@dataclass(frozen=True, eq=False)
class Workload:
    """One PPO iteration's work: a policy, one environment's spaces, and the PPO settings."""

    network: nn.Module
    """the policy on the CPU: an actor-critic with ``sample_noise``, ``act`` and ``evaluate``"""
    observation_space: gym.spaces.Box
    """one environment's observations (a vector, or uint8 frames for a CNN)"""
    action_space: gym.spaces.Discrete | gym.spaces.Box
    """one environment's actions"""
    config: PPOConfig
    """the run's settings: environments, steps, minibatches and epochs set the work"""
    name: str = "workload"
    """a label for tables, e.g. ``"mlp-256"``"""

    def __post_init__(self) -> None:
        self.config.validate()
        if not isinstance(self.action_space, gym.spaces.Discrete | gym.spaces.Box):
            raise UsageError(f"actions must be a Discrete or Box space, got {self.action_space}")
        if not isinstance(self.observation_space, gym.spaces.Box):
            raise UsageError(f"observations must be a Box space, got {self.observation_space}")
        network_kind(self.network)

    @property
    def kind(self) -> str:
        return network_kind(self.network)

    @property
    def spec(self) -> EnvSpec:
        flat = len(self.observation_space.shape) == 1
        return space_spec(self.name, self.observation_space, self.action_space, flat)

    @property
    def rollout_bytes(self) -> int:
        """Bytes of one rollout as
        :class:`~hetero_tutorial.rl.ppo.storage.RolloutStorage` holds it."""
        spec, c = self.spec, self.config
        action_width = 1 if spec.discrete else spec.action_dim
        return c.batch_size * (spec.obs_dim * spec.obs_dtype.itemsize + 4 * (action_width + 6))

    def signature(self) -> tuple[Any, ...]:
        """Everything that sets the cost of a phase: equal signatures, equal costs.

        The network's ``repr`` lists its layers with their widths, kernels and
        strides; the dtypes of its parameters and observations matter too, and the
        settings that fix the work of an iteration and how it is done.
        """
        c = self.config
        dtypes = tuple(sorted({str(p.dtype) for p in self.network.parameters()}))
        return (
            self.kind,
            repr(self.network),
            dtypes,
            tuple(self.observation_space.shape),
            str(self.observation_space.dtype),
            repr(self.action_space),
            c.num_envs,
            c.num_steps,
            c.minibatch_size,
            c.gradient_steps,
            (c.flat_parameters, c.gather_per_epoch),
        )

    def short_signature(self) -> str:
        """Eight hex digits of the signature, to show in tables."""
        return hashlib.sha1(repr(self.signature()).encode()).hexdigest()[:8]

    def observations(self, count: int, generator: torch.Generator) -> np.ndarray:
        """``count`` random observations, as the environments return them (NumPy, on the CPU)."""
        shape = (count, *self.observation_space.shape)
        if self.observation_space.dtype == np.uint8:
            return torch.randint(0, 256, shape, dtype=torch.uint8, generator=generator).numpy()
        return torch.randn(shape, generator=generator).numpy()

    def fill(self, storage: RolloutStorage, generator: torch.Generator) -> None:
        """Fill a rollout's storage with random data of the right kinds (valid actions too).

        What a pass costs does not depend on the values, only on their shapes and dtypes.
        """
        shape = storage.data.shape[:2]
        obs = torch.from_numpy(self.observations(shape[0] * shape[1], generator))
        storage.obs.copy_(obs.reshape(*shape, *obs.shape[1:]))
        if isinstance(self.action_space, gym.spaces.Discrete):
            actions = torch.randint(0, int(self.action_space.n), (*shape, 1), generator=generator)
        else:
            actions = torch.randn((*shape, self.action_space.shape[0]), generator=generator)
        storage.actions.copy_(actions.float())
        for name in ("logprobs", "values", "rewards", "advantages", "returns"):
            getattr(storage, name).copy_(torch.randn(shape, generator=generator))
        storage.dones.copy_((torch.rand(shape, generator=generator) < 0.01).float())


def ppo_workload(config: PPOConfig, name: str | None = None) -> Workload:
    """The workload of a :class:`~hetero_tutorial.rl.ppo.trainer.PPOTrainer` run with ``config``."""
    config.validate()
    env = gym.make(config.env_id)
    observation_space, action_space = env.observation_space, env.action_space
    env.close()
    policy = make_policy(env_spec(config.env_id), config)
    return Workload(policy, observation_space, action_space, config, name or f"mlp-{config.hidden}")
