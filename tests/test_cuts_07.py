"""Notebook 07 after the reading cut: one meaning of "solved", what the evaluation grid
resolves, one template for every step-cost fit, the races as pictures (their tables
in docs/), and "ours against CleanRL" naming its settings."""

import matplotlib
import pytest

from hetero_tutorial.core.results import Record
from hetero_tutorial.notebook import device_envs_report as report
from hetero_tutorial.notebook import env_rates, peer_races
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.studies import device_ppo
from hetero_tutorial.studies.device_ppo import GoalRun, fell_back, solved_at

matplotlib.use("Agg")

# notebook 01's seed 0 on a grid of 4,096: 475 at the first two evaluations, then a fall
SEED_0 = [(4096, 486.5), (8192, 482.4), (12288, 346.7), (16384, 163.6), (20480, 302.9),
          (24576, 371.4), (28672, 500.0), (32768, 500.0), (36864, 500.0)]  # fmt: skip


def test_solved_is_the_first_of_three_evaluations_in_a_row_at_the_goal():
    assert solved_at(SEED_0, 475.0) == 6  # 28,672, not the 4,096 it reached and lost
    assert fell_back(SEED_0, 475.0) == [4096, 8192]
    assert solved_at(SEED_0[:8], 475.0) is None  # the budget cut the streak short
    assert fell_back(SEED_0[:8], 475.0) == [4096, 8192]  # the cut streak did not fall back
    assert solved_at(SEED_0, 475.0, streak=1) == 0
    assert solved_at([(1, 500.0), (2, 500.0)], 475.0) is None
    assert fell_back([(1, 400.0), (2, 500.0), (3, 500.0), (4, 500.0)], 475.0) == []


def _run(evaluations, seconds, budget=100_000):
    config = PPOConfig.tuned("CartPole-v1", total_steps=budget)
    return GoalRun(config=config, placement="hybrid", batched_envs=False, seed=0, goal=475.0,
                   env_steps=evaluations[-1][0], iteration_seconds=[seconds[-1]],
                   evaluations=evaluations, phase_seconds={"update": 1.0},
                   evaluation_seconds=seconds)  # fmt: skip


def test_a_run_is_timed_to_the_first_evaluation_of_its_streak():
    run = _run(SEED_0, [0.3 * (i + 1) for i in range(len(SEED_0))])
    assert run.solved and run.env_steps_to_goal == 28_672
    assert run.seconds_to_goal == pytest.approx(2.1)
    line = device_ppo.goal_line(run)
    assert "3 greedy evaluations in a row at 475 or more (500, 500, 500)" in line
    assert "the first after 28,672 env steps, 2.1 s of training" in line
    unsolved = _run(SEED_0[:5], [0.3 * (i + 1) for i in range(5)])
    assert not unsolved.solved and unsolved.seconds_to_goal is None
    assert "not 3 greedy evaluations in a row" in device_ppo.goal_line(unsolved)
    row = device_ppo.ppo_row("gymnasium-sync", run, 1, 4096)
    assert row["env_steps_to_475"] == 28_672 and row["fell_back"] == [4096, 8192]
    assert "solved in 2.1 s (28,672 env steps)" in device_ppo.describe_row(row)


def _row(name, n, seconds, steps, rate, back=(), grid=4096):
    return {"implementation": name, "num_envs": n, "seed": 0, "placement": "p",
            "seconds_to_475": seconds, "solved": seconds is not None, "env_steps_per_s": rate,
            "env_steps": steps + 2 * grid, "env_steps_to_475": steps, "eval_every": grid,
            "copies_per_env_step": 0.0, "phase_seconds": {"update": 1.0, "rollout": 1.0},
            "fell_back": list(back), "streak": 3}  # fmt: skip


def test_the_grid_sentence_says_where_the_grid_does_not_resolve_the_time():
    held = [_row("gymnasium-sync", 8, 2.4, 28_672, 12_000),
            _row("batched-cpu", 64, 3.0, 53_248, 16_000)]  # fmt: skip
    text = report.ppo_findings(device_ppo.ppo_summary(held), held)
    assert "Evaluations every 4,096 env steps: a time to solve is known to one interval" in text
    assert "fell back" not in text
    back = [_row("gymnasium-sync", 8, 2.4, 28_672, 12_000, (4096, 8192)),
            _row("batched-cpu", 64, 3.0, 53_248, 16_000)]  # fmt: skip
    text = report.ppo_findings(device_ppo.ppo_summary(back), back)
    assert "fell back before solving: gymnasium-sync x8 seed 0 (4,096, 8,192)" in text
    assert "evaluations this far apart do not resolve" in text


