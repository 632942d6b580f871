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
    PPOTrainer,
    RolloutStorage,
    buffer_designs,  # SyntheticTransitions, fill: the buffer study's data and byte count
    env_throughput,  # make_stepper: the environment study's stepper, actions drawn ahead
    make_buffer,
    placement,
    results,
    train,
)
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.rl.ddpg.trainer import DDPGTrainer
from hetero_tutorial.rl.envs.spec import env_spec
from hetero_tutorial.rl.gail.discriminator import DiscriminatorLearner
from hetero_tutorial.rl.overlapped.process_engine import ProcessEngine
from hetero_tutorial.rl.overlapped.worker import RolloutRequest
from hetero_tutorial.rl.ppo.policy import make_policy
from hetero_tutorial.rl.ppo.runs import greedy_returns
from hetero_tutorial.speed.compiler import compile_cache
from hetero_tutorial.speed.flat import FlatParameters

__all__ = [
    "DDPGConfig",
    "DDPGTrainer",
    "DiscriminatorLearner",
    "FlatParameters",
    "PPOConfig",
    "PPOTrainer",
    "ProcessEngine",
    "RolloutRequest",
    "RolloutStorage",
    "Spread",
    "buffer_designs",
    "compile_cache",
    "env_spec",
    "env_throughput",
    "greedy_returns",
    "make_buffer",
    "make_policy",
    "placement",
    "results",
    "train",
]
