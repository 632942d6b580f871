"""Step 4 of PPO: the rollout. Collectors step the environments with the rollout policy.

Two collectors fill a :class:`~hetero_tutorial.rl.ppo.storage.RolloutStorage`, behind one
interface, :class:`Collector`; the placement's ``batched_envs`` chooses between them
(:func:`make_collector`):

* :class:`GymCollector` steps Gymnasium's vector environments (NumPy, on the CPU). On an
  accelerator, observations go there and actions come back at every step: the
  baseline's two copies per step, marked in :meth:`GymCollector.act`.
* :class:`BatchedCollector` steps batched tensor environments
  (:mod:`hetero_tutorial.rl.envs.batched`) on the rollout device itself. Under the
  ``all-device`` placement the environments, the actor and the storage share one
  device, and nothing in a step crosses to the host:

  * actions stay tensors (CartPole takes ``action[:, 0]``; Pendulum's torques are
    clipped to tensor bounds);
  * rewards and dones go straight into storage;
  * episode returns are summed on the device; the returns of the episodes that ended
    are read back once per rollout (one copy), not per step;
  * truncations are bootstrapped with ``torch.where`` on the values of *every*
    environment's final observation: one more critic pass per step, where asking
    which environments were cut would read a mask on the host (a sync per step);
  * the sampling noise is drawn on the device, from a generator seeded there.

  A step is one function of tensors, :meth:`BatchedCollector.rollout_step`: act, the
  environments' transition, the bootstrap, the episode returns and the step's row of
  storage. Eagerly it runs as written, some forty PyTorch calls at microseconds each; with
  ``config.compile`` ``torch.compile`` traces it whole, a few steps in a row to a graph
  (:meth:`BatchedCollector.rollout_steps`; how many:
  :func:`~hetero_tutorial.speed.rollout_steps_per_call`). Only the draws of the
  environments' first states stay outside, from their own generator, so that both modes
  draw the same numbers.

The *tensor interface* the batched collector needs of its environments:
``reset(seed=...)`` returns ``(obs (N, obs_dim) tensor, info)``;
``draw_initial_states()`` draws the first states (D, N) an autoreset may need;
``transition(actions, first_states)`` steps with tensors and returns tensors ``obs,
reward, terminated, truncated`` and an ``info`` whose ``"final_obs"`` holds every
environment's observation before any autoreset and ``"_final_obs"`` which ended (flags
that may be bytes: read them with ``.bool()``);
``state_tensors``, the tensors a step writes in place; and the attributes ``device``,
``num_envs``, ``single_observation_space``, ``single_action_space`` and ``close()``. The
batched environments have all of it, and so has the tests' wrapper of Gymnasium's own
environments.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import torch
from torch import nn

from hetero_tutorial.core.devices import same_device
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.rl.envs.batched import BATCHED_ENV_IDS, make_batched_env
from hetero_tutorial.rl.envs.spec import EnvSpec, VectorEnvs
from hetero_tutorial.rl.envs.vector import make_vector_env
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.storage import RolloutStorage
from hetero_tutorial.speed import compiled, rollout_steps_per_call


class Collector(Protocol):
    """What the iteration (and an overlapped run's worker) asks of a collector."""

    policy: nn.Module
    """the rollout policy, on the rollout device"""
    storage: RolloutStorage
    """where :meth:`collect` writes the rollout (a worker points it at each slot in turn)"""
    episodes: list[tuple[int, float]]
    """(environment step, return) of every training episode that finished"""
    global_step: int
    """environment steps taken so far, over all parallel environments"""

    def collect(self) -> torch.Tensor:
        """Fill :attr:`storage` with one rollout; return the value of the observation after
        its last step (for the advantages), on the storage device."""
        ...


def make_envs(config: PPOConfig, placement: Placement) -> VectorEnvs:
    """The config's environments, of the kind the placement says: batched tensors on its
    ``env_device`` (``batched_envs``), or Gymnasium's on the CPU.

    The batched environments skip their per-step check of action values (a host sync
    on an accelerator): PPO's actions are valid by construction (a sampled index, a
    clipped torque).
    """
    if placement.batched_envs:
        if config.env_id not in BATCHED_ENV_IDS:
            raise UsageError(
                f"{config.env_id} has no batched version (only {', '.join(BATCHED_ENV_IDS)} do), "
                f"so it cannot run under placement {placement.name!r}, whose environments are "
                "batched. Choose 'hybrid', 'all-accelerator' or 'all-cpu' for it."
            )
        # Eager environments: the collector calls their transition in its own step
        # (BatchedCollector.rollout_step), compiled with it in a compile mode.
        return make_batched_env(
            config.env_id, config.num_envs, placement.env_device, check_actions=False
        )
    return make_vector_env(config.env_id, config.num_envs)


def make_collector(
    envs: VectorEnvs,
    spec: EnvSpec,
    policy: nn.Module,
    storage: RolloutStorage,
    config: PPOConfig,
    placement: Placement,
    seed: int,
) -> Collector:
    """The collector for the placement's kind of environments, acting on its rollout device."""
    kind = BatchedCollector if placement.batched_envs else GymCollector
    return kind(envs, spec, policy, storage, config, placement.rollout_device, seed)


class GymCollector:
    """Steps Gymnasium's vector environments with the rollout policy, each step into storage.

    Everything here runs on the rollout device, except the environments (the CPU) and
    the random draws (a CPU generator). :meth:`collect` fills one rollout; :meth:`act`
    is the policy's part of one step, which the allocator's meter times on its own
    (with ``envs`` None).
    """

    def __init__(
        self,
        envs: VectorEnvs,
        spec: EnvSpec,
        policy: nn.Module,
        storage: RolloutStorage,
        config: PPOConfig,
        device: torch.device,
        seed: int,
    ) -> None:
        self.envs, self.spec, self.policy, self.storage = envs, spec, policy, storage
        self.config, self.device, self.seed = config, device, seed
        self.generator = torch.Generator().manual_seed(seed)  # sampling noise, on the CPU
        self.obs: np.ndarray | None = None  # the environments reset at the first collect
        # rewards and dones arrive from the environments on the CPU; they are staged here and
        # moved to storage once per rollout, since only the advantage computation needs them.
        self.rewards_dones = np.zeros((config.num_steps, config.num_envs, 2), dtype=np.float32)
        self.episode_returns = np.zeros(config.num_envs)
        self.episodes: list[tuple[int, float]] = []
        """(environment step, return) of every training episode that finished"""
        self.global_step = 0

    def collect(self) -> torch.Tensor:
        """Step the environments ``num_steps`` times, filling storage.

        Returns the value of the observation after the last step (for the advantages),
        on the storage device.
        """
        c = self.config
        self.storage.wait_for_copy_out()
        if self.obs is None:
            self.obs, _ = self.envs.reset(seed=self.seed)
        noise = self.policy.sample_noise((c.num_steps, c.num_envs), self.generator).to(self.device)
        for t in range(c.num_steps):
            actions = self.act(self.obs, noise[t], t)
            self.obs, rewards, terminated, truncated, info = self.envs.step(actions)
            self.record_episodes(rewards, terminated | truncated)
            rewards = rewards * c.reward_scale
            self.bootstrap_truncations(rewards, terminated, truncated, info)
            self.rewards_dones[t, :, 0] = rewards
            self.rewards_dones[t, :, 1] = terminated | truncated
        with torch.inference_mode():
            storage, first = self.storage.data, self.storage.columns["rewards"].start
            rewards_dones = torch.from_numpy(self.rewards_dones).to(storage.device)
            storage[..., first : first + 2] = rewards_dones
            last_value = self.policy.value(torch.from_numpy(self.obs).to(self.device))
        return last_value.to(storage.device)

    @torch.inference_mode()
    def act(self, obs: np.ndarray, noise: torch.Tensor, t: int) -> np.ndarray:
        """The policy's part of one vector step: act on ``obs``, store step ``t``, actions out."""
        s = self.storage
        obs_device = torch.from_numpy(obs).to(self.device)  # copy 1 of 2 on an accelerator
        action, logprob, value = self.policy.act(obs_device, noise)
        s.obs[t], s.actions[t], s.logprobs[t], s.values[t] = obs_device, action, logprob, value
        action_cpu = action.cpu().numpy()  # copy 2 of 2 on an accelerator
        if self.spec.discrete:
            return action_cpu[:, 0].astype(np.int64)
        return np.clip(action_cpu, self.spec.action_low, self.spec.action_high)

    def record_episodes(self, rewards: np.ndarray, dones: np.ndarray) -> None:
        self.global_step += self.config.num_envs
        self.episode_returns += rewards
        for env in np.flatnonzero(dones):
            self.episodes.append((self.global_step, float(self.episode_returns[env])))
            self.episode_returns[env] = 0.0

    def bootstrap_truncations(self, rewards, terminated, truncated, info) -> None:
        """Add gamma * V(final observation) to the reward of episodes cut off by a time limit."""
        cut = np.flatnonzero(truncated & ~terminated)
        if cut.size == 0:
            return
        final_obs = torch.as_tensor(np.stack(info["final_obs"][cut]))
        with torch.inference_mode():
            values = self.policy.value(final_obs.to(self.device)).cpu().numpy()
        rewards[cut] += self.config.gamma * values


ROW_FIELDS = ("obs", "actions", "logprobs", "values", "rewards", "dones")
"""What one step of a batched rollout stores: the storage's first fields, in its order."""


class BatchedCollector:
    """Steps batched tensor environments with the rollout policy, on one device, into storage.

    Everything runs on the rollout device, which must be the environments' device:
    a batched collector exists to keep the step in one place.
    """

    def __init__(
        self,
        envs: VectorEnvs,
        spec: EnvSpec,
        policy: nn.Module,
        storage: RolloutStorage,
        config: PPOConfig,
        device: torch.device,
        seed: int,
    ) -> None:
        if not same_device(envs.device, device):
            raise UsageError(
                f"the batched environments run on {envs.device} but the rollout on {device}; "
                "a batched collector keeps the whole step on one device. Use the 'all-device' "
                "placement (both on the accelerator), or batched environments on the CPU with "
                "a placement whose rollout runs there ('hybrid', 'all-cpu')."
            )
        self.envs, self.spec, self.policy, self.storage = envs, spec, policy, storage
        self.config, self.device, self.seed = config, device, seed
        self.generator = torch.Generator(device).manual_seed(seed)  # sampling noise, on the device
        on = {"device": device}
        self.obs = torch.zeros(config.num_envs, *spec.obs_shape, **on)
        """(N, ...): the observations each step overwrites in place"""
        self.started = False  # the environments reset at the first collect
        self.episode_returns = torch.zeros(config.num_envs, **on)  # (N,) running returns
        self.finished = torch.empty(config.num_steps, config.num_envs, **on)
        """(T, N): the return of the episode that ended at step t in env i, NaN if none did"""
        if not spec.discrete:  # the torque bounds, as tensors on the device (copied once)
            self.action_low, self.action_high = (
                torch.as_tensor(bound, **on) for bound in (spec.action_low, spec.action_high)
            )
        self.episodes: list[tuple[int, float]] = []
        """(environment step, return) of every training episode that finished"""
        self.global_step = 0
        if tuple(storage.columns)[: len(ROW_FIELDS)] != ROW_FIELDS:
            raise UsageError(
                f"a batched collector needs storage whose first fields are {ROW_FIELDS}"
            )
        self.row_columns = slice(0, storage.columns[ROW_FIELDS[-1]].stop)
        """the storage columns one step writes: :data:`ROW_FIELDS`"""
        self.step = compiled(
            self.rollout_steps, config.compile_mode, device, "PPO's rollout steps",
            updates=(*envs.state_tensors, self.episode_returns, self.obs),
        )  # fmt: skip
        """:meth:`rollout_steps` in the config's compile mode (first call timed apart)"""
        steps, state = rollout_steps_per_call(config.num_steps), envs.state_tensors[0]
        self.initial = torch.empty(steps, *state.shape, **on)
        """(steps, D, N): the first states drawn for one call of :attr:`step`"""

    @torch.inference_mode()
    def collect(self) -> torch.Tensor:
        """Step the environments ``num_steps`` times, filling storage.

        Returns the value of the observation after the last step, on the storage device.
        """
        c, s = self.config, self.storage
        s.wait_for_copy_out()
        if not self.started:
            self.obs.copy_(self.envs.reset(seed=self.seed)[0])
            self.started = True
        first_step = self.global_step
        noise = self.policy.sample_noise((c.num_steps, c.num_envs), self.generator)  # on device
        rows = s.data[:, :, self.row_columns]  # (T, N, row): each call writes its steps'
        for t in range(0, c.num_steps, len(self.initial)):
            steps = slice(t, t + len(self.initial))
            for drawn in self.initial:  # outside the step: see the module doc
                drawn.copy_(self.envs.draw_initial_states())
            rows[steps], self.finished[steps] = self.step(self.obs, noise[steps], self.initial)
        self.global_step += c.num_steps * c.num_envs
        self.read_back_episodes(first_step)
        return self.policy.value(self.obs).to(s.data.device)

    def rollout_steps(
        self, obs: torch.Tensor, noise: torch.Tensor, initial: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`rollout_step` once per step of ``noise`` (steps, N, ...) and ``initial``
        (steps, D, N), in order: returns the rows (steps, N, row) and the finished returns
        (steps, N). Compiled, one graph."""
        out = [self.rollout_step(obs, *drawn) for drawn in zip(noise, initial, strict=True)]
        return torch.stack([row for row, _ in out]), torch.stack([ended for _, ended in out])

    def rollout_step(
        self, obs: torch.Tensor, noise: torch.Tensor, initial: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One step of the rollout, as a function of tensors: act on ``obs``, step the
        environments (``initial``: their drawn first states), bootstrap the truncations, sum
        the episode returns. Overwrites ``obs`` with the next observations (a buffer that
        stays in place, as CUDA graphs need: a graph's output is overwritten by its next
        replay) and returns the step's row of storage (:data:`ROW_FIELDS`, (N, row)) and
        the returns of the episodes that ended at this step (NaN elsewhere)."""
        c = self.config
        action, logprob, value = self.policy.act(obs, noise)  # no copy: obs is already here
        if self.spec.discrete:
            env_actions = action[:, 0]  # (N,) 0.0 or 1.0: CartPole takes float actions
        else:
            env_actions = action.clamp(self.action_low, self.action_high)
        next_obs, reward, terminated, truncated, info = self.envs.transition(env_actions, initial)
        terminated, truncated, done = (  # bytes where compiled for a CPU (speed.flags)
            flag.bool() for flag in (terminated, truncated, info["_final_obs"])
        )
        # Where a time limit cut the episode, gamma * V(final observation): the values of
        # every env's final observation, so that the host never reads which envs were cut.
        cut = truncated & ~terminated
        bootstrap = torch.where(cut, self.policy.value(info["final_obs"]) * c.gamma, 0.0)
        returns = self.episode_returns + reward  # the running returns, summed on the device
        self.episode_returns.copy_(returns.masked_fill(done, 0.0))
        finished = torch.where(done, returns, float("nan"))
        stored_reward = torch.add(bootstrap, reward, alpha=c.reward_scale)
        scalars = torch.stack([logprob, value, stored_reward, done.float()], dim=1)
        row = torch.cat([obs, action, scalars], dim=1)
        obs.copy_(next_obs)
        return row, finished

    def read_back_episodes(self, first_step: int) -> None:
        """Append the (environment step, return) of the episodes that ended in this rollout.

        One copy to the host per rollout, whatever the number of steps and environments.
        """
        finished = self.finished.cpu().numpy()  # (T, N): the rollout's one device-to-host copy
        n = self.config.num_envs
        for t, env in zip(*np.nonzero(~np.isnan(finished)), strict=True):
            self.episodes.append((first_step + (int(t) + 1) * n, float(finished[t, env])))
