"""GAIL: the discriminator learns and rewards, a round runs PPO on its rewards, C12's rule."""

import numpy as np
import pytest
import torch

from hetero_tutorial.core.placement import placement
from hetero_tutorial.core.results import Record
from hetero_tutorial.ledger.claims import Status, claim, group_by_kind, judge
from hetero_tutorial.rl.envs.mujoco import mujoco_problem
from hetero_tutorial.rl.gail.config import GAILConfig
from hetero_tutorial.rl.gail.demonstrations import Demonstrations
from hetero_tutorial.rl.gail.discriminator import (
    Discriminator,
    DiscriminatorLearner,
    discriminator_loss,
    reward,
)
from hetero_tutorial.studies.gail import crossover_rows

needs_mujoco = pytest.mark.skipif(mujoco_problem() is not None, reason=str(mujoco_problem()))


def clouds(rows: int, shift: float, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Expert rows around +shift and policy rows around -shift, 17 + 6 columns."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(rows, 23, generator=g) + shift, torch.randn(rows, 23, generator=g) - shift)


def test_the_reward_is_minus_log_one_minus_d():
    logits = torch.linspace(-6, 6, 13)
    expected = -torch.log(1 - torch.sigmoid(logits))
    torch.testing.assert_close(reward(logits), expected, rtol=1e-5, atol=1e-6)
    assert (reward(logits).diff() > 0).all()  # a row the discriminator takes for the expert's
    # is worth more to the generator


@pytest.mark.parametrize("penalty", [0.0, 10.0])
def test_the_discriminator_learns_to_tell_expert_rows_from_the_policys(penalty):
    torch.manual_seed(0)
    learner = DiscriminatorLearner(17, 6, 64, 1e-3, penalty, "cpu")
    expert, policy = clouds(256, 0.5)
    first = learner.update(expert, policy).item()
    for _ in range(150):
        accuracy = learner.update(expert, policy).item()
    assert first < 0.8 < accuracy
    assert learner.label(expert).mean() > learner.label(policy).mean()


def test_the_gradient_penalty_adds_a_term_and_a_second_backward_pass():
    torch.manual_seed(0)
    disc = Discriminator(17, 6, 64)
    expert, policy = clouds(64, 0.5)
    plain, _ = discriminator_loss(disc, expert, policy, 17, 0.0)
    torch.manual_seed(1)
    penalised, _ = discriminator_loss(disc, expert, policy, 17, 10.0)
    assert penalised > plain
    penalised.backward()  # through the gradient's own graph
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in disc.parameters())


def test_a_bad_setting_is_refused_with_its_name():
    with pytest.raises(Exception, match="disc_rows"):
        GAILConfig(disc_rows=0)


@needs_mujoco
def test_a_round_labels_the_rollout_with_the_discriminators_reward_only():
    """The generator sees no environment reward: after labelling, a stored reward is the
    discriminator's for the executed (clipped) action (plus a bootstrap where a time limit
    cut an episode), while the episodes still record HalfCheetah's own returns."""
    from hetero_tutorial.rl.gail.trainer import GAILTrainer

    rng = np.random.default_rng(0)
    expert = Demonstrations(
        rng.normal(size=(500, 17)).astype(np.float32),
        rng.uniform(-1, 1, size=(500, 6)).astype(np.float32),
        np.zeros(500, np.float32),
        np.zeros(500, np.int32),
        {},
    )
    config = GAILConfig(total_steps=2 * 4 * 256, num_steps=256, disc_rows=128)
    trainer = GAILTrainer(config, placement("all-cpu"), expert, seed=0)
    seen = {}

    def label_and_keep() -> None:
        GAILTrainer.label_rewards(trainer)
        executed = trainer.storage.actions.clamp(-1.0, 1.0)  # HalfCheetah's bounds
        rows = torch.cat([trainer.storage.obs, executed], -1).flatten(0, 1)
        seen["expected"] = trainer.disc.label(rows).view(trainer.storage.rewards.shape)
        seen["raw_outside"] = (trainer.storage.actions.abs() > 1).any().item()
        seen["stored"] = trainer.storage.rewards.clone()
        seen["dones"] = trainer.storage.dones.clone()

    trainer.label_rewards = label_and_keep
    while not trainer.done:
        trainer.run_iteration()
    not_cut = seen["dones"] == 0
    torch.testing.assert_close(seen["stored"][not_cut], seen["expected"][not_cut])
    assert seen["raw_outside"], (
        "a Gaussian policy's raw samples pass the bounds: the test needs one"
    )
    assert {"discriminator", "labelling"} <= set(trainer.timer.seconds)
    assert len(trainer.accuracy) == 2
    trainer.close()


def _gail_record(cpu_s: float, accel_s: float | None, iqr: float = 0.02) -> Record:
    sweep = []
    for rows in (1_024, 16_384):
        for device, seconds in (("cpu", cpu_s), ("cuda:0", accel_s)):
            if seconds is None:
                continue
            scale = rows / 1_024
            sweep.append({"device": device, "rows": rows, "width": 64, "penalty": 0.0,
                          "median_s": seconds * scale, "iqr_s": iqr * seconds * scale})  # fmt: skip
    gpu = {"type": "cuda", "device": "cuda:0", "name": "Test GPU"} if accel_s else None
    fingerprint = {"accelerator": gpu, "cpu_model": "Test CPU", "usable_cores": 2}
    return Record(
        "bench.gail",
        {"sweep": sweep, "accelerator": "cuda:0" if accel_s else None, "rounds": []},
        {"fingerprint": fingerprint, "date": "2026-12-07T00:00:00+00:00", "command": "t",
         "quick": 0},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("accel_s", "status"),
    [(None, Status.NOT_MEASURABLE), (0.5e-3, Status.HELD), (2e-3, Status.NOT_HELD),
     (1.005e-3, Status.NO_CLEAR_EFFECT)],
)  # fmt: skip
def test_c12_is_judged_from_the_discriminator_sweep(accel_s, status):
    verdict = judge(claim("C12"), group_by_kind([_gail_record(1e-3, accel_s)]))
    assert verdict.status is status, verdict.measured
    if accel_s is None:
        assert "what an accelerator would have to beat" in verdict.measured
        assert "1 ms at 1,024" in verdict.measured
    elif status is Status.HELD:
        assert "1,024 rows, width 64" in verdict.measured
    elif status is Status.NOT_HELD:
        assert "no setting measured" in verdict.measured


