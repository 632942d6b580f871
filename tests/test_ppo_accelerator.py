"""PPO learns with its update on an accelerator: CUDA's numerics, judged seed by seed.

On the CPU the learning tests hold runs to exact numbers (tests/test_ppo.py,
tests/test_ppo_device.py). An accelerator rounds differently, and a closed loop of
policy, environment and update carries last-bit differences into different trajectories:
a run on CUDA is, for learning, another seed. So the threshold here is one every seed
tried met with margin when the settings were tuned ("solves it within 100k steps on
every seed we tried", PPOConfig.TUNED; at 64 batched environments, within the batched
budget on every seed): a greedy return of 475 reached at one of the evaluations made every
8,192 steps, each run stopping once it has. Not the last evaluation alone, which a run
that solved and then wobbled would miss.
"""

import pytest

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.studies import device_ppo

CONFIGS = {
    "hybrid": lambda: PPOConfig.tuned("CartPole-v1", total_steps=100_000),
    "all-device": lambda: PPOConfig.tuned_batched("CartPole-v1", 64),
}


@pytest.mark.accelerator
@pytest.mark.skipif(accelerator() is None, reason="the CPU's learning is tested exactly elsewhere")
@pytest.mark.parametrize("plan", list(CONFIGS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ppo_solves_cartpole_with_its_update_on_the_accelerator(plan, seed):
    config = CONFIGS[plan]()
    run = device_ppo.train_to_goal(config, placement(plan), seed, device_ppo.SOLVED_RETURN)
    assert run.solved, (plan, seed, run.evaluations[-3:])
    assert run.env_steps <= config.total_steps
