"""Step 2 of DDPG: the learner. Actor, critic, their targets and optimisers; acting and updating.

:meth:`DDPGLearner.act` is the rollout's part of a step (the acting copy of the actor,
with exploration noise); :meth:`DDPGLearner.update` is one critic step, one actor step
and the Polyak averaging of the targets; :meth:`DDPGLearner.sync_weights` refreshes the
acting copy where it lives on another device (the hybrid placement).

Speed without changing the algorithm: no per-step ``.item()``; acting under
``torch.inference_mode``; the actor's gradient is taken with respect to the actor's weights
only (the critic's weight gradients, which the actor step never uses, are not computed);
fused Adam; one ``lerp_`` per network's flat parameters for the Polyak averaging.

Eager and compiled runs call the same update (:meth:`DDPGLearner.update`) through
:attr:`DDPGLearner.step`, the update in the config's compile mode; with ``config.compile``
``torch.compile`` traces it whole into one graph: both losses, their
backward passes (``torch.autograd.grad``), both Adam steps (``torch.optim``'s functional
form: see :class:`~hetero_tutorial.speed.FunctionalAdam`) and the averaging. Acting stays eager, by
design: one observation's forward is a call of a few operations, where a compiled call's
guards cost about what its fusing saves (``bench compile``'s ``act`` at batch 1 measures
which way it goes on a machine).
"""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import Placement, gym_envs_only
from hetero_tutorial.rl.buffers import Batch
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.nets import DeterministicActor, QCritic
from hetero_tutorial.speed import FlatParameters, compiled

ADAM_EPS = 1e-8
"""Adam's epsilon (PyTorch's default, as CleanRL's DDPG has it), eager and compiled alike."""


class DDPGLearner:
    """The learner: actor and critic, their target copies and optimisers, on the update device,
    and the actor's acting copy on the rollout device.

    ``seed`` seeds the networks' initial weights and the exploration noise.
    """

    def __init__(self, env: gym.Env, config: DDPGConfig, placement: Placement, seed: int) -> None:
        space = env.action_space
        if not isinstance(space, gym.spaces.Box) or len(env.observation_space.shape) != 1:
            raise UsageError(
                f"DDPG needs continuous (Box) actions and vector observations; {config.env_id} "
                f"has {space} and observations {env.observation_space}."
            )
        gym_envs_only(placement, "DDPG")
        obs_dim, action_dim = env.observation_space.shape[0], space.shape[0]
        low = torch.as_tensor(space.low, dtype=torch.float32)  # float64 bounds would make the
        high = torch.as_tensor(space.high, dtype=torch.float32)  # actor's output float64
        self.config, self.placement = config, placement
        torch.manual_seed(seed)
        self.actor = DeterministicActor(obs_dim, action_dim, low, high, config.hidden)
        self.critic = QCritic(obs_dim, action_dim, config.hidden)
        self.actor.to(placement.update_device)
        self.critic.to(placement.update_device)
        self.actor_target = copy.deepcopy(self.actor).requires_grad_(False)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.rollout_actor = self.actor
        if placement.rollout_device != placement.update_device:  # for acting, synced per update
            rollout_actor = copy.deepcopy(self.actor).to(placement.rollout_device)
            self.rollout_actor = rollout_actor.requires_grad_(False)
        # Each network's parameters live in one flat tensor (see flat.py): zeroing, the
        # optimizer step, the Polyak averages and the rollout sync are one call each.
        self.actor_flat, self.critic_flat = FlatParameters(self.actor), FlatParameters(self.critic)
        self.actor_target_flat = FlatParameters(self.actor_target, with_grad=False)
        self.critic_target_flat = FlatParameters(self.critic_target, with_grad=False)
        self.rollout_flat = self.actor_flat
        if self.rollout_actor is not self.actor:
            self.rollout_flat = FlatParameters(self.rollout_actor, with_grad=False)
        self.low, self.high = space.low, space.high
        self.noise_std = config.exploration_noise * (space.high - space.low) / 2
        self.noise = np.random.default_rng(seed)
        device = placement.update_device
        targets = (self.actor_target_flat.data, self.critic_target_flat.data)
        self.step = compiled(
            self.update, config.compile_mode, device, "DDPG's update", traces_autograd=True,
            updates=targets,
        )  # fmt: skip
        """:meth:`update` in the config's compile mode (first call timed apart): what the
        trainer calls"""
        self.actor_optimizer = self.actor_flat.adam(config.actor_lr, ADAM_EPS, self.step.mode)
        self.critic_optimizer = self.critic_flat.adam(config.critic_lr, ADAM_EPS, self.step.mode)

    @property
    def flats(self) -> tuple[FlatParameters, ...]:
        """The flat weights an update writes: actor, critic, and their targets."""
        return self.actor_flat, self.critic_flat, self.actor_target_flat, self.critic_target_flat

    @torch.inference_mode()
    def act(self, obs: np.ndarray, explore: bool = True) -> np.ndarray:
        """The action for one observation (obs_dim,) or a batch (B, obs_dim), with Gaussian
        noise when exploring (a draw per action), clipped to the bounds."""
        obs_rollout = torch.as_tensor(obs, dtype=torch.float32).to(self.placement.rollout_device)
        action = self.rollout_actor(obs_rollout.reshape(-1, obs.shape[-1])).cpu().numpy()
        action = action.reshape(*obs.shape[:-1], -1)  # (action_dim,) for one observation
        if explore:
            action = action + self.noise.normal(0.0, self.noise_std, action.shape)
        return np.clip(action, self.low, self.high).astype(np.float32)

    def update(self, batch: Batch) -> None:
        """One critic step, one actor step, then Polyak-average the targets (:attr:`step`
        runs it, eagerly or traced as one graph)."""
        c = self.config
        with torch.no_grad():
            next_q = self.critic_target(batch.next_obs, self.actor_target(batch.next_obs))
            # Bootstrap unless the episode reached a terminal state; a time limit is no end.
            td_target = batch.reward + c.gamma * (1.0 - batch.terminated) * next_q
        critic_loss = F.mse_loss(self.critic(batch.obs, batch.action), td_target)
        grads = torch.autograd.grad(critic_loss, self.critic_flat.module_parameters)
        with torch.no_grad():
            self.critic_optimizer.step(self.critic_flat.gradients(grads))

        actor_loss = -self.critic(batch.obs, self.actor(batch.obs)).mean()
        grads = torch.autograd.grad(actor_loss, self.actor_flat.module_parameters)  # actor's only
        with torch.no_grad():
            self.actor_optimizer.step(self.actor_flat.gradients(grads))
            self.actor_target_flat.data.lerp_(self.actor_flat.data, c.tau)
            self.critic_target_flat.data.lerp_(self.critic_flat.data, c.tau)

    @property
    def syncs_weights(self) -> bool:
        """Whether the actor acts from a copy on another device, which each update must refresh."""
        return self.rollout_flat is not self.actor_flat

    @torch.no_grad()
    def sync_weights(self) -> None:
        """Copy the actor's new weights into its acting copy: one flat copy."""
        self.rollout_flat.copy_from(self.actor_flat)
