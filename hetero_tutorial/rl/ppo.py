"""PPO (clipped surrogate, GAE) that runs under any placement.

The algorithm is the one CleanRL's ``ppo.py`` documents; what this module adds
is *where* each phase runs, taken from a :class:`~hetero_tutorial.core.devices.Placement`:

* **rollout**: the actor steps the (CPU) environments. When the rollout device
  is not the update device, the rollout uses its own copy of the policy
  (``rollout_policy``), synchronised once per update. Observations go to the
  rollout device and actions come back each environment step: for an
  accelerator these are the two copies per step of the all-accelerator baseline.
* **storage**: the rollout is written, in place, into one preallocated tensor
  on the storage device (pinned when it feeds an accelerator).
* **transfer**: one batched copy of that tensor to the update device
  (``non_blocking`` from pinned memory): the hybrid plan's only big copy.
* **update**: epochs of minibatch gradient steps on the update device.
* **weight_sync**: the learner's weights copied into the rollout copy.

Random numbers (sampling noise, minibatch order) are all drawn on the CPU from
one seeded generator, so every placement makes the same decisions from the
same seed: changing the placement changes the speed, not the learning.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.profiler import record_function

from hetero_tutorial.core.errors import UsageError, require_minibatch_fits, require_positive
from hetero_tutorial.core.placement import Placement
from hetero_tutorial.core.timing import PhaseTimer, torch_threads
from hetero_tutorial.core.transfers import CopyCounter
from hetero_tutorial.core.utilisation import UtilisationSampler
from hetero_tutorial.rl.envs import EnvSpec, env_spec, evaluate, make_vector_env
from hetero_tutorial.rl.flat import FlatParameters
from hetero_tutorial.rl.nets import DiscreteActorCritic, GaussianActorCritic

PHASES = ("rollout", "transfer", "update", "weight_sync")


@dataclass
class PPOConfig:
    """Every knob of a PPO run. :meth:`tuned` gives good defaults for each environment."""

    env_id: str = "CartPole-v1"
    """the Gymnasium environment id (Discrete or 1-D Box actions, flat observations)"""
    total_steps: int = 100_000
    """environment steps to train for, counted over all parallel environments"""
    num_envs: int = 4
    """the number of parallel environments"""
    num_steps: int = 128
    """steps per environment in each rollout (a rollout holds num_envs x num_steps transitions)"""
    hidden: int = 64
    """width of the two hidden layers of the actor and of the critic"""
    learning_rate: float = 2.5e-4
    """Adam's learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to zero over the run"""
    gamma: float = 0.99
    """the discount factor"""
    gae_lambda: float = 0.95
    """lambda of generalised advantage estimation"""
    minibatch_size: int = 128
    """transitions per gradient step"""
    update_epochs: int = 4
    """passes over each rollout"""
    clip_coef: float = 0.2
    """the surrogate clipping coefficient"""
    clip_vloss: bool = True
    """clip the value loss like the policy loss"""
    ent_coef: float = 0.01
    """weight of the entropy bonus"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    max_grad_norm: float = 0.5
    """the maximum norm of the gradient"""
    norm_adv: bool = True
    """normalise advantages within each minibatch"""
    reward_scale: float = 1.0
    """multiply rewards by this for learning (reported returns stay unscaled)"""

    @classmethod
    def tuned(cls, env_id: str, **overrides: Any) -> PPOConfig:
        """The defaults tuned for ``env_id`` (see ``TUNED``), with ``overrides`` applied."""
        known = {f.name for f in fields(cls)}
        unknown = set(overrides) - known
        if unknown:
            raise UsageError(f"unknown PPO setting(s) {sorted(unknown)}; known: {sorted(known)}")
        return replace(cls(env_id=env_id, **TUNED.get(env_id, {})), **overrides)

    @property
    def batch_size(self) -> int:
        """Transitions per rollout."""
        return self.num_envs * self.num_steps

    @property
    def num_iterations(self) -> int:
        """Rollout-and-update iterations needed to reach ``total_steps`` (rounded up)."""
        return -(-self.total_steps // self.batch_size)

    def validate(self) -> None:
        """Raise a clear error for settings that cannot work."""
        names = (
            "total_steps",
            "num_envs",
            "num_steps",
            "hidden",
            "minibatch_size",
            "update_epochs",
        )
        require_positive(**{name: getattr(self, name) for name in names})
        require_minibatch_fits(self.minibatch_size, self.num_envs, self.num_steps)
        if not (0 < self.gamma <= 1 and 0 <= self.gae_lambda <= 1):
            raise UsageError("gamma must lie in (0, 1] and gae_lambda in [0, 1]")
        if self.norm_adv and self.minibatch_size < 2:
            raise UsageError(
                "minibatch_size 1 with norm_adv: one advantage has no standard deviation, and "
                "normalising it would turn every weight into NaN. Use minibatches of 2 or more."
            )
        for name in ("learning_rate", "clip_coef", "max_grad_norm"):
            if not getattr(self, name) > 0:
                raise UsageError(f"{name} must be positive, got {getattr(self, name)}")


TUNED: dict[str, dict[str, Any]] = {
    # RL Baselines3 Zoo's CartPole settings, with 10 epochs instead of 20: solves it (greedy
    # return 500) within 100k steps on every seed we tried, twice as fast as 20 epochs.
    "CartPole-v1": {
        "num_envs": 8,
        "num_steps": 32,
        "learning_rate": 1e-3,
        "gamma": 0.98,
        "gae_lambda": 0.8,
        "minibatch_size": 256,
        "update_epochs": 10,
        "ent_coef": 0.0,
    },
    "Pendulum-v1": {
        "num_envs": 4,
        "num_steps": 512,
        "learning_rate": 1e-3,
        "gamma": 0.9,
        "minibatch_size": 64,
        "update_epochs": 10,
        "ent_coef": 0.0,
        "reward_scale": 0.1,
    },
}
"""Per-environment overrides of :class:`PPOConfig`'s defaults."""


