import pytest

from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import placement
from hetero_tutorial.core.transfers import copy_costs
from hetero_tutorial.notebook.solutions.ppo_placements import rollout_bytes
from hetero_tutorial.rl.envs.spec import env_spec
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.rl.ppo.storage import RolloutStorage
from hetero_tutorial.studies.sweeps import speedups, width_sweep
from hetero_tutorial.studies.threads import FASTER, UNCLEAR, role_rule, thread_effects

SMALL = {"num_envs": 2, "num_steps": 64, "minibatch_size": 64, "update_epochs": 1}


def test_width_sweep_runs_plans_on_the_same_devices_once():
    # Without an accelerator both presets are the CPU: one configuration, standing for both.
    names = ("all-accelerator", "hybrid")
    done = []
    rows = width_sweep(
        "CartPole-v1", [8, 16], names, iterations=2, threads=(1, 2), progress=done.append, **SMALL
    )
    assert done == [8, 16]  # each width reported as it is done
    same = placement("all-accelerator").devices == placement("hybrid").devices
    expected = [(8, 1), (8, 2), (16, 1), (16, 2)] if same else None
    if same:
        assert [(r["width"], r["threads"]) for r in rows] == expected
        assert all(r["stands_for"] == list(names) for r in rows)
        assert speedups(rows)[8] == {"all-accelerator": 1.0, "hybrid": 1.0}
    for row in rows:  # every timed iteration kept, in total and per phase
        assert len(row["iteration_seconds"]) == 2
        assert set(row["phase_seconds"]) >= {"rollout", "advantages", "transfer", "update"}
        assert all(len(v) == 2 for v in row["phase_seconds"].values())


def test_a_sweep_over_thread_counts_gives_each_plan_its_fastest():
    synthetic = [
        {"width": 8, "placement": "all-accelerator", "threads": 1, "seconds_per_iteration": 2.0},
        {"width": 8, "placement": "all-accelerator", "threads": 2, "seconds_per_iteration": 1.0},
        {"width": 8, "placement": "hybrid", "threads": 1, "seconds_per_iteration": 0.5},
        {"width": 8, "placement": "hybrid", "threads": 2, "seconds_per_iteration": 4.0},
    ]
    assert speedups(synthetic)[8]["hybrid"] == 2.0  # 1.0 s (2 threads) / 0.5 s (1 thread)


def _thread_rows(update_one, update_all, width):
    """Sweep rows of all-cpu at 1 and 2 threads: the rollout ties, the update as given."""
    rows = []
    for threads, update in ((1, update_one), (2, update_all)):
        rollout = [1.0, 1.02, 0.98, 1.01, 0.99]
        seconds = [r + u for r, u in zip(rollout, update, strict=True)]
        rows.append({"width": width, "placement": "all-cpu", "stands_for": ["all-cpu"],
                     "threads": threads, "phase_seconds": {"rollout": rollout, "update": update},
                     "iteration_seconds": seconds})  # fmt: skip
    return rows


def test_thread_effects_name_an_effect_only_past_the_paired_spread():
    rows = _thread_rows([2.0, 2.1, 1.9, 2.0, 2.05], [1.0, 1.0, 1.0, 1.0, 1.0], 1024)
    rows += _thread_rows([1.0, 0.9, 1.1, 0.95, 1.05], [1.0] * 5, 64)
    effects = thread_effects(rows)
    verdict = {(e["width"], e["role"]): e["verdict"] for e in effects}
    assert verdict[(1024, "update")] == FASTER and verdict[(64, "update")] == UNCLEAR
    assert verdict[(1024, "rollout")] == UNCLEAR
    learner = role_rule(effects, "update")
    assert learner.startswith(
        "The learner (update): both cores from width 1024, either count below, at width 64 "
        "(1 thread leaves the other core free). Both cores were faster at width 1024; no clear "
        "effect at width 64."
    )
    assert "1024: 2.00x" in learner
    actor = role_rule(effects, "rollout")
    assert actor.startswith(
        "The actor (rollout): either count (1 thread leaves the other core free). Both cores "
        "showed no clear effect"
    )


def test_thread_rule_lists_faster_widths_that_are_no_contiguous_tail():
    rows = _thread_rows([2.0, 2.1, 1.9, 2.0, 2.05], [1.0] * 5, 64)  # faster at 64
    rows += _thread_rows([1.0, 0.9, 1.1, 0.95, 1.05], [1.0] * 5, 256)  # unclear at 256
    rows += _thread_rows([0.5, 0.52, 0.49, 0.5, 0.51], [1.0] * 5, 1024)  # slower at 1024
    learner = role_rule(thread_effects(rows), "update")
    assert learner.startswith(
        "The learner (update): both cores at width 64, 1 thread at width 1024, either count at "
        "width 256. "
        "Both cores were faster at width 64; slower at width 1024; no clear effect at width 256."
    )
    assert "no clear effect at any width" not in learner and "from width" not in learner


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
