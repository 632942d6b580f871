"""The training entry points take a placement or a preset's name, and refuse the meta device
(it only counts copies) with a clear error instead of failing deep inside PyTorch."""

import pytest

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import as_placement, placement
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.runs import train, train_side_by_side
from hetero_tutorial.rl.ppo.trainer import PPOTrainer

TINY = {"total_steps": 256, "num_envs": 2, "num_steps": 128, "minibatch_size": 64}
CONFIG = PPOConfig.tuned("CartPole-v1", **TINY)


def test_a_preset_name_is_taken_where_a_placement_is():
    run = train(CONFIG, "all-cpu", count_copies=False, eval_episodes=0)
    assert run.placement == "all-cpu" and run.env_steps == 256
    assert as_placement(placement("hybrid")) == placement("hybrid")


def test_anything_else_is_a_clear_error():
    with pytest.raises(UsageError, match="unknown placement 'fastest'"):
        train(CONFIG, "fastest")
    with pytest.raises(UsageError, match=r'placement\("hybrid"\)'):
        train(CONFIG, 3)
    with pytest.raises(UsageError, match=r'PPOTrainer takes a Placement.*placement\("hybrid"\)'):
        PPOTrainer(CONFIG, "all-cpu")  # what the entry points build takes a Placement


def test_training_on_the_meta_device_is_refused_with_where_it_belongs():
    with pytest.raises(UsageError, match=r"meta device.*only counts copies.*studies\.copies"):
        train(CONFIG, placement("hybrid", "meta"))
    with pytest.raises(UsageError, match="only counts copies"):
        train_side_by_side(CONFIG, ["all-cpu", placement("all-accelerator", "meta")])