def make_policy(spec: EnvSpec, hidden: int) -> DiscreteActorCritic | GaussianActorCritic:
    """The actor-critic for ``spec``'s action space."""
    if spec.discrete:
        return DiscreteActorCritic(spec.obs_dim, spec.action_dim, hidden)
    return GaussianActorCritic(spec.obs_dim, spec.action_dim, hidden)


def gae(rewards, values, dones, last_value, gamma: float, lam: float, out):
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


class RolloutStorage:
    """One preallocated (T, N, F) float32 tensor holding a whole rollout, filled in place.

    Keeping every field in one tensor makes the hybrid plan's transfer a single
    copy and a minibatch a single gather. The named attributes (``obs``,
    ``actions``, ``logprobs``, ``values``, ``rewards``, ``dones``, ``advantages``,
    ``returns``) are views into it.
    """

    def __init__(
        self, num_steps: int, num_envs: int, spec: EnvSpec, device: torch.device, pin: bool
    ) -> None:
        widths = {
            "obs": spec.obs_dim,
            "actions": 1 if spec.discrete else spec.action_dim,
            "logprobs": 1,
            "values": 1,
            "rewards": 1,
            "dones": 1,
            "advantages": 1,
            "returns": 1,
        }
        self.columns: dict[str, slice] = {}
        start = 0
        for name, width in widths.items():
            self.columns[name] = slice(start, start + width)
            start += width
        self.data = torch.zeros(num_steps, num_envs, start, device=device)
        if pin:
            self.data = self.data.pin_memory()
        for name, view in self.views(self.data).items():
            setattr(self, name, view)

    @property
    def width(self) -> int:
        return self.data.shape[-1]

    def views(self, data: torch.Tensor) -> dict[str, torch.Tensor]:
        """Named views of any (..., F) tensor laid out like this storage.

        Vector fields (obs, actions) keep their last dimension; scalar fields drop it.
        """
        return {
            name: data[..., cols] if name in ("obs", "actions") else data[..., cols.start]
            for name, cols in self.columns.items()
        }