def test_the_crossover_is_the_fewest_rows_where_the_accelerator_wins_past_both_iqrs():
    sweep = [
        {"device": d, "rows": r, "width": 64, "penalty": 0.0, "median_s": s, "iqr_s": 0.1 * s}
        for r, (c, a) in {64: (1.0, 3.0), 1024: (1.0, 0.95), 16384: (1.0, 0.5)}.items()
        for d, s in (("cpu", c), ("cuda:0", a))
    ]
    assert crossover_rows(sweep, "cuda:0") == {(64, 0.0): 16384}
    assert crossover_rows([r for r in sweep if r["rows"] < 16384], "cuda:0") == {(64, 0.0): None}


def _rounds(returns: list[float]) -> list[dict]:
    seconds = {"rollout": 0.2, "discriminator": 0.01, "labelling": 0.001, "update": 0.3}
    episodes = [(1000 * (i + 1), r) for i, r in enumerate(returns)]
    return [{"case": "all on the CPU", "seconds_per_round": seconds, "copies": {},
             "episodes": episodes, "accuracy": [0.5, 0.7], "round_steps": 2048}]  # fmt: skip


@pytest.mark.parametrize(("returns", "word"), [([-400, -390, -300, -200], "rose"),
                                               ([-300, -320, -360, -380], "fell")])  # fmt: skip
def test_the_learning_sentence_says_which_way_the_returns_went(monkeypatch, returns, word):
    from hetero_tutorial.notebook import gail_report

    monkeypatch.setattr(gail_report, "quick_mode", lambda: False)
    line = gail_report.learning_sentence(_rounds(returns), 8000.0)
    assert f"return {word}" in line and "no verdict on learning" in line
    monkeypatch.setattr(gail_report, "quick_mode", lambda: True)
    assert "no learning verdict" in gail_report.learning_sentence(_rounds(returns), 8000.0)


def test_the_phase_guess_line_says_whether_the_guess_held():
    from hetero_tutorial.notebook.gail_report import phase_guess_line

    rounds = _rounds([-300, -300])
    assert "as you predicted" in phase_guess_line("update", rounds)
    assert "you predicted 'rollout'" in phase_guess_line("rollout", rounds)
    assert "MY_PHASE_GUESS" in phase_guess_line(None, rounds)
    assert "is not a phase" in phase_guess_line("lunch", rounds)


def test_the_compiled_discriminator_update_steps_as_the_eager_one():
    """One function per step: compiled, the update makes the eager update's weights; with
    the gradient penalty it runs eagerly (its second backward pass is not compiled)."""
    from hetero_tutorial.rl.gail.discriminator import DiscriminatorLearner

    expert, policy = torch.randn(64, 23), torch.randn(64, 23) + 1
    learners = []
    for compile in (False, True):
        torch.manual_seed(0)
        learner = DiscriminatorLearner(17, 6, 16, 1e-3, 0.0, "cpu", compile=compile)
        for _ in range(3):
            learner.step(expert, policy)
        learners.append(learner)
    assert learners[0].step.mode == "eager" and learners[1].step.mode == "compile"
    assert learners[1].step.fn is not learners[1].update  # compiled, not the method itself
    for eager, compiled in zip(*(ln.discriminator.parameters() for ln in learners), strict=True):
        torch.testing.assert_close(eager, compiled, rtol=1e-4, atol=1e-5)
    penalised = DiscriminatorLearner(17, 6, 16, 1e-3, 10.0, "cpu", compile=True)
    assert penalised.step.mode == "eager"


def _grid(win_from: int) -> list[dict]:
    """A width-64 grid whose accelerator forward wins from ``win_from`` rows per call."""
    rows = []
    for batch in (1, 16, 256, 4096):
        for device, seconds in (
            ("cpu", 1e-4 * batch),
            ("cuda:0", 2e-5 * batch if batch >= win_from else 1.0),
        ):
            rows.append({"device": device, "width": 64, "batch_size": batch,
                         "seconds_per_call": seconds, "iqr_s": seconds / 100})  # fmt: skip
    return rows


def test_the_discriminators_crossover_is_checked_against_notebook_00s_grid():
    from hetero_tutorial.notebook import gail_report
    from hetero_tutorial.studies import gail as study

    assert study.grid_crossing(_grid(256), 64) == (16, 256)
    assert study.grid_crossing(_grid(10**6), 64) is None
    sweep = [{"width": 64, "rows": n} for n in (64, 256, 1024, 4096)]
    held = gail_report.grid_findings(sweep, {(64, 0.0): 256}, _grid(256))
    assert held[0].endswith(": held")
    broken = gail_report.grid_findings(sweep, {(64, 0.0): 4096}, _grid(256))
    assert "above notebook 00's forward crossover at width 64 (16 to 256)" in broken[0]
    assert "the expectation did not hold" in broken[0]
    assert "no accelerator here" in gail_report.grid_findings(sweep, {}, _grid(256))[0]
