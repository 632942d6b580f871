"""PPO (clipped surrogate, GAE) under any placement, written in the order an iteration runs.

The algorithm is the one CleanRL's ``ppo.py`` documents; what this module adds is
*where* each phase runs, taken from a :class:`~hetero_tutorial.core.placement.Placement`.
The file reads top to bottom like one iteration:

1. **configuration**: :class:`PPOConfig` (in ``ppo_config.py``);
2. **networks**: the actor-critic, placed as a learner and a rollout copy (:func:`place_policy`);
3. **storage**: one preallocated tensor per rollout (:class:`RolloutStorage`, in
   ``rollout_storage.py``);
4. **rollout**: :class:`Collector` steps the environments with the rollout policy. On an
   accelerator, observations go there and actions come back every step: the baseline's two
   copies per step (batched tensor environments take ppo_device.py's TensorCollector);
5. **advantages**: :func:`gae`, computed where the rollout is stored (NumPy on the CPU);
6. **update**: :func:`ppo_loss` and :class:`Learner`'s epochs of minibatch steps;
7. **the iteration**: :class:`PPOTrainer` runs rollout, *transfer* (one batched copy of
   the rollout to the update device, ``non_blocking`` from pinned memory: the hybrid
   plan's only big copy), update and *weight_sync* (the learner's weights into the
   rollout copy), each timed as a phase. :mod:`~hetero_tutorial.rl.ppo_runs` measures runs.

Random numbers come from two seeded generators, one for the rollout (sampling noise: on
the CPU, or on batched environments' device) and one for the update (minibatch order, on
the CPU), so placements that draw on the same device make the same decisions from the same
seed: the placement changes the speed, not the learning. The overlapped pipeline relies on
that split too: its workers own the rollout's stream and its learner the update's.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.profiler import record_function

from hetero_tutorial.core.placement import Placement, as_placement
from hetero_tutorial.core.timing import PhaseTimer
from hetero_tutorial.core.transfers import CopyCounter
from hetero_tutorial.rl.envs import EnvSpec, spec_of
from hetero_tutorial.rl.flat import FlatParameters, PerTensorParameters
from hetero_tutorial.rl.nets import DiscreteActorCritic, GaussianActorCritic
from hetero_tutorial.rl.ppo_config import PPOConfig
from hetero_tutorial.rl.ppo_device import TensorCollector, make_envs
from hetero_tutorial.rl.rollout_storage import RolloutStorage

PHASES = ("rollout", "advantages", "transfer", "update", "weight_sync")
"""The timed phases of an iteration, in the order they run (the allocator prices the same)."""

Array = np.ndarray | torch.Tensor
"""A NumPy array or a tensor on any device: GAE runs on whichever holds the rollout."""

# --- 2. Networks ----------------------------------------------------------------------------

Parameters = FlatParameters | PerTensorParameters


def make_policy(spec: EnvSpec, config: PPOConfig) -> DiscreteActorCritic | GaussianActorCritic:
    """The actor-critic for ``spec``'s action space, paired or as two MLPs (``config``)."""
    policy_type = DiscreteActorCritic if spec.discrete else GaussianActorCritic
    return policy_type(spec.obs_dim, spec.action_dim, config.hidden, config.paired_networks)


def place_policy(
    policy_cpu: nn.Module, placement: Placement, flat: bool = True
) -> tuple[nn.Module, nn.Module, Parameters, Parameters]:
    """``(learner, rollout policy, learner's parameters, rollout policy's)`` for a placement.

    The learner lives on the update device. The rollout uses the learner itself when
    both phases share a device, otherwise a copy on the rollout device, refreshed with
    ``rollout_params.copy_from(learner_params)``. Both are copies: ``policy_cpu`` itself
    is left as it was (where it was). With ``flat`` (the default) every
    network's parameters live in one tensor, so zeroing, clipping, the optimizer step
    and the weight sync are one or two calls each (see flat.py).
    """
    params = FlatParameters if flat else PerTensorParameters
    learner = copy.deepcopy(policy_cpu).to(placement.update)
    learner_params = params(learner)
    if placement.rollout == placement.update:
        return learner, learner, learner_params, learner_params
    rollout_policy = copy.deepcopy(policy_cpu).to(placement.rollout)
    return learner, rollout_policy, learner_params, params(rollout_policy, with_grad=False)


# --- 3. Storage: RolloutStorage, in rollout_storage.py --------------------------------------


# --- 4. Rollout -----------------------------------------------------------------------------


