"""Step 1 of GAIL: its configuration, one ``@dataclass`` with a line per field.

GAIL (Ho and Ermon, 2016) learns a policy from an expert's demonstrations alone: a
discriminator learns to tell the expert's (state, action) rows from the policy's, and the
policy, PPO here, is rewarded for rows the discriminator takes for the expert's. The
generator's settings are CleanRL's PPO for MuJoCo (64x64 tanh networks, 2,048 steps a
round, 10 epochs of 64-row minibatches); the discriminator's are what implementations
disagree on most, so they are settings: its width, the rows of expert and of policy data
per update, the updates per round, and the gradient penalty.
"""

from __future__ import annotations

from dataclasses import dataclass

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.rl.envs.mujoco import HALFCHEETAH
from hetero_tutorial.rl.ppo.config import PPOConfig


@dataclass(frozen=True)
class GAILConfig:
    """GAIL's settings: the generator's run, then the discriminator's."""

    env_id: str = HALFCHEETAH
    """the environment (continuous actions, vector observations) the expert acted in"""
    total_steps: int = 40_960
    """environment steps of the generator's run (2,048 a round)"""
    num_envs: int = 4
    """the generator's parallel environments"""
    num_steps: int = 512
    """steps per environment per round"""
    hidden: int = 64
    """units in each of the two hidden layers of the generator's actor and critic"""
    learning_rate: float = 3e-4
    """the generator's Adam learning rate"""
    disc_hidden: int = 64
    """units in each of the discriminator's two hidden layers"""
    disc_rows: int = 1_024
    """rows of expert data, and as many of the policy's, per discriminator update"""
    disc_updates: int = 2
    """discriminator updates per round"""
    disc_lr: float = 3e-4
    """the discriminator's Adam learning rate"""
    gradient_penalty: float = 0.0
    """weight of the gradient penalty on rows between expert and policy (0: off; 10 in
    ikostrikov's pytorch-a2c-ppo-acktr-gail): a second-order backward pass"""
    compile: bool = False
    """speed: torch.compile the discriminator's update (not with the gradient penalty)"""

    def __post_init__(self) -> None:
        for name in ("total_steps", "num_envs", "num_steps", "disc_hidden", "disc_rows"):
            if getattr(self, name) < 1:
                raise UsageError(f"{name} must be 1 or more, got {getattr(self, name)}")
        if self.disc_updates < 0 or self.gradient_penalty < 0:
            raise UsageError("disc_updates and gradient_penalty must not be negative")

    def generator(self) -> PPOConfig:
        """The generator's PPO settings. It sees no environment reward (``reward_scale``
        0): its reward is the discriminator's, added where a time limit's bootstrap sits."""
        return PPOConfig(
            env_id=self.env_id,
            total_steps=self.total_steps,
            num_envs=self.num_envs,
            num_steps=self.num_steps,
            hidden=self.hidden,
            learning_rate=self.learning_rate,
            gamma=0.99,
            gae_lambda=0.95,
            minibatch_size=64,
            update_epochs=10,
            ent_coef=0.0,
            anneal_lr=True,
            reward_scale=0.0,
        )
