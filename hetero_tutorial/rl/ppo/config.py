"""Step 1 of PPO: its configuration, every knob of a run, and the settings tuned per environment.

CleanRL's one ``@dataclass`` with a one-line docstring per field; the defaults are
CleanRL's, ``TUNED`` holds per-environment ones. Where a run happens is not a setting:
the placement (which also says whether the environments are batched tensors), the seed
and the CPU threads are arguments of :func:`~hetero_tutorial.rl.ppo.runs.train`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from hetero_tutorial.core.errors import UsageError, require_minibatch_fits, require_positive
from hetero_tutorial.speed import compile_mode_of, require_compile_switches


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
    anneal_clip: bool = False
    """decay the clipping coefficient linearly to zero over the run (policy and value clipping)"""
    anneal_steps: int | None = None
    """environment steps the decays reach zero over (None: total_steps); more than total_steps
    trains the first part of a longer run, schedule and all"""
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
    paired_networks: bool = True
    """speed: actor and critic layers as one batched matmul each (False: two MLPs, as CleanRL)"""
    flat_parameters: bool = True
    """speed: all parameters in one tensor, one call to zero, clip, step and copy them"""
    gather_per_epoch: bool | None = None
    """speed: shuffle the rollout with one gather per epoch (False: one gather per minibatch).
    None (the default): per epoch eagerly, per minibatch where the steps are compiled (a
    compiled step gathers its own minibatch, inside its graph); True with compile=True is
    refused"""
    compile: bool = False
    """speed: torch.compile a batched rollout's steps and the update's minibatch steps"""
    cudagraphs: bool = False
    """speed: also capture them as CUDA graphs (CUDA only; needs compile=True)"""

    @classmethod
    def tuned(cls, env_id: str, **overrides: Any) -> PPOConfig:
        """The defaults tuned for ``env_id`` (see ``TUNED``), with ``overrides`` applied."""
        known = {f.name for f in fields(cls)}
        unknown = set(overrides) - known
        if unknown:
            raise UsageError(f"unknown PPO setting(s) {sorted(unknown)}; known: {sorted(known)}")
        return replace(cls(env_id=env_id, **TUNED.get(env_id, {})), **overrides)

    @classmethod
    def tuned_batched(cls, env_id: str, num_envs: int, **overrides: Any) -> PPOConfig:
        """Settings that learn with ``num_envs`` batched environments (see ``TUNED_BATCHED``),
        for a placement with ``batched_envs`` (``all-device``).

        ``TUNED``'s learning settings with fewer steps per environment, and minibatches
        that grow with the rollout: ``minibatches`` of them per epoch (never smaller than
        ``TUNED``'s), so an iteration takes the same gradient steps at any large
        ``num_envs``. PPO improves its policy by a bounded step per iteration (the clipped
        ratio), so a bigger rollout buys a better gradient, not fewer iterations: the budget
        (``total_steps``) grows with the rollout, to at least ``min_iterations`` of them.
        """
        if env_id not in TUNED_BATCHED:
            raise UsageError(f"no batched settings for {env_id!r}; known: {sorted(TUNED_BATCHED)}")
        b = TUNED_BATCHED[env_id]
        batch = num_envs * b["num_steps"]
        smallest = TUNED[env_id]["minibatch_size"]
        settings = {
            "num_envs": num_envs,
            "num_steps": b["num_steps"],
            "minibatch_size": min(batch, max(smallest, batch // b["minibatches"])),
            "total_steps": max(b["total_steps"], b["min_iterations"] * batch),
        }
        return cls.tuned(env_id, **(settings | overrides))

    @property
    def batch_size(self) -> int:
        """Transitions per rollout."""
        return self.num_envs * self.num_steps

    @property
    def num_iterations(self) -> int:
        """Rollout-and-update iterations needed to reach ``total_steps`` (rounded up)."""
        return -(-self.total_steps // self.batch_size)

    @property
    def anneal_iterations(self) -> int:
        """Iterations over which the learning rate and clipping coefficient decay to zero: the
        annealing horizon, ``anneal_steps`` (or ``total_steps``) in iterations, rounded up."""
        horizon = self.total_steps if self.anneal_steps is None else self.anneal_steps
        return -(-horizon // self.batch_size)

    def schedule_left(self, iteration: int) -> float:
        """The share of the learning rate and clipping coefficient that ``iteration`` (0-based)
        trains with where they anneal: 1 at the first, falling linearly to 0 at the horizon."""
        return 1.0 - iteration / self.anneal_iterations

    @property
    def compile_mode(self) -> str:
        """The mode the compiled pieces run in: "eager", "compile" or "cudagraphs", torch's
        own words for what ``compile`` and ``cudagraphs`` ask (see speed/compiler.py)."""
        return compile_mode_of(self.compile, self.cudagraphs)

    @property
    def gradient_steps(self) -> int:
        """Gradient steps per iteration: epochs x full minibatches."""
        return self.update_epochs * (self.batch_size // self.minibatch_size)

    def validate(self) -> None:
        """Raise a clear error for settings that cannot work."""
        names = ("total_steps", "num_envs", "num_steps", "hidden", "minibatch_size")
        require_positive(**{name: getattr(self, name) for name in (*names, "update_epochs")})
        require_minibatch_fits(self.minibatch_size, self.num_envs, self.num_steps)
        if self.anneal_steps is not None and self.anneal_iterations < self.num_iterations:
            raise UsageError(
                f"anneal_steps {self.anneal_steps:,} is shorter than total_steps "
                f"{self.total_steps:,}: past it the learning rate and clipping coefficient "
                "would turn negative. Set anneal_steps to total_steps or more, or None."
            )
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
        require_compile_switches(self.compile, self.cudagraphs)
        if self.compile and not self.flat_parameters:
            raise UsageError(
                "compile=True needs flat_parameters=True: the compiled minibatch step is one "
                "graph over the one flat parameter tensor. Set flat_parameters=True, or "
                "compile=False"
            )
        if self.compile and self.gather_per_epoch:
            raise UsageError(
                "gather_per_epoch=True is for eager steps: a compiled step gathers its own "
                "minibatch inside its graph. Leave gather_per_epoch unset (None: per epoch "
                "eagerly, per minibatch compiled), set it False, or set compile=False"
            )


TUNED: dict[str, dict[str, Any]] = {
    # RL Baselines3 Zoo's CartPole settings, learning rate and clip range both decayed linearly to
    # zero as there, with 10 epochs instead of 20. At 100k steps the greedy return is 500 at
    # the last three evaluations (every 8,192 steps) on seeds 0-4 (tests/test_ppo_learning.py);
    # without the clip range's decay, seed 0 solves at 16k steps and ends at 237.
    "CartPole-v1": {
        "num_envs": 8,
        "num_steps": 32,
        "learning_rate": 1e-3,
        "gamma": 0.98,
        "gae_lambda": 0.8,
        "minibatch_size": 256,
        "update_epochs": 10,
        "ent_coef": 0.0,
        "anneal_clip": True,
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

TUNED_BATCHED: dict[str, dict[str, Any]] = {
    "CartPole-v1": {
        "num_steps": 16,
        "minibatches": 16,
        "total_steps": 300_000,
        "min_iterations": 40,
    },
    "Pendulum-v1": {
        "num_steps": 64,
        "minibatches": 16,
        "total_steps": 400_000,
        "min_iterations": 40,
    },
}
"""How :meth:`PPOConfig.tuned_batched` scales PPO to hundreds or thousands of environments."""
