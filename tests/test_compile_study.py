"""The compile study's arithmetic and rows, and notebook 08's sentences, without compiling.

Compiling itself is tested in test_compiled.py; here the modes are eager only (or rows
made by hand), so these tests take a second.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import pytest

from hetero_tutorial.app.bench import compile as bench_compile
from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.placement import as_placement
from hetero_tutorial.notebook import compile_race, forward_grid
from hetero_tutorial.notebook import compile_report as report
from hetero_tutorial.notebook.solutions.compile_and_graphs import largest_gain
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.studies import compile_breakdown, compile_rows, compiling
from hetero_tutorial.studies.compile_rows import (
    Breakdown,
    CompileStudy,
    PieceRow,
    RunRow,
    SpeedupRow,
)


def _row(piece, mode, size, samples, compile_seconds=0.0):
    samples = list(samples)
    median = sorted(samples)[len(samples) // 2]
    return PieceRow(piece=piece, mode=mode, device="cpu", size=size, seconds=median, iqr_s=0.0,
                    samples=samples, first_call_seconds=median + compile_seconds,
                    compile_seconds=compile_seconds)  # fmt: skip


def _speedup(piece, size, speedup, low, high, mode="compile"):
    """A compiled piece's row over eager, made by hand (the figures a test reads, the rest 0)."""
    return SpeedupRow(piece=piece, device="cpu", size=size, mode=mode, speedup=speedup, low=low,
                      high=high, compile_seconds=0.0, break_even_calls=None)  # fmt: skip


def _run(piece, mode, size, **figures):
    """A compiled run's row, made by hand: ``figures`` over placeholders."""
    base = dict(piece=piece, unit="iteration", device="cpu", size=size, mode=mode, seconds=1.0,
                env_steps_per_s=1.0, first_iteration_s=1.0, compile_seconds=0.0, speedup=1.0,
                low=None, high=None, break_even_iterations=None, graph_skips=0)  # fmt: skip
    return RunRow(**base | figures)


def test_speedups_pair_the_repeats_and_say_when_compiling_pays_back():
    rows = [
        _row("update", "eager", 256, [1.0, 1.05, 1.1, 1.15, 1.2]),
        _row("update", "compile", 256, [0.5, 0.525, 0.55, 0.575, 0.6], compile_seconds=3.0),
        _row("act", "eager", 8, [1.0] * 5),
        _row("act", "compile", 8, [1.25] * 5, compile_seconds=1.0),
    ]
    update, act = compile_rows.speedup_rows(rows)
    assert update.repeats == 5
    few = replace(update, repeats=3)  # a range of three repeats: no verdict, nor a pay-back
    assert report.verdict(few) == "no verdict (3 repeats, and a verdict needs 5)"
    assert "paid back" not in report.speedup_sentence(few)
    assert update.speedup == pytest.approx(2.0) and (update.low, update.high) == (2, 2)
    assert update.break_even_calls == pytest.approx(3.0 / (1.1 - 0.55))
    assert act.speedup == pytest.approx(0.8) and act.break_even_calls is None
    assert report.verdict(update) == "faster" and report.verdict(act) == "slower"
    assert "paid back after 5 calls" in report.speedup_sentence(update)
    assert "slower" in report.speedup_sentence(act) and "paid back" not in report.speedup_sentence(
        act
    )
    assert "one PPO minibatch step" in report.largest_gain_sentence([update, act])
    summary = report.summary_lines([update, act], [], None)
    assert any("lost on" in line and "at 8, 0.80x" in line for line in summary)
    assert largest_gain([update.fields(), act.fields()]) == "update"  # the exercise's dicts


def test_a_loss_at_a_larger_call_breaks_the_guard_account_and_says_so():
    """08's run lost at act 1,024 (0.67x) and not at 8: a fixed cost per call cannot do that."""
    small = _speedup("act", 8, 1.07, 0.91, 1.37)
    large = _speedup("act", 1024, 0.67, 0.66, 0.72)
    said = str(report.guard_finding(large, [small, large]))
    assert "at least 0.91x" in said and "the expectation did not hold" in said
    assert "a fixed cost per call cannot do" in said
    assert "its smallest size measured" in str(report.guard_finding(small, [small, large]))
    held = replace(large, speedup=1.2, low=1.1, high=1.3)
    assert str(report.guard_finding(held, [small, held])).endswith(": held")