@dataclass
class PPORun:
    """What a run measured: speed, where the time went, copies, and how well it learned."""

    config: PPOConfig
    placement: str
    seed: int
    env_steps: int
    wall_seconds: float
    phase_seconds: dict[str, float]
    iteration_seconds: list[float]
    copies: dict[str, dict[str, float]]
    """Per phase: host<->device copies and bytes per iteration and per environment step."""
    episodes: list[tuple[int, float]]
    """(environment step, return) of every training episode that finished."""
    evaluations: list[tuple[int, float]]
    """(environment step, mean greedy return) of the evaluations made during training."""
    eval_returns: list[float]
    """Greedy returns of the evaluation episodes after training."""
    utilisation: dict[str, Any]
    update_stats: dict[str, float]
    """Diagnostics of the last minibatch: approximate KL divergence, clip fraction, loss."""
    threads: int
    policy: nn.Module = field(repr=False)
    """The trained learner (on the update device)."""

    @property
    def env_steps_per_s(self) -> float:
        return self.env_steps / self.wall_seconds

    @property
    def eval_return_mean(self) -> float:
        return float(np.mean(self.eval_returns)) if self.eval_returns else float("nan")

    @property
    def median_iteration_seconds(self) -> float:
        """Median wall time of an iteration, leaving out the first (warm-up, copy counting)."""
        later = self.iteration_seconds[1:] or self.iteration_seconds
        return float(np.median(later))

    @property
    def copies_per_env_step(self) -> float:
        return sum(phase["count_per_env_step"] for phase in self.copies.values())

    def fields(self) -> dict[str, Any]:
        """The run as the fields of a ``bench.ppo`` results record."""
        return {
            "env_id": self.config.env_id,
            "placement": self.placement,
            "seed": self.seed,
            "config": asdict(self.config),
            "threads": self.threads,
            "env_steps": self.env_steps,
            "wall_seconds": self.wall_seconds,
            "env_steps_per_s": self.env_steps_per_s,
            "eval_return_mean": self.eval_return_mean,
            "eval_returns": self.eval_returns,
            "phase_seconds": self.phase_seconds,
            "iteration_seconds": self.iteration_seconds,
            "median_iteration_seconds": self.median_iteration_seconds,
            "copies": self.copies,
            "copies_per_env_step": self.copies_per_env_step,
            "episodes": self.episodes,
            "evaluations": self.evaluations,
            "utilisation": self.utilisation,
            "update_stats": self.update_stats,
        }


def place_policy(
    policy_cpu: nn.Module, placement: Placement
) -> tuple[nn.Module, nn.Module, FlatParameters, FlatParameters]:
    """``(learner, rollout policy, learner's flat parameters, rollout policy's)`` for a placement.

    The learner lives on the update device. The rollout uses the learner itself when
    both phases share a device, otherwise a copy on the rollout device, refreshed with
    ``rollout_flat.copy_from(learner_flat)``: one copy of all the weights. Every
    network's parameters live in one flat tensor, so zeroing, clipping, the optimizer
    step and the weight sync are one or two calls each (see flat.py).
    """
    learner = copy.deepcopy(policy_cpu).to(placement.update)
    learner_flat = FlatParameters(learner)
    if placement.rollout == placement.update:
        return learner, learner, learner_flat, learner_flat
    rollout_policy = policy_cpu.to(placement.rollout)
    return learner, rollout_policy, learner_flat, FlatParameters(rollout_policy, with_grad=False)


