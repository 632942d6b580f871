"""C4's sensitivity: the copies per step of PPO and DDPG as the number of environments and
the replay buffer's design change, counted on the meta device, and the sentence read from them."""

from hetero_tutorial.studies.copies import c4_sensitivity, c4_sensitivity_sentence


def _row(algorithm, setting, copies, rollout=None):
    by_phase = {"rollout": {"count_per_env_step": rollout}} if rollout is not None else {}
    return {"algorithm": algorithm, "setting": setting, "copies_per_env_step": copies,
            "counted_on": "meta", "by_phase": by_phase}  # fmt: skip


def test_counted_ddpg_copies_more_with_pattern_a_than_with_the_tensor_buffer():
    rows = c4_sensitivity(envs=(8,))
    by = {(r["algorithm"], r["setting"]): r["copies_per_env_step"] for r in rows}
    assert (
        by[("ddpg", "pattern A")]
        > by[("ddpg", "the tensor buffer")]
        > by[("ppo", "8 environments")]
    )
    assert {r["counted_on"] for r in rows} == {"meta"}


def test_the_sentence_says_what_the_verdict_turns_on():
    rows = [_row("ppo", "1 environment", 2.02, 2.01), _row("ppo", "8 environments", 0.27, 0.26),
            _row("ddpg", "pattern A", 8.0), _row("ddpg", "the tensor buffer", 3.0)]  # fmt: skip
    text = c4_sensitivity_sentence(rows)
    assert (
        "than DDPG in 0 of 4 pairings of the table's settings (PPO / DDPG from 0.03x to 0.67x)"
        in text
    )
    assert "holds at none of the settings counted here" in text
    assert "2.01 at 1 environment, 0.26 at 8 environments" in text
    rows[-1]["copies_per_env_step"] = 1.0  # PPO at 1 env now copies more than the tensor buffer
    flipped = c4_sensitivity_sentence(rows)
    assert "in 1 of 4 pairings" in flipped and "the verdict itself turns on" in flipped