def test_the_largest_gain_is_the_one_every_repeat_agreed_on():
    rows = [
        {"piece": "act", "speedup": 1.6, "low": 0.7, "high": 2.5},
        {"piece": "update", "speedup": 1.3, "low": 1.2, "high": 1.4},
        {"piece": "env_step", "speedup": 1.1, "low": None, "high": None},
    ]
    assert largest_gain(rows) == "update"


def test_piece_rows_time_each_size_and_refuse_unknown_pieces():
    rows = compiling.piece_rows(
        "env_step", [8], modes=["eager"], repeats=2, seconds_per_repeat=0.001
    )
    (row,) = rows
    assert row.piece == "env_step" and row.size == 8 and row.seconds > 0
    assert len(row.samples) == 2 and row.compile_seconds == 0.0
    for piece in ("act", "update"):
        assert compiling.piece_rows(piece, [4], modes=["eager"], repeats=1)[0].seconds > 0
    with pytest.raises(UsageError, match="unknown piece"):
        compiling.piece_rows("rollout")


def test_ppo_rows_take_the_first_iteration_apart():
    config = compiling.with_iterations(PPOConfig.tuned("CartPole-v1"), 2)
    assert config.num_iterations == 3
    (row,) = compiling.ppo_rows(config, as_placement("all-device"), ["eager"], timed=2)
    assert row.mode == "eager" and row.first_iteration_s > 0 and row.speedup == 1.0
    assert row.env_steps_per_s == pytest.approx(config.batch_size / row.seconds)
    with pytest.raises(UsageError, match="need 4"):
        compiling.ppo_rows(config, as_placement("all-device"), ["eager"], timed=3)


def test_a_run_sentence_says_when_cuda_graphs_were_declined():
    row = _run("ppo-all-device", "cudagraphs", 64, env_steps_per_s=9e4, speedup=2.0, low=1.8,
               high=2.2, compile_seconds=30.0, break_even_iterations=12.0)  # fmt: skip
    assert "declined" not in report.run_sentence(row)
    assert "declined 2 of its graphs" in report.run_sentence(replace(row, graph_skips=2))


def test_the_grid_and_its_crossovers():
    grid = compiling.forward_grid_rows([8], [4], ["cpu"], repeats=2, seconds_per_repeat=0.001)
    assert {(r.width, r.batch_size) for r in grid} == {(8, 4)}
    assert compile_rows.crossovers_by_mode(grid) == {}  # the CPU alone: no crossover
    assert "Only the CPU" in forward_grid.crossover_lines({})[0]


def test_ddpg_rows_pair_turns_of_steps_eagerly():
    config = DDPGConfig(learning_starts=300, hidden=16, batch_size=32)
    (row,) = compiling.ddpg_rows(config, as_placement("all-cpu"), ["eager"], 20, chunk=10)
    assert row.piece == "ddpg-all-cpu" and row.unit == "update" and row.size == 32
    assert row.env_steps_per_s > 0 and row.first_iteration_s > 0 and row.speedup == 1.0
    assert report.run_sentence(row).startswith("- ddpg-all-cpu eager, batch 32: ")
    with pytest.raises(UsageError, match="timed_steps"):
        compiling.ddpg_rows(config, as_placement("all-cpu"), ["eager"], 0)
    for rows in (compiling.ddpg_rows, compiling.ppo_rows):  # ratios to eager need eager
        with pytest.raises(UsageError, match="must include 'eager'"):
            rows(config, as_placement("all-cpu"), ["compile"], 20)


def test_bench_compile_refuses_a_negative_ddpg_budget_before_measuring():
    parser = argparse.ArgumentParser()
    bench_compile.add_arguments(parser)
    with pytest.raises(UsageError, match="--ddpg-steps must be 0"):
        bench_compile.run(parser.parse_args(["--ddpg-steps", "-1"]))


def test_bench_compile_parses_its_sizes():
    parser = argparse.ArgumentParser()
    bench_compile.add_arguments(parser)
    args = parser.parse_args(["--act-sizes", "8", "--env-step-sizes", "64", "--no-ppo"])
    assert args.act_sizes == [8] and args.env_step_sizes == [64] and args.no_ppo
    assert args.update_sizes == list(compiling.SIZES["update"])


def _race_record(contestants):
    stats = {"8 envs": {name: {metric: {"median": value} for metric, value in figures.items()}
                        for name, figures in contestants.items()}}  # fmt: skip
    runs = {"8 envs": {"ours-compiled": [{"compile_cache_warm": True}] * 2}}
    return results.Record("bench.device_ppo_peers", {"summary": {"stats": stats}, "runs": runs})