def test_the_ratio_to_the_hybrid_plan_carries_the_range_the_grid_allows():
    rows = [_row("gymnasium-sync", 8, 2.4, 28_672, 12_000),
            _row("batched-cpu", 64, 3.0, 53_248, 16_000)]  # fmt: skip
    text = report.ppo_findings(device_ppo.ppo_summary(rows), rows)
    # (3.0 - 4096/16000) / 2.4 = 1.14; 3.0 / (2.4 - 4096/12000) = 1.46
    assert "1.2x the hybrid plan's time (1.1-1.5x if either streak began" in text
    assert "1.9x its env steps (53,248 to 28,672)" in text
    quick = [_row("gymnasium-sync", 8, 0.3, 4096, 12_000),
             _row("batched-cpu", 64, 3.0, 53_248, 16_000)]  # fmt: skip
    assert "-unbounded if either" in report.ppo_findings(device_ppo.ppo_summary(quick), quick)


def test_the_ppo_table_names_the_rule():
    rows = [_row("gymnasium-sync", 8, 2.4, 28_672, 12_000), _row("batched-cpu", 64, None, 0, 1)]
    text = report.ppo_table(device_ppo.ppo_summary(rows)).data
    assert "seeds solved (3 in a row)" in text and "median s to solve" in text
    assert "| gymnasium-sync | p | 8 | 1 | 1 | 2.4 | one seed |" in text
    assert "| batched-cpu | p | 64 | 0 | 1 | — | — |" in text


def _fit_rows(fixed, per_env, name):
    return [{"env_id": "CartPole-v1", "implementation": name, "num_envs": n,
             "env_steps_per_s": n / (fixed + per_env * n)} for n in (1, 16, 256, 4096)]  # fmt: skip


def test_every_fit_reads_in_one_template_whichever_part_dominates():
    """Item 26: SyncVectorEnv's fit (equal near N = 1) and a batched one (equal at
    thousands) get the same words, and the ceiling says how far each line can rise."""
    rows = _fit_rows(7.5e-6, 8.28e-6, "gymnasium-sync") + _fit_rows(98e-6, 44e-9, "batched-cpu")
    text = env_rates.overhead_findings(rows, "CartPole-v1")
    sync, batched = text.splitlines()
    assert sync.startswith("- CartPole-v1, gymnasium-sync: 7.5 us + 8.28 us x N; equal")
    assert "equal at N = 0.91, ceiling 1.9x" in sync
    assert "equal at N = 2,227, ceiling 2,228x" in batched
    assert not any(w in text for w in ("almost free", "amortises nothing", "nearly flat"))


PROVENANCE = {"fingerprint": {"cpu_model": "Test CPU", "cpu_logical_cores": 2,
                              "accelerator": None},
              "date": "2026-12-06T10:00:00+00:00", "command": "python b.py --reference",
              "quick": False, "peer_versions": {}}  # fmt: skip


def _pair(point, metric, peer, ratio, ours="ours", orientation="ours / peer"):
    return {"point": point, "metric": metric, "ours": ours, "peer": peer,
            "median_of_round_ratios": ratio, "low": ratio * 0.9, "high": ratio * 1.1,
            "how": "per round", "orientation": orientation, "target": None}  # fmt: skip


def _env_race():
    pairs = [_pair(env, f"steps_per_s@{n}", peer, r * n ** 0.3)
             for env in ("CartPole-v1", "Pendulum-v1") for peer, r in (("gymnax", 0.2),
                                                                        ("envpool", 0.4))
             for n in (1, 64, 4096)]  # fmt: skip
    data = {"rounds": 5, "threads": 1, "core": "1", "summary": {"pairs": pairs, "stats": {}}}
    return Record("bench.env_peers", data, PROVENANCE)


def _ppo_race():
    pairs = [_pair("8 envs", "steps_per_s", "rejax", 0.13), _pair("1024 envs", "steps_per_s",
             "rejax", 0.27), _pair("8 envs", "total_s", "rejax", 0.69, orientation="peer / ours"),
             _pair("8 envs", "steps_per_s", "cleanrl", 1.69), _pair("8 envs", "solve_s",
             "rejax", 0.13, orientation="peer / ours")]  # fmt: skip
    data = {"rounds": 5, "threads": 1, "core": "1", "summary": {"pairs": pairs, "stats": {}},
            "setting": {"num_steps": 32, "minibatch_size": 256, "update_epochs": 10}}  # fmt: skip
    return Record("bench.device_ppo_peers", data, PROVENANCE)


