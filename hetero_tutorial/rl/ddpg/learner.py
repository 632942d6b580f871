"""Step 2 of DDPG: the learner. Actor, critic, their targets and optimisers; acting and updating.

:meth:`DDPGLearner.act` is the rollout's part of a step (the acting copy of the actor,
with exploration noise); :meth:`DDPGLearner.update` is one critic step, one actor step
and the Polyak averaging of the targets; :meth:`DDPGLearner.sync_weights` refreshes the
acting copy where it lives on another device (the hybrid placement).

Speed without changing the algorithm: no per-step ``.item()``; acting under
``torch.inference_mode``; the actor loss back-propagates into the actor's weights only
(``backward(inputs=...)`` skips the critic's weight gradients, which the actor step never
uses); fused Adam; one ``lerp_`` per network's flat parameters for the Polyak averaging.

With ``config.compile`` the whole update is one compiled graph
(:meth:`DDPGLearner.one_graph_update`): both losses, their gradients (``torch.func.grad``),
both Adam steps and the averaging, the same arithmetic as the eager update to float
rounding. Acting stays eager, by design: one observation's forward is a call of a few
operations, where a compiled call's guards cost about what its fusing saves (``bench
compile``'s ``act`` at batch 1 measures which way it goes on a machine).
"""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F

from hetero_tutorial.core.compiled import compiled
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import Placement, gym_envs_only
from hetero_tutorial.rl.buffers import Batch
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.flat import AdamState, FlatParameters, adam_update
from hetero_tutorial.rl.nets import DeterministicActor, QCritic

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
        self.actor_optimizer = self.actor_flat.adam(lr=config.actor_lr, eps=ADAM_EPS)
        self.critic_optimizer = self.critic_flat.adam(lr=config.critic_lr, eps=ADAM_EPS)
        self.low, self.high = space.low, space.high
        self.noise_std = config.exploration_noise * (space.high - space.low) / 2
        self.noise = np.random.default_rng(seed)
        self._actor_params = list(self.actor.parameters())
        device = placement.update_device
        self.step = compiled(self.one_graph_update, config.compile_mode, device, "DDPG's update")
        """:meth:`one_graph_update` in the config's compile mode (first call timed apart);
        eager: :meth:`update` steps with autograd and fused Adam instead"""
        self.adam: tuple[AdamState, AdamState] | None = None
        """the compiled update's Adam state, actor's and critic's (the optimizers' stays unused)"""
        if self.step.mode != "eager":
            self.adam = (
                AdamState.of(self.actor_flat.data, config.actor_lr),
                AdamState.of(self.critic_flat.data, config.critic_lr),
            )
            written = [flat.data for flat in self.flats] + [t for a in self.adam for t in a.written]
            self.step.writes_in_place(*written)

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
        """One critic step, one actor step, then Polyak-average the targets."""
        if self.adam is not None:
            self.step(*(flat.data for flat in self.flats), *self.adam, batch)
            return
        with torch.no_grad():
            next_q = self.critic_target(batch.next_obs, self.actor_target(batch.next_obs))
            # Bootstrap unless the episode reached a terminal state; a time limit is no end.
            td_target = batch.reward + self.config.gamma * (1.0 - batch.terminated) * next_q
        critic_loss = F.mse_loss(self.critic(batch.obs, batch.action), td_target)
        self.critic_flat.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()

        actor_loss = -self.critic(batch.obs, self.actor(batch.obs)).mean()
        self.actor_flat.zero_grad()
        actor_loss.backward(inputs=self._actor_params)  # no gradients for the critic's weights
        self.actor_optimizer.step()

        with torch.no_grad():
            self.actor_target_flat.data.lerp_(self.actor_flat.data, self.config.tau)
            self.critic_target_flat.data.lerp_(self.critic_flat.data, self.config.tau)

    def one_graph_update(
        self,
        actor_weights: torch.Tensor,
        critic_weights: torch.Tensor,
        actor_target_weights: torch.Tensor,
        critic_target_weights: torch.Tensor,
        actor_adam: AdamState,
        critic_adam: AdamState,
        batch: Batch,
    ) -> None:
        """:meth:`update`'s arithmetic as a function of the four flat weight tensors and the
        two Adam states, for ``torch.compile`` to trace whole: the networks run on views of
        the flat weights (``functional_call``), gradients come from ``torch.func.grad``, and
        every weight and state is updated in place, in the eager update's order (the actor's
        loss reads the critic as its step just left it)."""
        c, actor_flat, critic_flat = self.config, self.actor_flat, self.critic_flat

        def mu(weights: dict[str, torch.Tensor], obs: torch.Tensor) -> torch.Tensor:
            return torch.func.functional_call(self.actor, weights, (obs,))

        def q(
            weights: dict[str, torch.Tensor], obs: torch.Tensor, act: torch.Tensor
        ) -> torch.Tensor:
            return torch.func.functional_call(self.critic, weights, (obs, act))

        actor_target = actor_flat.views(actor_target_weights)
        next_q = q(
            critic_flat.views(critic_target_weights),
            batch.next_obs,
            mu(actor_target, batch.next_obs),
        )
        td_target = batch.reward + c.gamma * (1.0 - batch.terminated) * next_q

        def critic_loss(weights: dict[str, torch.Tensor]) -> torch.Tensor:
            return F.mse_loss(q(weights, batch.obs, batch.action), td_target)

        grads = torch.func.grad(critic_loss)(critic_flat.views(critic_weights))
        adam_update(critic_weights, critic_flat.flatten(grads), critic_adam, eps=ADAM_EPS)
        critic = critic_flat.views(critic_weights)  # as its step left it

        def actor_loss(weights: dict[str, torch.Tensor]) -> torch.Tensor:
            return -q(critic, batch.obs, mu(weights, batch.obs)).mean()

        grads = torch.func.grad(actor_loss)(actor_flat.views(actor_weights))
        adam_update(actor_weights, actor_flat.flatten(grads), actor_adam, eps=ADAM_EPS)
        actor_target_weights.lerp_(actor_weights, c.tau)
        critic_target_weights.lerp_(critic_weights, c.tau)

    @property
    def syncs_weights(self) -> bool:
        """Whether the actor acts from a copy on another device, which each update must refresh."""
        return self.rollout_flat is not self.actor_flat

    @torch.no_grad()
    def sync_weights(self) -> None:
        """Copy the actor's new weights into its acting copy: one flat copy."""
        self.rollout_flat.copy_from(self.actor_flat)