def test_the_race_lines_quote_the_compiled_contestant_where_it_raced():
    rejax = {"steps_per_s": 40_000.0, "compile_s": 13.0}
    eager = {"steps_per_s": 10_000.0}
    raced = _race_record(
        {
            "ours": eager,
            "ours-compiled": {"steps_per_s": 20_000.0, "compile_s": 4.0},
            "rejax": rejax,
        }
    )
    line = compile_race.rejax_lines(raced, [])[1]
    assert "ours eager 10,000 (0.25x rejax)" in line
    assert "ours compiled 20,000 (0.50x rejax; its compile 4.0 s, from a warm cache)" in line
    live = [_run("ppo-all-device", "compile", 8, speedup=1.5)]
    estimated = compile_race.rejax_lines(_race_record({"ours": eager, "rejax": rejax}), live)[1]
    assert "about 15,000 (0.38x rejax): an estimate" in estimated
    pair = {"point": "8 envs", "ours": "ours-compiled", "peer": "rejax", "metric": "steps_per_s",
            "median_of_round_ratios": 0.55, "low": 0.45, "high": 0.6}  # fmt: skip
    raced.data["summary"]["pairs"] = [pair]  # rounds paired: their ratios, as the tables
    paired = compile_race.rejax_lines(raced, [])[1]
    assert "ours compiled 20,000 (0.55x rejax, rounds 0.45-0.60x; its compile" in paired


_BREAKDOWN = Breakdown(size=256, step_s=400e-6, matmul_s=200e-6, profiled_s=500e-6,
                       matmul_calls=8, matmul_flops=12_000_000, peak_flops_per_s=80e9,
                       peak_size=512)  # fmt: skip


def test_the_breakdown_sentence_splits_the_step_at_its_products():
    text = report.breakdown_sentence(_BREAKDOWN)
    assert "8 matrix products take 200 us of it (50%): 12.0 MFLOP at 60 GFLOP/s" in text
    assert "one 512-square product runs at 80 GFLOP/s here" in text
    assert "(at that rate they would take 150 us)" in text
    assert "The other 200 us are what compiling left" in text
    drifted = report.breakdown_sentence(replace(_BREAKDOWN, step_s=190e-6))
    assert "took the whole untimed step: measure again" in drifted and "other" not in drifted


def test_rejax_per_gradient_step_is_set_against_our_products():
    def record(rejax_steps_per_s, minibatch=256):
        setting = {"num_steps": 32, "minibatch_size": minibatch, "update_epochs": 10}
        stats = {"1024 envs": {"rejax": {"steps_per_s": {"median": rejax_steps_per_s}}}}
        fields = {"setting": setting, "points": {"8": {}, "1024": {}}, "summary": {"stats": stats}}
        return results.Record("bench.device_ppo_peers", fields)

    # 1,024 envs x 32 steps = 32,768 per iteration, 10 epochs x 128 minibatches of 256:
    # at 102,400 steps/s an iteration is 0.32 s, 250 us per gradient step.
    line = compile_race.rejax_step_line(record(102_400.0), _BREAKDOWN)
    assert "at most 250 us per gradient step" in line and "1.25x our products alone" in line
    assert "would have to fit in 50 us; here it takes 200 us, 4.0x that" in line
    faster = compile_race.rejax_step_line(record(204_800.0), _BREAKDOWN)  # 125 us: < products
    assert "Its products ran faster than ours do here" in faster
    slower = compile_race.rejax_step_line(record(51_200.0), _BREAKDOWN)  # 500 us: room for our rest
    assert "fits in the 300 us that leaves: the gap is outside the update step" in slower
    other = compile_race.rejax_step_line(record(102_400.0, minibatch=64), _BREAKDOWN)
    assert other.startswith("The race's minibatch (64) is not the breakdown's (256)")
    missing = record(102_400.0)
    missing.data["summary"]["stats"] = {}
    assert "no rejax run at 1,024 envs" in compile_race.rejax_step_line(missing, _BREAKDOWN)


