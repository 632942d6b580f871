"""PPO's rollout on batched tensor environments: a step that never leaves the device.

:class:`TensorCollector` is the counterpart of :class:`~hetero_tutorial.rl.ppo.Collector`
for environments that take and return tensors (:mod:`hetero_tutorial.rl.device_envs`).
Under the ``all-device`` placement the environments, the actor and the storage share
one device, and nothing in a step crosses to the host:

* actions stay tensors (CartPole takes ``action[:, 0]``; Pendulum's torques are clipped
  to tensor bounds);
* rewards and dones go straight into storage;
* episode returns are summed on the device; the returns of the episodes that ended are
  read back once per rollout (one copy), not per step;
* truncations are bootstrapped with ``torch.where`` on the values of *every*
  environment's final observation: one more critic pass per step, where asking which
  environments were cut would read a mask on the host (a sync per step);
* the sampling noise is drawn on the device, from a generator seeded there.

:class:`~hetero_tutorial.rl.ppo.PPOTrainer` uses it when the placement has batched
environments (``all-device``), or when ``config.batched_envs`` asks for them. It has
Collector's interface (``collect``, ``act``, ``record_episodes``,
``bootstrap_truncations``, ``episodes``, ``global_step``, ``policy``) without
subclassing it: ppo.py imports this module to choose its collector, so this module
cannot import ppo.py back (an import cycle), and none of Collector's method bodies
would be kept anyway: each is rewritten for tensors.

The *tensor interface* the collector needs of its environments: ``reset(seed=...)``
returns ``(obs (N, obs_dim) tensor, info)``; ``step(actions)`` takes a tensor and
returns tensors ``obs, reward, terminated, truncated`` and an ``info`` whose
``"final_obs"`` holds every environment's observation before any autoreset; and the
attributes ``device``, ``num_envs``, ``single_observation_space``,
``single_action_space`` and ``close()``. The batched environments have it; so does
the tests' wrapper of Gymnasium's own CartPole.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from hetero_tutorial.core.devices import same_device
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.rl.device_envs import BATCHED_ENV_IDS, make_batched_env
from hetero_tutorial.rl.envs import EnvSpec, make_vector_env
from hetero_tutorial.rl.ppo_config import PPOConfig


def make_envs(config: PPOConfig, device: torch.device, batched: bool) -> Any:
    """The config's environments: batched tensors on ``device``, or Gymnasium's on the CPU.

    The batched environments skip their per-step check of action values (a host sync
    on an accelerator): PPO's actions are valid by construction (a sampled index, a
    clipped torque).
    """
    if batched:
        if config.env_id not in BATCHED_ENV_IDS:
            raise UsageError(
                f"{config.env_id} has no batched version (only {', '.join(BATCHED_ENV_IDS)} do), "
                "so it cannot run with batched environments (the 'all-device' placement, or "
                "batched_envs=True). Choose 'hybrid', 'all-accelerator' or 'all-cpu' for it."
            )
        return make_batched_env(config.env_id, config.num_envs, device, check_actions=False)
    return make_vector_env(config.env_id, config.num_envs)


class TensorCollector:
    """Steps tensor environments with the rollout policy, on one device, into storage.

    Everything runs on the rollout device, which must be the environments' device:
    a tensor collector exists to keep the step in one place.
    """

    def __init__(
        self,
        envs: Any,
        spec: EnvSpec,
        policy: nn.Module,
        storage: Any,
        config: PPOConfig,
        device: torch.device,
        seed: int,
    ) -> None:
        if not same_device(envs.device, device):
            raise UsageError(
                f"the batched environments run on {envs.device} but the rollout on {device}; "
                "a tensor collector keeps the whole step on one device. Use the 'all-device' "
                "placement (both on the accelerator), or batched environments on the CPU with "
                "a placement whose rollout runs there ('hybrid', 'all-cpu')."
            )
        self.envs, self.spec, self.policy, self.storage = envs, spec, policy, storage
        self.config, self.device, self.seed = config, device, seed
        self.generator = torch.Generator(device).manual_seed(seed)  # sampling noise, on the device
        self.obs: torch.Tensor | None = None  # the environments reset at the first collect
        on = {"device": device}
        self.episode_returns = torch.zeros(config.num_envs, **on)  # (N,) running returns
        self.finished = torch.empty(config.num_steps, config.num_envs, **on)
        """(T, N): the return of the episode that ended at step t in env i, NaN if none did"""
        self._nan = torch.tensor(float("nan"), **on)
        if not spec.discrete:  # the torque bounds, as tensors on the device (copied once)
            self.action_low, self.action_high = (
                torch.as_tensor(bound, **on) for bound in (spec.action_low, spec.action_high)
            )
        self.episodes: list[tuple[int, float]] = []
        """(environment step, return) of every training episode that finished"""
        self.global_step = 0

    @torch.inference_mode()
    def collect(self) -> torch.Tensor:
        """Step the environments ``num_steps`` times, filling storage.

        Returns the value of the observation after the last step, on the storage device.
        """
        c, s = self.config, self.storage
        s.wait_for_copy_out()
        if self.obs is None:
            self.obs, _ = self.envs.reset(seed=self.seed)
        first_step = self.global_step
        noise = self.policy.sample_noise((c.num_steps, c.num_envs), self.generator)  # on device
        for t in range(c.num_steps):
            actions = self.act(self.obs, noise[t], t)
            self.obs, rewards, terminated, truncated, info = self.envs.step(actions)
            done = terminated | truncated
            self.record_episodes(rewards, done, t)
            bootstrap = self.bootstrap_truncations(terminated, truncated, info)
            s.rewards[t] = torch.add(bootstrap, rewards, alpha=c.reward_scale)
            s.dones[t] = done
        self.read_back_episodes(first_step)
        return self.policy.value(self.obs).to(s.data.device)

    @torch.inference_mode()
    def act(self, obs: torch.Tensor, noise: torch.Tensor, t: int) -> torch.Tensor:
        """The policy's part of one step: act on ``obs``, store step ``t``, return the actions."""
        s = self.storage
        action, logprob, value = self.policy.act(obs, noise)  # no copy: obs is already here
        s.obs[t], s.actions[t], s.logprobs[t], s.values[t] = obs, action, logprob, value
        if self.spec.discrete:
            return action[:, 0]  # (N,) 0.0 or 1.0: CartPole takes float actions as stored
        return action.clamp(self.action_low, self.action_high)

    def record_episodes(self, rewards: torch.Tensor, dones: torch.Tensor, t: int) -> None:
        """Add step ``t``'s rewards to the running returns; keep those of episodes that ended."""
        self.global_step += self.config.num_envs
        self.episode_returns += rewards
        torch.where(dones, self.episode_returns, self._nan, out=self.finished[t])
        self.episode_returns.masked_fill_(dones, 0.0)

    def read_back_episodes(self, first_step: int) -> None:
        """Append the (environment step, return) of the episodes that ended in this rollout.

        One copy to the host per rollout, whatever the number of steps and environments.
        """
        finished = self.finished.cpu().numpy()  # (T, N): the rollout's one device-to-host copy
        n = self.config.num_envs
        for t, env in zip(*np.nonzero(~np.isnan(finished)), strict=True):
            self.episodes.append((first_step + (int(t) + 1) * n, float(finished[t, env])))

    def bootstrap_truncations(
        self, terminated: torch.Tensor, truncated: torch.Tensor, info: dict[str, Any]
    ) -> torch.Tensor:
        """``gamma * V(final observation)`` where a time limit cut the episode, else 0: (N,)."""
        cut = truncated & ~terminated
        values = self.policy.value(info["final_obs"])  # every env's: no host read of ``cut``
        return torch.where(cut, values * self.config.gamma, 0.0)
