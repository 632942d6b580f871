import pytest

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import placement
from hetero_tutorial.core.transfers import copy_costs
from hetero_tutorial.notebook.solutions.ppo_placements import rollout_bytes, steady_steps_per_second
from hetero_tutorial.rl.envs import env_spec
from hetero_tutorial.rl.ppo import RolloutStorage
from hetero_tutorial.rl.ppo_config import PPOConfig
from hetero_tutorial.rl.ppo_runs import iteration_costs, train
from hetero_tutorial.studies.sweeps import speedups, width_sweep

SMALL = {"num_envs": 2, "num_steps": 64, "minibatch_size": 64, "update_epochs": 1}


def test_iteration_costs_time_each_plan_after_warmup():
    config = PPOConfig.tuned("CartPole-v1", **SMALL)
    costs = iteration_costs(config, [placement("hybrid"), placement("all-cpu")], iterations=2)
    assert set(costs) == {"hybrid", "all-cpu"}
    assert all(len(timing.samples) == 2 and timing.median > 0 for timing in costs.values())


def test_width_sweep_rows_and_speedups():
    rows = width_sweep("CartPole-v1", [8, 16], ("all-accelerator", "hybrid"), iterations=1, **SMALL)
    assert [(r["width"], r["placement"]) for r in rows] == [
        (8, "all-accelerator"), (8, "hybrid"), (16, "all-accelerator"), (16, "hybrid")
    ]  # fmt: skip
    ratios = speedups(rows)
    assert ratios[8]["all-accelerator"] == 1.0
    assert ratios[16]["hybrid"] == pytest.approx(
        rows[2]["seconds_per_iteration"] / rows[3]["seconds_per_iteration"]
    )


def test_a_sweep_over_thread_counts_gives_each_plan_its_fastest():
    rows = width_sweep("CartPole-v1", [8], ("all-accelerator", "hybrid"), 1, (1, 2), **SMALL)
    assert [(r["placement"], r["threads"]) for r in rows] == [
        ("all-accelerator", 1), ("hybrid", 1), ("all-accelerator", 2), ("hybrid", 2)
    ]  # fmt: skip
    synthetic = [
        {"width": 8, "placement": "all-accelerator", "threads": 1, "seconds_per_iteration": 2.0},
        {"width": 8, "placement": "all-accelerator", "threads": 2, "seconds_per_iteration": 1.0},
        {"width": 8, "placement": "hybrid", "threads": 1, "seconds_per_iteration": 0.5},
        {"width": 8, "placement": "hybrid", "threads": 2, "seconds_per_iteration": 4.0},
    ]
    assert speedups(synthetic)[8]["hybrid"] == 2.0  # 1.0 s (2 threads) / 0.5 s (1 thread)


def test_speedups_need_the_baseline():
    rows = [{"width": 8, "placement": "hybrid", "seconds_per_iteration": 1.0}]
    with pytest.raises(UsageError, match="no 'all-accelerator' row"):
        speedups(rows)


def test_copy_costs_needs_an_accelerator():
    with pytest.raises(UsageError, match="accelerator"):
        copy_costs([1024], "cpu")


def test_solution_rollout_bytes_matches_the_storage():
    for env_id in ("CartPole-v1", "Pendulum-v1"):
        config = PPOConfig.tuned(env_id)
        storage = RolloutStorage(config.num_steps, config.num_envs, env_spec(env_id), "cpu", False)
        assert rollout_bytes(config) == storage.data.nbytes


def test_solution_steady_steps_per_second_leaves_out_the_first_iteration():
    config = PPOConfig.tuned("CartPole-v1", total_steps=3 * 128, **SMALL)
    run = train(config, placement("all-cpu"), eval_episodes=0)
    run.iteration_seconds = [10.0, 1.0, 3.0]
    assert steady_steps_per_second(run) == pytest.approx(2 * 128 / 4.0)
