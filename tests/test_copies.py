"""Copies counted on any machine: a PPO iteration and DDPG steps with their accelerator phases
on the meta device, checked against the known counts of the code (and, where an accelerator
exists, against a count on it)."""

import json
from dataclasses import replace

import pytest

from hetero_tutorial.core.devices import accelerator
from hetero_tutorial.notebook.solutions import solution
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.studies.copies import copies_sentence, ddpg_copies, ppo_copies

SMALL = {"num_envs": 3, "num_steps": 16, "minibatch_size": 16, "update_epochs": 2, "hidden": 8}


def _per_iteration(counted):
    return {phase: c["count_per_iteration"] for phase, c in counted["by_phase"].items()}


def test_the_hybrid_plan_transfers_once_and_syncs_once_per_iteration():
    counted = ppo_copies(PPOConfig.tuned("CartPole-v1", **SMALL), "hybrid", device="meta")
    # the update's two: every epoch's order in one copy, the diagnostics back in one
    assert _per_iteration(counted) == {"transfer": 1, "update": 2, "weight_sync": 1}
    assert counted["counted_on"] == "meta"
    assert counted["by_phase"]["transfer"]["bytes_per_iteration"] == 3 * 16 * (4 + 1 + 6) * 4


def test_the_baseline_copies_twice_per_vector_step_and_thrice_per_rollout():
    config = PPOConfig.tuned("CartPole-v1", **SMALL)
    counted = ppo_copies(config, "all-accelerator", device="meta")
    rollout_copies = solution("rollout_copies")  # notebook 01's exercise, checked here
    assert _per_iteration(counted)["rollout"] == rollout_copies(3, 16) == 2 * 16 + 3
    assert counted["copies_per_env_step"] == pytest.approx((2 * 16 + 3 + 2) / 48)


def test_counts_do_not_depend_on_the_epochs_counted():
    config = PPOConfig.tuned("Pendulum-v1", **SMALL)
    one = ppo_copies(config, "all-accelerator", device="meta", update_epochs=1)
    every = ppo_copies(config, "all-accelerator", device="meta", update_epochs=None)
    assert _per_iteration(one) == _per_iteration(every)


def test_a_placement_on_one_device_copies_nothing():
    counted = ppo_copies(PPOConfig.tuned("CartPole-v1", **SMALL), "all-cpu", device="meta")
    assert counted["by_phase"] == {} and counted["copies_per_env_step"] == 0


def test_ddpg_copies_per_step_by_buffer_and_placement():
    config = DDPGConfig(hidden=8, batch_size=8, buffer="transition")
    counted = ddpg_copies(config, "all-accelerator", device="meta", steps=5)
    # the observation in and the action out, then the six fields of pattern A's batch
    assert {p: c["count_per_1000_steps"] for p, c in counted["by_phase"].items()} == {
        "rollout": 2000.0, "sample": 6000.0
    }  # fmt: skip
    tensor = ddpg_copies(replace(config, buffer="tensor"), "hybrid", device="meta", steps=5)
    # one packed batch in, the actor's flat weights back to the CPU actor
    assert {p: c["count_per_1000_steps"] for p, c in tensor["by_phase"].items()} == {
        "sample": 1000.0, "weight_sync": 1000.0
    }  # fmt: skip
    ppo = ppo_copies(PPOConfig.tuned("CartPole-v1", **SMALL), device="meta")
    assert "DDPG switches devices" in copies_sentence(ppo, counted)


@pytest.mark.accelerator
@pytest.mark.skipif(accelerator() is None, reason="needs an accelerator to compare with")
def test_meta_counts_match_the_accelerators():
    # Pendulum's time limit cuts episodes at fixed steps, whatever the actions: the counts
    # of the zero-action meta run and of the real one must agree phase by phase.
    config = PPOConfig.tuned("Pendulum-v1", **SMALL)
    for name in ("all-accelerator", "hybrid"):
        meta = ppo_copies(config, name, device="meta")
        real = ppo_copies(config, name, device=accelerator())
        assert _per_iteration(meta) == _per_iteration(real), name
    ddpg = DDPGConfig(hidden=8, batch_size=8, buffer="transition")
    for name in ("all-accelerator", "hybrid"):
        meta = ddpg_copies(ddpg, name, device="meta", steps=5)["by_phase"]
        real = ddpg_copies(ddpg, name, device=accelerator(), steps=5)["by_phase"]
        assert {p: c["count_per_1000_steps"] for p, c in meta.items()} == {
            p: c["count_per_1000_steps"] for p, c in real.items()
        }, name


def test_batched_environments_are_not_run_on_the_meta_stand_in():
    counted = ppo_copies(PPOConfig.tuned("CartPole-v1", **SMALL), "all-device", device="meta")
    assert counted["copies_per_env_step"] is None and "not counted" in counted["note"]


def test_bench_ppo_all_device_writes_its_record_without_an_accelerator(tmp_path):
    from hetero_tutorial.app import cli

    if accelerator() is not None:
        pytest.skip("with an accelerator the copies are counted on it for real")
    path = tmp_path / "ppo.json"
    argv = ["ppo", "--placement", "all-device", "--steps", "96", "--num-envs", "3",
            "--num-steps", "16", "--minibatch-size", "16", "--epochs", "1", "--hidden", "8",
            "--json", str(path)]  # fmt: skip
    assert cli.bench(argv) == 0
    assert "not counted" in json.loads(path.read_text())["counted_copies"]["note"]