def test_a_step_alone_slower_than_the_races_own_step_says_the_gap_overstates():
    """08's quick run: our step alone took 466 us, the race's whole step of ours 367 us
    (0.96x rejax), while this run's PPO ran as fast as the record's: a step timed alone,
    one minibatch to a call, pays more than one in the run's loop, four to a call."""
    setting = {"num_steps": 32, "minibatch_size": 256, "update_epochs": 10}
    stats = {"1024 envs": {"rejax": {"steps_per_s": {"median": 102_400.0}},
                           "ours-compiled": {"steps_per_s": {"median": 128_000.0}}}}  # fmt: skip
    pairs = [{"point": "1024 envs", "ours": "ours-compiled", "peer": "rejax",
              "metric": "steps_per_s", "median_of_round_ratios": 1.25}]  # fmt: skip
    fields = {"setting": setting, "points": {"8": {}, "1024": {}},
              "summary": {"stats": stats, "pairs": pairs}}  # fmt: skip
    record = results.Record("bench.device_ppo_peers", fields)
    line = compile_race.rejax_step_line(record, _BREAKDOWN)  # ours recorded: 200 us a step
    assert "But this step timed alone (400 us, one minibatch to a compiled call) outlasts" in line
    assert "rollout included (200 us, 4 minibatch steps to a call): the gap overstates" in line
    assert line.endswith("the race itself has ours compiled at 1.25x rejax.")
    quick = compile_race.rejax_step_line(record, replace(_BREAKDOWN, step_s=190e-6))
    assert "overstates" not in quick


def test_the_run_lengths_come_from_the_configs():
    ppo = PPOConfig.tuned("CartPole-v1", num_envs=8, total_steps=100_000)
    text = report.run_lengths_sentence(ppo, DDPGConfig())
    assert f"at 8 environments has {ppo.num_iterations:,} iterations" in text
    updates = DDPGConfig().total_steps - DDPGConfig().learning_starts
    assert f"default {DDPGConfig().total_steps:,} steps makes {updates:,} updates" in text


def test_a_products_flops_come_from_its_shapes():
    flops = compile_breakdown._matmul_flops
    assert flops("aten::mm", [[256, 64], [64, 32]]) == 2 * 256 * 64 * 32
    bias, left, right = [2, 1, 64], [2, 256, 4], [2, 4, 64]
    assert flops("aten::baddbmm", [bias, left, right]) == 2 * 2 * 256 * 4 * 64


def test_the_gain_guess_line_sets_the_prediction_beside_the_solved_answer():
    from hetero_tutorial.notebook import compile_report as report

    assert report.gain_guess_line("update", None).startswith("Solve the exercise above")
    assert report.gain_guess_line("update", "update").endswith(": as you predicted.")
    assert "not act, as you predicted" in report.gain_guess_line("act", "update")
    assert "(No guess written.)" in report.gain_guess_line(None, "env_step")
    assert "names no piece" in report.gain_guess_line("forward", "act")


def test_the_typed_rows_read_committed_records_back_and_write_the_same_fields():
    """The study hands its rows to the report as dataclasses; every ``bench.compile`` record in
    data/reference/ reads back into them and writes the fields it was read from, key for key
    and in order, as JSON (the rows' types as its fields say)."""
    import json

    records = results.load_references("bench.compile")
    assert records
    for record in records:
        study = CompileStudy.from_fields(record.data)
        assert study.rows and study.speedups
        assert all(isinstance(row, (PieceRow, RunRow)) for row in study.rows)
        assert all(isinstance(row, (SpeedupRow, RunRow)) for row in study.speedups)
        assert json.dumps(study.fields()) == json.dumps(record.data)


def test_each_writer_writes_its_own_fields_in_order():
    """``bench compile`` and notebook 08 write different fields (BENCH_FIELDS, NOTEBOOK_FIELDS):
    a study they build writes those, None included, and reads back to the same."""
    rows = [_row("act", "eager", 8, [1.0, 1.0])]
    speedups = [_speedup("act", 8, 1.5, 1.2, 1.8)]
    bench = CompileStudy(device="cpu", modes=["eager"], threads=1, rows=rows, speedups=speedups)
    assert tuple(bench.fields()) == compile_rows.BENCH_FIELDS and bench.fields()["tag"] is None
    grid = compiling.forward_grid_rows([8], [4], ["cpu"], repeats=1, seconds_per_repeat=1e-4)
    notebook = CompileStudy(device="cpu", threads=1, rows=rows, speedups=speedups, grid=grid,
                            cache_warm=False, breakdown=None)  # fmt: skip
    assert tuple(notebook.fields()) == compile_rows.NOTEBOOK_FIELDS
    assert notebook.fields()["grid"][0]["width"] == 8 and notebook.fields()["breakdown"] is None
    for study in (bench, notebook):
        assert CompileStudy.from_fields(study.fields()).fields() == study.fields()


def test_a_pay_back_under_one_unit_is_not_said_as_zero():
    """08's full run: "the first iteration 0.6 s longer, paid back after 0 iterations"."""
    row = _speedup("update", 256, 2.0, 1.9, 2.1)
    quick = replace(row, break_even_calls=0.4, repeats=5)
    assert "paid back after less than one call" in report.speedup_sentence(quick)
