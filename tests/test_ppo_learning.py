"""PPO at notebook 01's settings solves CartPole and stays solved, seed after seed.

Learning is behaviour: a change to PPO, to its tuned settings or to its numerics that
makes the baseline forget what it learned must fail here, as a wrong number would. The
settings are ``PPOConfig.tuned("CartPole-v1")`` at notebook 01's full budget (100k steps,
64 units, one thread); greedy evaluations of 10 episodes every 8,192 steps; a seed
*stays solved* when its last three evaluations all reach 475. Without the clip range's
decay, four seeds of five still did, but seed 0, the notebooks' own, solved at 16k
steps and ended at 237: so the notebooks' seed must be among them.
"""

import pytest

from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import train

SEEDS = (0, 1, 2, 3, 4)
NOTEBOOK_SEED = 0
GOAL = 475.0


@pytest.mark.slow
def test_notebook_01_settings_stay_solved_on_4_of_5_seeds_the_notebooks_among_them():
    config = PPOConfig.tuned("CartPole-v1", total_steps=100_000, hidden=64)
    last_three, stayed = {}, []
    for seed in SEEDS:  # the notebooks' seed first; stop once the verdict is settled
        run = train(config, placement("all-cpu"), seed, threads=1, count_copies=False,
                    eval_every=8_192, eval_episodes=0)  # fmt: skip
        last_three[seed] = [mean for _, mean in run.evaluations[-3:]]
        if min(last_three[seed]) >= GOAL:
            stayed.append(seed)
        if len(stayed) >= 4 and NOTEBOOK_SEED in stayed:
            break
    assert len(stayed) >= 4 and NOTEBOOK_SEED in stayed, last_three