class PPOTrainer:
    """One PPO run's state, advanced one iteration at a time.

    :func:`train` runs one trainer to the end; :func:`train_side_by_side` runs
    several, interleaving their iterations, so that drift in the machine's speed
    hits every placement alike.
    """

    def __init__(
        self,
        config: PPOConfig,
        placement: Placement,
        seed: int = 0,
        *,
        count_copies: bool = True,
        eval_every: int = 0,
        eval_episodes: int = 10,
    ) -> None:
        config.validate()
        self.config, self.placement, self.seed = config, placement, seed
        self.count_copies, self.eval_every, self.eval_episodes = (
            count_copies,
            eval_every,
            eval_episodes,
        )
        self.spec = env_spec(config.env_id)
        self.envs = make_vector_env(config.env_id, config.num_envs)
        self.obs, _ = self.envs.reset(seed=seed)
        torch.manual_seed(seed)
        self.rng = torch.Generator().manual_seed(seed)  # every random draw, on the CPU
        self.learner, self.rollout_policy, self.learner_flat, self.rollout_flat = place_policy(
            make_policy(self.spec, config.hidden), placement
        )
        self.optimizer = self.learner_flat.adam(lr=config.learning_rate, eps=1e-5)
        self.storage = RolloutStorage(
            config.num_steps, config.num_envs, self.spec, placement.storage, placement.pin_storage
        )
        # rewards and dones arrive from the environments on the CPU; they are staged here and
        # moved to storage once per rollout, since only the advantage computation needs them.
        self.reward_done_host = np.zeros((config.num_steps, config.num_envs, 2), dtype=np.float32)
        self.timer = PhaseTimer(placement.devices)
        self.counter: CopyCounter | None = None
        self.episode_returns = np.zeros(config.num_envs)
        self.episodes: list[tuple[int, float]] = []
        self.evaluations: list[tuple[int, float]] = []
        self.iteration_seconds: list[float] = []
        self.global_step = 0
        if eval_every:
            self.evaluations.append((0, self.greedy_return()))

    @property
    def done(self) -> bool:
        return len(self.iteration_seconds) >= self.config.num_iterations

    def step(self) -> None:
        """Run the next iteration (the first one under the copy counter, if asked), timed."""
        index = len(self.iteration_seconds)
        counting = self.count_copies and index == 0
        if counting:
            self.counter = CopyCounter()
        began = time.perf_counter()
        with self.counter if counting else nullcontext():
            self.obs = self.iteration(self.obs, index)
        self.iteration_seconds.append(time.perf_counter() - began)
        if self.eval_every and self.global_step // self.eval_every > (
            self.evaluations[-1][0] // self.eval_every
        ):
            self.evaluations.append((self.global_step, self.greedy_return()))

    def close(self) -> None:
        """Close the environments (a finished trainer's :meth:`result` does it too)."""
        self.envs.close()

    def greedy_returns(self, episodes: int) -> list[float]:
        """Returns of ``episodes`` greedy episodes (evaluation seeds apart from training's)."""
        return evaluate(self.greedy_actions, self.config.env_id, episodes, 10_000 + self.seed)

    def greedy_return(self) -> float:
        return float(np.mean(self.greedy_returns(self.eval_episodes or 10)))

    def result(self, utilisation: dict[str, Any], threads: int) -> PPORun:
        """Close the environments and package what was measured."""
        eval_returns = self.greedy_returns(self.eval_episodes) if self.eval_episodes else []
        self.envs.close()
        return PPORun(
            config=self.config,
            placement=self.placement.name,
            seed=self.seed,
            env_steps=self.global_step,
            wall_seconds=sum(self.iteration_seconds),
            phase_seconds=dict(self.timer.seconds),
            iteration_seconds=self.iteration_seconds,
            copies=self.copies(),
            episodes=self.episodes,
            evaluations=self.evaluations,
            eval_returns=eval_returns,
            utilisation=utilisation,
            update_stats=self.last_stats,
            threads=threads,
            policy=self.learner,
        )

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

    def _to_env_actions(self, actions: np.ndarray) -> np.ndarray:
        if self.spec.discrete:
            return actions[:, 0].astype(np.int64)
        return np.clip(actions, self.spec.action_low, self.spec.action_high)

    def _bootstrap_truncations(self, rewards, terminated, truncated, info) -> None:
        """Add gamma * V(final observation) to the reward of episodes cut off by a time limit."""
        cut = np.flatnonzero(truncated & ~terminated)
        if cut.size == 0:
            return
        final_obs = torch.as_tensor(np.stack(info["final_obs"][cut]), dtype=torch.float32)
        with torch.inference_mode():
            values = self.rollout_policy.value(final_obs.to(self.placement.rollout)).cpu().numpy()
        rewards[cut] += self.config.gamma * values

    def rollout(self, obs: np.ndarray) -> np.ndarray:
        """Step the environments ``num_steps`` times, filling storage; return the next obs."""
        device, storage = self.placement.rollout, self.storage
        shape = (self.config.num_steps, self.config.num_envs)
        noise = self.rollout_policy.sample_noise(shape, self.rng).to(device)  # drawn on the CPU
        for t in range(self.config.num_steps):
            with torch.inference_mode():
                obs_device = torch.from_numpy(obs).to(device)  # copy 1 of 2 on an accelerator
                action, logprob, value = self.rollout_policy.act(obs_device, noise[t])
                storage.obs[t] = obs_device
                storage.actions[t] = action
                storage.logprobs[t] = logprob
                storage.values[t] = value
                action_cpu = action.cpu().numpy()  # copy 2 of 2 on an accelerator
            obs, rewards, terminated, truncated, info = self.envs.step(
                self._to_env_actions(action_cpu)
            )
            dones = terminated | truncated
            self._record_episodes(rewards, dones)
            rewards = rewards * self.config.reward_scale
            self._bootstrap_truncations(rewards, terminated, truncated, info)
            self.reward_done_host[t, :, 0] = rewards
            self.reward_done_host[t, :, 1] = dones
        with torch.inference_mode():
            rewards_dones = slice(storage.columns["rewards"].start, storage.columns["dones"].stop)
            storage.data[..., rewards_dones] = torch.from_numpy(self.reward_done_host).to(
                storage.data.device
            )
            last_value = self.rollout_policy.value(torch.from_numpy(obs).to(device))
            self._advantages(last_value.to(storage.data.device))
        return obs

    def _record_episodes(self, rewards: np.ndarray, dones: np.ndarray) -> None:
        self.global_step += self.config.num_envs
        self.episode_returns += rewards
        for env in np.flatnonzero(dones):
            self.episodes.append((self.global_step, float(self.episode_returns[env])))
            self.episode_returns[env] = 0.0

    def _advantages(self, last_value: torch.Tensor) -> None:
        s, c = self.storage, self.config
        arrays = (s.rewards, s.values, s.dones, last_value, s.advantages)
        if s.data.device.type == "cpu":
            # NumPy runs this short sequential loop several times faster than torch on the CPU.
            arrays = tuple(a.numpy() for a in arrays)
        gae(*arrays[:4], c.gamma, c.gae_lambda, out=arrays[4])
        s.returns.copy_(s.advantages + s.values)

    def update(self, batch: torch.Tensor) -> dict[str, float]:
        """``update_epochs`` passes of clipped-surrogate minibatch steps over the rollout.

        ``batch``: the rollout on the update device, (T * N, F). Each epoch visits
        the transitions in a new random order in full minibatches (a remainder
        smaller than a minibatch is left out of that epoch).
        """
        c = self.config
        # Every epoch's order, drawn on the CPU and copied in one go: a copy from pageable
        # memory waits for the accelerator, so one copy per epoch would stall it per epoch.
        orders = torch.stack(
            [torch.randperm(len(batch), generator=self.rng) for _ in range(c.update_epochs)]
        ).to(batch.device)
        for order in orders:
            shuffled = self.storage.views(batch[order])  # one gather; minibatches are slices
            for start in range(0, len(batch) - c.minibatch_size + 1, c.minibatch_size):
                mb = {
                    name: column[start : start + c.minibatch_size]
                    for name, column in shuffled.items()
                }
                logprob, entropy, value = self.learner.evaluate(mb["obs"], mb["actions"])
                log_ratio = logprob - mb["logprobs"]
                ratio = log_ratio.exp()
                advantages = mb["advantages"]
                if c.norm_adv:
                    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
                policy_loss = torch.max(
                    -advantages * ratio,
                    -advantages * ratio.clamp(1 - c.clip_coef, 1 + c.clip_coef),
                ).mean()
                value_error = (value - mb["returns"]).pow(2)
                if c.clip_vloss:
                    clipped = mb["values"] + (value - mb["values"]).clamp(-c.clip_coef, c.clip_coef)
                    value_error = torch.max(value_error, (clipped - mb["returns"]).pow(2))
                value_loss = 0.5 * value_error.mean()
                loss = policy_loss - c.ent_coef * entropy.mean() + c.vf_coef * value_loss
                self.learner_flat.zero_grad()
                loss.backward()
                self.learner_flat.clip_grad_norm_(c.max_grad_norm)
                self.optimizer.step()
        with torch.no_grad():  # diagnostics of the last minibatch, as CleanRL logs them
            approx_kl = ((ratio - 1) - log_ratio).mean()
            clipfrac = ((ratio - 1).abs() > c.clip_coef).float().mean()
            stats = torch.stack([approx_kl, clipfrac, loss]).tolist()  # one copy back
        return dict(zip(("approx_kl", "clipfrac", "loss"), stats, strict=True))

    def iteration(self, obs: np.ndarray, index: int) -> np.ndarray:
        """One rollout, transfer, update and weight sync; returns the next observation."""
        c = self.config
        if c.anneal_lr:
            for group in self.optimizer.param_groups:
                group["lr"] = c.learning_rate * (1.0 - index / c.num_iterations)
        with self.phase("rollout"):
            obs = self.rollout(obs)
        with self.phase("transfer"):
            batch = self.storage.data.reshape(-1, self.storage.width).to(
                self.placement.update, non_blocking=self.placement.pin_storage
            )
        with self.phase("update"):
            self.last_stats = self.update(batch)
        if self.rollout_policy is not self.learner:
            with self.phase("weight_sync"):
                self.rollout_flat.copy_from(self.learner_flat)  # one copy
        return obs

    def greedy_actions(self, obs: np.ndarray) -> np.ndarray:
        """The trained policy's greedy actions for a batch of observations, ready for env.step."""
        with torch.inference_mode():
            obs_device = torch.from_numpy(obs).to(self.placement.rollout)
            actions = self.rollout_policy.greedy(obs_device).cpu().numpy()
        if self.spec.discrete:
            return actions
        return np.clip(actions, self.spec.action_low, self.spec.action_high)

    def copies(self) -> dict[str, dict[str, float]]:
        """Copies per phase, per iteration and per environment step, from the counted iteration."""
        if self.counter is None:
            return {}
        steps = self.config.batch_size
        return {
            phase: {
                "count_per_iteration": stats["count"],
                "bytes_per_iteration": stats["bytes"],
                "count_per_env_step": stats["count"] / steps,
                "bytes_per_env_step": stats["bytes"] / steps,
            }
            for phase, stats in self.counter.by_phase().items()
        }


