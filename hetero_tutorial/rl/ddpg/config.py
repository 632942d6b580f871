"""Step 1 of DDPG: its configuration, CleanRL's one ``@dataclass`` with a line per field."""

from __future__ import annotations

from dataclasses import dataclass

from hetero_tutorial.core.errors import UsageError, require_positive
from hetero_tutorial.rl.buffers import DESIGNS
from hetero_tutorial.speed import compile_mode_of, require_compile_switches


@dataclass
class DDPGConfig:
    """DDPG's settings; the defaults are tuned for Pendulum-v1 with one update per step.

    As for PPO, where the run happens is not a setting: the placement, the seed and the
    CPU threads are arguments of :func:`~hetero_tutorial.rl.ddpg.runs.train`.
    """

    env_id: str = "Pendulum-v1"
    """the gymnasium environment (continuous actions, vector observations)"""
    total_steps: int = 15_000
    """environment steps in the run (Pendulum episodes are 200 steps)"""
    learning_starts: int = 1_000
    """steps of uniformly random actions collected before the first update"""
    buffer: str = "tensor"
    """replay buffer design: transition (pattern A), trajectory (pattern B) or tensor"""
    buffer_capacity: int = 100_000
    """transitions the replay buffer holds"""
    segment_length: int = 20
    """transitions per stored segment, for the trajectory buffer (the article's 20)"""
    hidden: int = 256
    """units in each of the two hidden layers of the actor and of the critic"""
    batch_size: int = 256
    """transitions per update"""
    gamma: float = 0.99
    """discount factor"""
    tau: float = 0.005
    """Polyak averaging rate of the target networks, per update"""
    actor_lr: float = 1e-3
    """Adam learning rate of the actor"""
    critic_lr: float = 1e-3
    """Adam learning rate of the critic"""
    exploration_noise: float = 0.1
    """std of the Gaussian action noise, as a fraction of half the action range"""
    count_copies_steps: int = 100
    """last steps of the run whose host<->device copies are counted (not timed)"""
    compile: bool = False
    """speed: torch.compile each update (both losses, gradients, Adam steps, the averaging)"""
    cudagraphs: bool = False
    """speed: also capture the update as a CUDA graph (CUDA only; needs compile=True)"""

    def __post_init__(self) -> None:
        if self.buffer not in DESIGNS:
            raise UsageError(f"buffer must be one of {', '.join(DESIGNS)}; got {self.buffer!r}")
        require_compile_switches(self.compile, self.cudagraphs)
        require_positive(count_copies_steps=self.count_copies_steps)
        if not 0 < self.learning_starts < self.total_steps - self.count_copies_steps - 1:
            raise UsageError(
                f"need 0 < learning_starts ({self.learning_starts}) < total_steps "
                f"({self.total_steps}) - count_copies_steps ({self.count_copies_steps}) - 1: "
                "collect data, warm up (one untimed update), time updates, then count copies."
            )
        # The trajectory buffer cannot sample its open (last, unfinished) segment yet.
        held_back = self.segment_length if self.buffer == "trajectory" else 0
        why = " (the trajectory buffer holds back its open segment)" if held_back else ""
        if self.batch_size + held_back > self.learning_starts:
            raise UsageError(
                f"batch_size ({self.batch_size}) is too large for learning_starts "
                f"({self.learning_starts}): the first update would ask for more transitions "
                f"than can be sampled{why}. Raise learning_starts or lower batch_size."
            )
        if self.batch_size + held_back > self.buffer_capacity:
            raise UsageError(
                f"batch_size ({self.batch_size}) does not fit in buffer_capacity "
                f"({self.buffer_capacity}){why}: no number of steps could fill a batch. "
                "Raise buffer_capacity or lower batch_size."
            )

    @property
    def compile_mode(self) -> str:
        """The mode the update runs in: "eager", "compile" or "cudagraphs", torch's own words
        for what ``compile`` and ``cudagraphs`` ask (see speed/compiler.py)."""
        return compile_mode_of(self.compile, self.cudagraphs)