class Collector:
    """Steps the environments with the rollout policy, writing each step into storage.

    Everything here runs on the rollout device, except the environments (the CPU) and
    the random draws (a CPU generator). :meth:`collect` fills one rollout; :meth:`act`
    is the policy's part of one step, which the allocator's meter times on its own
    (with ``envs`` None).
    """

    def __init__(
        self,
        envs: Any,
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


# --- 5. Advantages --------------------------------------------------------------------------


def gae(
    rewards: Array,
    values: Array,
    dones: Array,
    last_value: Array,
    gamma: float,
    lam: float,
    out: Array,
) -> Array:
    """Generalised advantage estimates, written into ``out`` and returned.

    All arguments are (T, N) arrays (NumPy or torch, on any device) except
    ``last_value`` (N,), the value of the observation after the last step.
    ``dones[t]`` marks that the episode ended at step ``t`` (truncations have
    already had ``gamma * V(final observation)`` added to their reward), so no
    value or advantage flows back across it. NumPy and torch share the
    indexing used here, so one function serves CPU and accelerator storage.
    """
    next_value, next_advantage = last_value, 0.0
    for t in reversed(range(len(rewards))):
        not_done = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * not_done - values[t]
        out[t] = delta + gamma * lam * not_done * next_advantage
        next_value, next_advantage = values[t], out[t]
    return out


def compute_advantages(storage: RolloutStorage, last_value: torch.Tensor, c: PPOConfig) -> None:
    """GAE and the returns of a filled rollout, where it is stored."""
    s = storage
    arrays = (s.rewards, s.values, s.dones, last_value, s.advantages)
    if s.data.device.type == "cpu":
        # NumPy runs this short sequential loop several times faster than torch on the CPU.
        arrays = tuple(a.numpy() for a in arrays)
    gae(*arrays[:4], c.gamma, c.gae_lambda, out=arrays[4])
    s.returns.copy_(s.advantages + s.values)


# --- 6. Update ------------------------------------------------------------------------------


def ppo_loss(
    policy: nn.Module, mb: dict[str, torch.Tensor], c: PPOConfig
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(loss, ratio, log_ratio)`` of one minibatch: clipped surrogate, value loss, entropy.

    ``mb`` holds the stored fields (``obs``, ``actions``, ``logprobs``, ``values``,
    ``advantages``, ``returns``); ``logprobs`` are the behaviour policy's, so the
    ratio compares the learner with the policy that acted.
    """
    logprob, entropy, value = policy.evaluate(mb["obs"], mb["actions"])
    log_ratio = logprob - mb["logprobs"]
    ratio = log_ratio.exp()
    advantages = mb["advantages"]
    if c.norm_adv:
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    clipped_ratio = ratio.clamp(1 - c.clip_coef, 1 + c.clip_coef)
    policy_loss = torch.max(-advantages * ratio, -advantages * clipped_ratio).mean()
    value_error = (value - mb["returns"]).pow(2)
    if c.clip_vloss:
        clipped = mb["values"] + (value - mb["values"]).clamp(-c.clip_coef, c.clip_coef)
        value_error = torch.max(value_error, (clipped - mb["returns"]).pow(2))
    loss = policy_loss - c.ent_coef * entropy.mean() + c.vf_coef * 0.5 * value_error.mean()
    return loss, ratio, log_ratio


@torch.no_grad()
def ratio_stats(ratio: torch.Tensor, log_ratio: torch.Tensor, clip_coef: float) -> torch.Tensor:
    """``(approx_kl, clipfrac)`` of a minibatch, as one tensor on its device (no copy back).

    How far the learner is from the behaviour policy: CleanRL's KL estimate
    ``(ratio - 1) - log ratio`` and the fraction of ratios the clipping cut.
    """
    approx_kl = ((ratio - 1) - log_ratio).mean()
    clipfrac = ((ratio - 1).abs() > clip_coef).float().mean()
    return torch.stack([approx_kl, clipfrac])


class Learner:
    """The update: epochs of clipped-surrogate minibatch steps, on the update device."""

    def __init__(self, policy: nn.Module, params: Parameters, config: PPOConfig, seed: int) -> None:
        self.policy, self.params, self.config = policy, params, config
        self.optimizer = params.adam(lr=config.learning_rate, eps=1e-5)
        self.generator = torch.Generator().manual_seed(seed)  # minibatch order, on the CPU

    def anneal(self, iteration: int) -> None:
        """Set the learning rate for ``iteration`` (linear decay to zero, if configured)."""
        c = self.config
        if c.anneal_lr:
            for group in self.optimizer.param_groups:
                group["lr"] = c.learning_rate * (1.0 - iteration / c.num_iterations)

    def minibatch_step(self, mb: dict[str, torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """One gradient step on one minibatch; returns ``(loss, ratio, log_ratio)``."""
        loss, ratio, log_ratio = ppo_loss(self.policy, mb, self.config)
        self.params.zero_grad()
        loss.backward()
        self.params.clip_grad_norm_(self.config.max_grad_norm)
        self.optimizer.step()
        return loss, ratio, log_ratio

    def update(self, batch: list[torch.Tensor], storage: RolloutStorage) -> dict[str, float]:
        """``update_epochs`` passes over the rollout ``batch`` ((T * N, ...) tensors, here).

        Each epoch visits the transitions in a new random order in full minibatches (a
        remainder smaller than a minibatch is left out of that epoch).
        """
        c, size = self.config, len(batch[0])
        # Every epoch's order, drawn on the CPU and copied in one go: a copy from pageable
        # memory waits for the accelerator, so one copy per epoch would stall it per epoch.
        orders = torch.stack(
            [torch.randperm(size, generator=self.generator) for _ in range(c.update_epochs)]
        ).to(batch[0].device)
        for order in orders:
            if c.gather_per_epoch:  # one gather; minibatches are slices of it
                shuffled = storage.views([t[order] for t in batch])
            for start in range(0, size - c.minibatch_size + 1, c.minibatch_size):
                if c.gather_per_epoch:
                    mb = {k: v[start : start + c.minibatch_size] for k, v in shuffled.items()}
                else:
                    index = order[start : start + c.minibatch_size]
                    mb = storage.views([t[index] for t in batch])
                loss, ratio, log_ratio = self.minibatch_step(mb)
        # Diagnostics of the last minibatch, as CleanRL logs them, and a subclass's own.
        kl, clipfrac = ratio_stats(ratio, log_ratio, c.clip_coef)
        stats = {"approx_kl": kl, "clipfrac": clipfrac, "loss": loss.detach()}
        stats |= self.extra_stats()
        values = torch.stack(list(stats.values())).tolist()  # one copy back
        return dict(zip(stats, values, strict=True))

    def extra_stats(self) -> dict[str, torch.Tensor]:
        """More 0-d diagnostics for :meth:`update` to bring back in its one copy (none here)."""
        return {}


# --- 7. The iteration -----------------------------------------------------------------------

UPDATE_SEED_OFFSET = 1_000_003
"""The update's generator is seeded with ``seed + UPDATE_SEED_OFFSET``: a stream of its own."""


class PPOTrainer:
    """One PPO run's state, advanced one iteration (rollout + update) at a time.

    ``envs`` and ``policy`` default to the config's environments (batched tensors on
    ``placement.env`` if the placement or the config says so) and actor-critic; the CNN
    workload passes Atari frames and Nature CNNs instead.
    ``count_copies``: run the first iteration under a :class:`CopyCounter` (which
    slows it; every iteration runs the same code, so its counts hold for all).
    :func:`~hetero_tutorial.rl.ppo_runs.train` runs trainers to the end and measures them.
    """

    def __init__(
        self,
        config: PPOConfig,
        placement: Placement | str,
        seed: int = 0,
        *,
        envs: Any = None,
        policy: nn.Module | None = None,
        count_copies: bool = False,
    ) -> None:
        config.validate()
        self.config, self.seed = config, seed
        self.placement = placement = as_placement(placement)
        batched = config.batched_envs or placement.batched_envs  # tensor envs and collector
        self.envs = envs if envs is not None else make_envs(config, placement.env, batched)
        self.spec = spec_of(self.envs, config.env_id)
        torch.manual_seed(seed)
        policy = policy if policy is not None else make_policy(self.spec, config)
        learner_policy, rollout_policy, learner_params, self.rollout_params = place_policy(
            policy, placement, config.flat_parameters
        )
        self.storage = RolloutStorage(
            config.num_steps, config.num_envs, self.spec, placement.storage, placement.pin_storage
        )
        self.collector = (TensorCollector if batched else Collector)(
            self.envs, self.spec, rollout_policy, self.storage, config, placement.rollout, seed
        )
        self.learner = Learner(learner_policy, learner_params, config, seed + UPDATE_SEED_OFFSET)
        self.timer = PhaseTimer(placement.devices)
        self.counter = CopyCounter() if count_copies else None
        self.iteration_seconds: list[float] = []
        """wall seconds of each iteration so far"""
        self.last_stats: dict[str, float] = {}

    @property
    def global_step(self) -> int:
        """Environment steps taken so far, over all parallel environments."""
        return self.collector.global_step

    @property
    def done(self) -> bool:
        return len(self.iteration_seconds) >= self.config.num_iterations

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the block as phase ``name``, count its copies, and name it for torch.profiler.

        ``record_function`` costs tens of microseconds per phase when no profiler runs.
        """
        with (
            record_function(name),
            self.timer.phase(name),
            self.counter.phase(name) if self.counter else nullcontext(),
        ):
            yield

    def iteration(self, index: int) -> None:
        """One rollout, transfer, update and weight sync, each where the placement puts it."""
        self.learner.anneal(index)
        with self.phase("rollout"):
            last_value = self.collector.collect()
        with self.phase("advantages"):
            compute_advantages(self.storage, last_value, self.config)
        with self.phase("transfer"):
            batch = self.storage.flat_batch(self.placement.update, self.placement.pin_storage)
        with self.phase("update"):
            self.last_stats = self.learner.update(batch, self.storage)
        if self.collector.policy is not self.learner.policy:
            with self.phase("weight_sync"):
                self.rollout_params.copy_from(self.learner.params)  # one copy when flat

    def run_iteration(self) -> None:
        """Run the next iteration (a rollout and an update), timed; the first one under the
        copy counter, if asked. (A *step* is one environment step, as in DDPG.)"""
        index = len(self.iteration_seconds)
        counting = self.counter is not None and index == 0
        began = time.perf_counter()
        with self.counter if counting else nullcontext():
            self.iteration(index)
        self.iteration_seconds.append(time.perf_counter() - began)

    def close(self) -> None:
        """Close the environments."""
        self.envs.close()