def train_side_by_side(
    config: PPOConfig,
    placements: list[Placement],
    seed: int = 0,
    *,
    count_copies: bool = True,
    threads: int | None = None,
    eval_episodes: int = 10,
    eval_every: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, PPORun]:
    """Train one PPO per placement, interleaving their iterations; runs keyed by placement name.

    ``count_copies``: run each trainer's first iteration under a
    :class:`CopyCounter` (which slows that iteration; every iteration runs the
    same code, so its counts hold for all). ``threads``: PyTorch CPU threads
    (None: unchanged). ``eval_episodes``: greedy episodes after training (0:
    none). ``eval_every``: also evaluate greedily before training and every this
    many environment steps (0: never), for a learning curve; evaluation time is
    not training time. ``progress(iteration, iterations)`` follows the run.
    """
    names = [plan.name for plan in placements]
    if len(set(names)) != len(names):
        raise UsageError(f"placements must have distinct names, got {names}")
    gpus = [plan.update for plan in placements if plan.update.type == "cuda"]
    with torch_threads(threads), UtilisationSampler(gpus[0] if gpus else None) as sampler:
        trainers = [
            PPOTrainer(
                config,
                plan,
                seed,
                count_copies=count_copies,
                eval_every=eval_every,
                eval_episodes=eval_episodes,
            )
            for plan in placements
        ]
        for index in range(config.num_iterations):
            for trainer in trainers:
                with sampler.section(trainer.placement.name):
                    trainer.step()
            if progress is not None:
                progress(index + 1, config.num_iterations)
        used = torch.get_num_threads()
        return {
            t.placement.name: t.result(sampler.summary(t.placement.name), used) for t in trainers
        }


def train(config: PPOConfig, placement: Placement, seed: int = 0, **options: Any) -> PPORun:
    """Train PPO under one ``placement`` and measure it (options as in ``train_side_by_side``)."""
    return train_side_by_side(config, [placement], seed, **options)[placement.name]
