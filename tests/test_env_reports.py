"""Notebook 07's helpers: the exercise solutions against the package, crossings, fits, sentences."""

import math
import re

import matplotlib
import numpy as np
import pytest
import torch
from gymnasium.envs.classic_control.pendulum import angle_normalize

from hetero_tutorial.notebook import device_envs_figures, env_rates
from hetero_tutorial.notebook import device_envs_report as report
from hetero_tutorial.notebook.exercises import UNSOLVED
from hetero_tutorial.notebook.solutions.device_envs import pendulum_cost, wrap_angle
from hetero_tutorial.rl.envs.batched import BatchedPendulum
from hetero_tutorial.studies import env_agreement, env_throughput

matplotlib.use("Agg")

THETA = torch.tensor([0.0, 1.0, math.pi - 1e-3, -math.pi, 3.5, 7.0, -10.0, 100.0, -0.5])
THETA_DOT = torch.tensor([0.0, 1.0, -8.0, 8.0, 0.5, -3.0, 2.0, 0.0, 7.5])
TORQUE = torch.tensor([0.0, 2.0, -2.0, 3.0, -9.0, 0.1, 1.5, -0.7, 0.0])


def package_wrap(theta: torch.Tensor) -> torch.Tensor:
    """The package's own wrap (:class:`BatchedPendulum` wraps in place; this copies first)."""
    return BatchedPendulum._wrap(theta.clone())


package_cost = env_agreement.pendulum_step_cost


def test_the_wrap_solution_is_gymnasiums_and_the_packages():
    np.testing.assert_allclose(wrap_angle(THETA), angle_normalize(THETA.numpy()), atol=1e-5)
    torch.testing.assert_close(wrap_angle(THETA), package_wrap(THETA))


def test_the_cost_solution_is_what_the_batched_pendulum_charges():
    mine, package = (f(THETA, THETA_DOT, TORQUE) for f in (pendulum_cost, package_cost))
    torch.testing.assert_close(mine, package, rtol=1e-5, atol=1e-5)
    # hanging straight down at rest, no torque: pi² (the largest angle cost)
    assert package_cost(*(torch.tensor([v]) for v in (math.pi, 0.0, 0.0))).item() == pytest.approx(
        math.pi**2, rel=1e-5
    )


def _row(name, n, rate, env_id="CartPole-v1"):
    return {"implementation": name, "env_id": env_id, "num_envs": n, "env_steps_per_s": rate}


# slow: 1 us per step + 10 us per env; fast: 300 us per step + 0.1 us per env (equal at N = 30.2)
ROWS = [_row("slow", n, n / (1e-6 + 1e-5 * n)) for n in (1, 10, 100, 1000)]
ROWS += [_row("fast", n, n / (3e-4 + 1e-7 * n)) for n in (1, 10, 100, 1000)]


def test_crossings_interpolate_on_the_log_log_plot():
    (cross,) = env_throughput.crossings(ROWS, "CartPole-v1")
    assert cross["faster_below"] == "slow" and cross["faster_above"] == "fast"
    assert cross["between"] == (10, 100) and 20 < cross["num_envs"] < 45  # exact: 30.2
    assert env_throughput.crossings(ROWS, "Pendulum-v1") == []


def test_lines_within_the_tie_do_not_cross_back_and_forth():
    """Noise around equal speeds is a tie, not three crossings."""
    rows = [_row("a", n, r) for n, r in ((1, 10.0), (10, 100.0), (100, 1000.0), (1000, 9000.0))]
    rows += [_row("b", n, r) for n, r in ((1, 1.0), (10, 104.0), (100, 970.0), (1000, 20000.0))]
    (cross,) = env_throughput.crossings(rows, "CartPole-v1")
    assert (cross["faster_below"], cross["faster_above"]) == ("a", "b")
    assert cross["between"] == (1, 1000) and cross["tied_at"] == [10, 100]
    assert "a tie, at N = 10, 100" in env_rates.throughput_findings(rows, "CartPole-v1")


def test_step_cost_fit_recovers_fixed_and_per_env_costs():
    fits = env_throughput.step_cost_fit(ROWS, "CartPole-v1")
    assert fits["slow"]["fixed_s"] == pytest.approx(1e-6, rel=1e-6)
    assert fits["fast"]["per_env_s"] == pytest.approx(1e-7, rel=1e-6)
    assert fits["fast"]["half_fixed_at"] == pytest.approx(3000, rel=1e-6)