def test_a_race_against_size_is_one_picture_and_its_table_is_in_docs():
    figure = peer_races.ratio_figure(_env_race())
    titles = [ax.get_title() for ax in figure.axes]
    assert titles == ["CartPole-v1", "Pendulum-v1"]
    assert len(figure.axes[0].get_legend().get_texts()) == 2  # ours vs gymnax, vs envpool
    ppo = peer_races.ratio_figure(_ppo_race(), ["steps_per_s", "total_s"])
    assert [ax.get_title() for ax in ppo.axes] == ["env steps/s", "training seconds with compile"]
    beside = peer_races.beside_figure(_env_race()).data
    assert "|" not in beside and "<details>" not in beside  # the figure is the table
    assert "`docs/results.md` and `data/reference/*/bench.env_peers.json`" in beside
    assert "Test CPU" in peer_races.record_line(_env_race(), "bench.env_peers", "b.py")
    assert "`python b.py --reference`" in peer_races.record_line(None, "bench.env_peers", "b.py")


def _targeted(ratio, low, high):
    return _pair("CartPole-v1", "steps_per_s@4096", "gymnax", ratio) | {
        "low": low,
        "high": high,
        "target": 1.0,
    }


@pytest.mark.parametrize(
    ("low", "high", "words"),
    [
        (1.02, 1.20, "The race's targets (benchmarks/README.md) over 5 rounds: 1 of 1 held."),
        (0.74, 1.09, "against the target (at least 1.00x): no clear effect"),
        (0.70, 0.95, "below the target (at least 1.00x) by"),
    ],
)
def test_a_missed_target_is_said_beside_the_figure(low, high, words):
    """07 printed gymnax's 0.97x (0.74-1.09x) against a 1x target in a fold, unsaid."""
    record = Record("bench.env_peers", {"rounds": 5, "threads": 1, "core": "1", "summary": {
        "pairs": [_targeted((low + high) / 2, low, high)], "stats": {}}}, PROVENANCE)  # fmt: skip
    shown = peer_races.beside_figure(record).data
    assert words in shown
    assert ("did not hold" in shown) == (high < 1.0)


def test_the_rejax_race_says_how_many_rounds_each_side_solved():
    runs = {"8 envs": {"ours": [{"solved": True, "evaluations": []}] * 5,
                       "rejax": [{"solved": s, "evaluations": []} for s in (1, 0, 1, 0, 1)],
                       "sb3": [{"steps_per_s": 1.0}] * 5},
            "1024 envs": {"ours": [{"solved": False, "evaluations": []}] * 5}}  # fmt: skip
    data = {"runs": runs, "hold": 3, "goal": 475.0,
            "points": {"8": {"eval_every": 8192, "spans": 13},
                       "1024": {"eval_every": 32768, "spans": 20}}}  # fmt: skip
    line = report.solved_line(Record("bench.device_ppo_peers", data, PROVENANCE))
    assert "at 8 envs, rounds solved: ours 5 of 5, rejax 3 of 5;" in line
    assert "sb3" not in line and "at 1024 envs none of ours solved within 655,360 steps" in line
    assert report.solved_line(None) == ""


def test_ours_against_cleanrl_names_its_settings_and_the_other_race():
    line = report.cleanrl_line(_ppo_race())
    assert "RL Zoo's settings (8 envs x 32 steps, 10 epochs, minibatches of 256)" in line
    assert "ours 1.69x its env steps/s (rounds 1.52-1.86x)" in line
    assert "Notebook 01's race is another: CleanRL's own settings" in line
    assert line.startswith("- CleanRL") and "No race" in report.cleanrl_line(None)


def test_per_environment_findings_print_the_guard_once_on_a_busy_machine(monkeypatch):
    from hetero_tutorial.core import machine_load

    rows = _fit_rows(7.5e-6, 8.28e-6, "gymnasium-sync") + [
        r | {"env_id": "Pendulum-v1"} for r in _fit_rows(8e-6, 13e-6, "gymnasium-sync")
    ]
    quiet = env_rates.per_environment(
        env_rates.overhead_findings, rows, ["CartPole-v1", "Pendulum-v1"]
    )
    assert "- CartPole-v1, gymnasium-sync" in quiet and "- Pendulum-v1, gymnasium-sync" in quiet
    busy = machine_load.Busyness("the study", 4.0, off_reference=("a step 4x this CPU's record",))
    monkeypatch.setattr(machine_load, "readings_of", lambda *figures: [busy])
    text = env_rates.per_environment(
        env_rates.overhead_findings, rows, ["CartPole-v1", "Pendulum-v1"]
    )
    assert text == busy.line() and "gymnasium-sync" not in text


def test_a_race_with_a_missed_target_names_the_ones_that_held():
    held, missed = _targeted(1.1, 1.02, 1.20), _targeted(0.9, 0.70, 0.95)
    held["metric"] = "steps_per_s@8"
    record = Record("bench.env_peers", {"rounds": 5, "threads": 1, "core": "1", "summary": {
        "pairs": [held, missed], "stats": {}}}, PROVENANCE)  # fmt: skip
    shown = peer_races.beside_figure(record).data
    assert (
        "The race's targets (benchmarks/README.md) over 5 rounds: 1 of 2 held: " in shown
        and "did not hold" in shown
    )
