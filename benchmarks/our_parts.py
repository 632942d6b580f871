"""Every piece of hetero_tutorial the peer races use, imported here and nowhere else in them.

The races import this module only in our own contestants' processes and in the parent
that writes the records (a peer's process runs in a venv without torch or this package).
Top-level names (``from hetero_tutorial import ...``) where the package has them; the
rest from the module that holds them today. When the package's modules move, this file
is the one to change.
"""

from hetero_tutorial import (
    DDPGConfig,
    PPOConfig,
    buffer_study,  # SyntheticTransitions, fill: the buffer study's data and byte count
    env_throughput,  # make_stepper: the environment study's stepper, actions drawn ahead
    make_buffer,
    placement,
    results,
    train,
)
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.rl.ddpg import DDPGTrainer
from hetero_tutorial.rl.envs import env_spec
from hetero_tutorial.rl.flat import FlatParameters
from hetero_tutorial.rl.pipeline_processes import ProcessEngine
from hetero_tutorial.rl.pipeline_worker import RolloutRequest
from hetero_tutorial.rl.ppo import PPOTrainer, make_policy
from hetero_tutorial.rl.ppo_runs import greedy_returns
from hetero_tutorial.rl.rollout_storage import RolloutStorage

__all__ = [
    "DDPGConfig",
    "DDPGTrainer",
    "FlatParameters",
    "PPOConfig",
    "PPOTrainer",
    "ProcessEngine",
    "RolloutRequest",
    "RolloutStorage",
    "Spread",
    "buffer_study",
    "env_spec",
    "env_throughput",
    "greedy_returns",
    "make_buffer",
    "make_policy",
    "placement",
    "results",
    "train",
]
