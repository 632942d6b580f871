"""PPO at notebook 01's settings solves CartPole and stays solved, seed after seed.

Learning is behaviour: a change to PPO, to its tuned settings or to its numerics that
makes the baseline forget what it learned must fail here, as a wrong number would. The
settings are ``PPOConfig.tuned("CartPole-v1")`` at notebook 01's full budget (100k steps,
64 units, one thread); greedy evaluations of 10 episodes every 8,192 steps; a seed
*stays solved* when its last three evaluations all reach 475. Without the clip range's
decay, four seeds of five still did, but seed 0, the notebooks' own, solved at 16k
steps and ended at 237: so the notebooks' seed must be among them.

Quick mode trains the first 20,480 steps of that run, its learning rate and clip range
decaying over the full run's 100,000 (``anneal_steps``): the same weights, step for step,
as the full run's at that point, and a CartPole that reaches 475 on the notebooks' seed.
"""

import pytest
import torch

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import placement
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import train
from hetero_tutorial.rl.ppo.trainer import PPOTrainer

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


def test_a_run_cut_before_its_horizon_is_the_first_part_of_the_longer_run():
    """Two iterations annealed over four are the first two of a four-iteration run, weight for
    weight; annealed over their own two, the second iteration already trains differently."""
    batch = PPOConfig.tuned("CartPole-v1").batch_size

    def weights_after_two(**budget) -> torch.Tensor:
        trainer = PPOTrainer(PPOConfig.tuned("CartPole-v1", **budget), placement("all-cpu"), 0)
        for _ in range(2):
            trainer.run_iteration()
        trainer.close()
        return trainer.learner.params.data.clone()

    longer = weights_after_two(total_steps=4 * batch)
    assert torch.equal(weights_after_two(total_steps=2 * batch, anneal_steps=4 * batch), longer)
    assert not torch.equal(weights_after_two(total_steps=2 * batch), longer)


def test_a_horizon_shorter_than_the_run_is_refused():
    with pytest.raises(UsageError, match="anneal_steps 10,000 is shorter than total_steps"):
        PPOConfig.tuned("CartPole-v1", total_steps=20_480, anneal_steps=10_000).validate()


@pytest.mark.slow
def test_notebook_01_quick_run_reaches_the_goal_on_the_notebooks_seed():
    config = PPOConfig.tuned("CartPole-v1", total_steps=20_480, anneal_steps=100_000, hidden=64)
    run = train(config, placement("all-cpu"), NOTEBOOK_SEED, threads=1, count_copies=False,
                eval_every=4_096, eval_episodes=0)  # fmt: skip
    assert max(mean for _, mean in run.evaluations) >= GOAL, run.evaluations