def test_findings_are_written_from_the_numbers():
    text = env_rates.throughput_findings(ROWS, "CartPole-v1")
    assert "N = 1: fastest is slow" in text and "N = 1,000: fastest is fast" in text
    assert re.search(
        r"fast overtakes slow at about N = \d\d \(between the measured 10 and 100\)", text
    )
    overhead = env_rates.overhead_findings(ROWS, "CartPole-v1")
    assert "fast: 300 us + 100 ns x N; equal at N = 3,000, ceiling 3,001x" in (overhead)
    assert "slow: 1 us + 10 us x N; equal at N = 0.1, ceiling 1.1x" in overhead
    flat = [_row("flat", n, n / 1e-3) for n in (1, 10, 100)]
    assert "too small to measure up to N = 100" in env_rates.overhead_findings(flat, "CartPole-v1")
    figure = device_envs_figures.throughput_lines(ROWS, ["CartPole-v1"])
    assert len(figure.axes[0].lines) == 3  # two implementations and one crossing


def _ppo_row(name, n, seed, seconds, update_share=0.5, steps=10_000, rate=1e4):
    phases = {"rollout": 1 - update_share, "update": update_share}
    return {"implementation": name, "num_envs": n, "seed": seed, "placement": "p",
            "seconds_to_475": seconds, "solved": seconds is not None, "env_steps_per_s": rate,
            "env_steps": steps, "copies_per_env_step": 0.0, "phase_seconds": phases}  # fmt: skip


def test_ppo_findings_name_the_fastest_and_each_design_beside_the_hybrid_plan():
    from hetero_tutorial.studies.device_ppo import ppo_summary

    rows = [_ppo_row("gymnasium-sync", 8, s, t) for s, t in enumerate((6.0, 8.0, 7.0))]
    rows += [_ppo_row("batched-cpu", 64, s, t, 0.8, 40_000, 3e4)
             for s, t in enumerate((3.0, None, 4.0))]  # fmt: skip
    rows += [_ppo_row("batched-cpu", 256, s, None) for s in range(3)]
    summary = ppo_summary(rows)
    text = report.ppo_findings(summary, rows)
    assert (
        "Fastest to solve: batched-cpu with 64 envs (p): median 3.5 s (seeds 3-4 s), "
        "2 of 3 seeds solved." in text
    )
    assert (
        "batched-cpu at its best (64 envs): median 3.5 s (seeds 3-4 s), 0.5x the hybrid "
        "plan's time" in text
    )
    assert "at 3x its env steps/s and 4x its env steps (40,000 to 10,000)" in text
    assert "batched-cpu with 64 envs (p): 1 of 3 seeds not solved" in text
    assert "batched-cpu with 256 envs (p): 3 of 3 seeds not solved" in text
    assert "the update took 80% of training" in text
    figure = device_envs_figures.seconds_to_solve(rows)
    assert figure.axes[0].get_xticklabels()[1].get_text() == "batched-cpu\nN=64"
    assert "Evaluations every 8,192 env steps" in text
    one_count = [r for r in rows if r["num_envs"] != 256]  # quick mode: "best" of one is no best
    text = report.ppo_findings(ppo_summary(one_count), one_count)
    assert "batched-cpu at 64 envs, the one count run: median 3.5 s" in text
    assert "at its best" not in text
    nothing = [_ppo_row("batched-cpu", 64, 0, None)]
    assert "No configuration" in report.ppo_findings(ppo_summary(nothing), nothing)


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_one_step_from_gymnasiums_states_agrees_to_float32(env_id):
    from hetero_tutorial.studies.env_agreement import one_step_gaps

    gaps = one_step_gaps(env_id, num_envs=8, steps=210)
    assert gaps["obs"] < 1e-5 and gaps["reward"] < 1e-4 and gaps["ends_disagreed"] == 0
    assert gaps["episodes_ended"] >= 8  # Pendulum: every env truncated at step 200


