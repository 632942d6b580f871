"""Notebook 07's sentences and tables from measured values: the one-step agreement, the PPO
settings and results tables, the update's share, and the reference records' findings."""

from hetero_tutorial.core import results
from hetero_tutorial.notebook import device_envs_report as report
from hetero_tutorial.studies import device_ppo
from hetero_tutorial.studies.env_agreement import gaps_sentence


def _gaps(obs=2e-7, reward=0.0, disagreed=0, ended=30):
    return {"env_id": "CartPole-v1", "num_envs": 16, "steps": 300, "obs": obs,
            "reward": reward, "ends_disagreed": disagreed, "episodes_ended": ended}  # fmt: skip


def test_the_agreement_sentence_says_whether_rounding_and_episode_ends_held():
    agreed = gaps_sentence(_gaps())
    assert "agrees to float32's rounding" in agreed and "all 30 episode ends" in agreed
    drifted = gaps_sentence(_gaps(obs=3e-3, disagreed=2))
    assert "differs" in drifted and "obs gap 3.0e-03 > 1e-05" in drifted
    assert "2 episode end(s) on different steps" in drifted and "agrees" not in drifted
    assert "agrees" not in gaps_sentence(_gaps(disagreed=1))


def test_the_gaps_table_has_a_row_per_environment():
    text = report.gaps_table([_gaps(), _gaps() | {"env_id": "Pendulum-v1"}]).data
    assert "| CartPole-v1 | 16 | 300 | 2.0e-07 |" in text and "| Pendulum-v1 |" in text


def _run(update, rollout, implementation="batched-cpu", n=64):
    return {"implementation": implementation, "num_envs": n, "seed": 0, "placement": "p",
            "seconds_to_475": 1.0, "solved": True, "env_steps_per_s": 1e4, "env_steps": 1000,
            "copies_per_env_step": 0.0,
            "phase_seconds": {"update": update, "rollout": rollout}}  # fmt: skip


def test_the_update_share_says_what_faster_environments_can_shorten():
    for update, words in ((3.0, "took 75% of training"), (1.0, "only the other 50%")):
        rows = [_run(update, 1.0)]
        assert words in report.ppo_findings(device_ppo.ppo_summary(rows), rows)


def test_the_ppo_tables_show_each_configuration():
    rows = [_run(1.0, 1.0), _run(1.0, 1.0, "gymnasium-sync", 8)]
    text = report.ppo_table(device_ppo.ppo_summary(rows)).data
    assert "| batched-cpu | p | 64 | 1 | 1 | 1 |" in text and "| gymnasium-sync |" in text
    settings = report.settings_table([16, 64]).data
    batched = device_ppo.config_for(device_ppo.implementations()[1], 64)
    assert "| gymnasium-sync |" in settings and settings.count("| batched-cpu |") == 2
    assert f"| {batched.num_envs} | {batched.num_steps} | {batched.minibatch_size} |" in settings


def test_reference_findings_name_the_machine_and_what_it_measured():
    fingerprint = {"accelerator": {"type": "cuda", "name": "Test GPU"}}
    provenance = {"fingerprint": fingerprint, "date": "2026-01-01", "command": "t", "quick": False}
    rows = [{"implementation": "batched-cuda", "env_id": "CartPole-v1", "num_envs": 1,
             "env_steps_per_s": 100.0}]  # fmt: skip
    ppo_rows = [_run(1.0, 3.0, "batched-cuda")]
    ppo = {"rows": ppo_rows, "summary": device_ppo.ppo_summary(ppo_rows)}
    record = results.Record("bench.device_envs", {"rows": rows, "ppo": ppo}, provenance)
    text = report.reference_findings(record, ["CartPole-v1"])
    assert text.startswith("Test GPU\n") and "fastest is batched-cuda" in text
    assert "Fastest to solve: batched-cuda" in text
    record.data["ppo"] = None
    assert "Fastest to 475" not in report.reference_findings(record, ["CartPole-v1"])