def test_env_steps_to_solve_within_one_evaluation_interval_are_not_read_as_a_ratio():
    from hetero_tutorial.studies.device_ppo import ppo_summary

    rows = [_ppo_row("gymnasium-sync", 8, s, 6.0, steps=8_192) | {"eval_every": 8_192}
            for s in range(2)]  # fmt: skip
    rows += [_ppo_row("batched-cpu", 64, s, 3.0 + s, steps=16_384) | {"eval_every": 8_192}
             for s in range(2)]  # fmt: skip
    text = report.ppo_findings(ppo_summary(rows), rows)
    assert "the same env steps to within one interval (16,384 to 8,192)" in text
    assert "2x its env steps" not in text
    one = [_ppo_row("batched-cpu", 64, 0, 0.4)]
    assert "0.4 s (one seed)" in report.ppo_findings(ppo_summary(one), one)


def test_an_order_from_fewer_than_five_seeds_each_is_no_verdict():
    """07 ranked configurations by one seed each, then (full mode) by three, as if the order
    were measured: a verdict needs five."""
    from hetero_tutorial.studies.device_ppo import ppo_summary

    one = [_ppo_row("gymnasium-sync", 8, 0, 3.3), _ppo_row("batched-cpu", 64, 0, 4.4)]
    assert "this order is no verdict" in report.ppo_findings(ppo_summary(one), one)
    three = [_ppo_row("gymnasium-sync", 8, s, 3.3 + s) for s in range(3)]
    three += [_ppo_row("batched-cpu", 64, s, 4.4 + s) for s in range(3)]
    said = report.ppo_findings(ppo_summary(three), three)
    assert "From 3 seeds per configuration this order is no verdict (a verdict needs 5)" in said
    five = [_ppo_row("gymnasium-sync", 8, s, 3.3 + s) for s in range(5)]
    five += [_ppo_row("batched-cpu", 64, s, 4.4 + s) for s in range(5)]
    assert "no verdict" not in report.ppo_findings(ppo_summary(five), five)


def test_the_learners_predictions_are_set_beside_what_was_measured():
    from hetero_tutorial.studies.device_ppo import ppo_summary

    rows = [_ppo_row("gymnasium-sync", 8, s, t) for s, t in enumerate((6.0, 8.0, 7.0))]
    rows += [_ppo_row("batched-cpu", 64, s, t, 0.8, 40_000, 3e4)
             for s, t in enumerate((3.0, 3.5, 4.0))]  # fmt: skip
    sooner = report.solve_guess_line(2.0, ppo_summary(rows))
    assert (
        "medians of 3 seeds, no verdict below 5): 2.00x, within 25% of your guess of 2.00x"
        in sooner
    )
    assert "the inverse of the ratio above" in sooner
    throughput = [
        {"env_id": "CartPole-v1", "implementation": name, "num_envs": n, "env_steps_per_s": rate}
        for name, n, rate in (
            ("gymnasium-sync", 16, 1e5), ("batched-cpu", 16, 1e6),
            ("gymnasium-sync", 256, 1e5), ("batched-cpu", 256, 2e7),
            ("batched-cpu", 4096, 2e8),  # SyncVectorEnv is not run this far
        )
    ]  # fmt: skip
    batching = report.batching_guess_line(100, throughput)
    assert "at N = 256" in batching and "200x, within 50% of your guess of 100x" in batching
    hanging, turned = torch.tensor(math.pi**2), torch.tensor(0.5138)
    costs = report.cost_guess_lines((9.87, 0.5), hanging, turned, solved=True)
    assert "9.8696, within 5% of your guess" in costs and "0.5138, within 5%" in costs
    assert "7 rad wraps to 7 - 2 pi = 0.7168" in costs
    assert "No guess written" in report.cost_guess_lines(None, 1.0, 2.0, solved=True)
    # unsolved, the reveal tells nothing: not the costs, not why they differ
    assert report.cost_guess_lines((9.87, 0.5), hanging, turned, solved=False) == UNSOLVED


def test_a_fit_whose_ceiling_the_rows_pass_says_so():
    """07's sync CartPole fit had a ceiling of 1.3x while its own rows lifted 1.61x."""
    rates = {1: 63_020.0, 16: 90_000.0, 256: 101_581.0, 4096: 63_286.0}
    rows = [{"env_id": "CartPole-v1", "implementation": "gymnasium-sync", "num_envs": n,
             "env_steps_per_s": r} for n, r in rates.items()]  # fmt: skip
    text = env_rates.overhead_findings(rows, "CartPole-v1")
    assert "yet the rows lift the rate 1.6x at N = 256 (over N = 1)" in text
    assert "the straight line does not fit them closely" in text
