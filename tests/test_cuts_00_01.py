"""Notebooks 00 and 01 after the cuts: each sentence that sets a measurement beside an
expectation comes from a finding, and its words follow the numbers on either side."""

from types import SimpleNamespace

import matplotlib

matplotlib.use("agg")

import pytest
from IPython.display import Markdown

from hetero_tutorial.core import results
from hetero_tutorial.core.placement import placement
from hetero_tutorial.core.timing import Spread
from hetero_tutorial.notebook import baseline_report, neighbour_findings, step_drift, timing_report
from hetero_tutorial.notebook.figure_audit import problems
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.studies import crossover, crossover_grid
from hetero_tutorial.studies.neighbours import CASES, NeighbourRun


def _timing(median_us: float, iqr_us: float) -> dict[str, float]:
    return {"median_s": median_us * 1e-6, "iqr_s": iqr_us * 1e-6}


# --- 00: the error bar to quote (contradiction 13) ------------------------------------------


def test_the_honest_range_spans_both_timings_where_they_drifted_apart():
    spread = Spread.of_timings(_timing(106, 3.75), _timing(66.1, 10.3))
    assert spread.low == pytest.approx(60.95e-6) and spread.high == pytest.approx(107.875e-6)
    steady = Spread.of_timings(_timing(100, 4), _timing(101, 4))
    assert steady.high - steady.low == pytest.approx(5e-6)  # about one IQR wide
    assert Spread.of_timings(_timing(10, 40), _timing(12, 1)).low == 0.0


def test_the_drift_sentence_prints_the_range_to_quote_on_either_outcome():
    wide = step_drift.drift_sentence(_timing(106, 3.75), _timing(66.1, 10.3), 3.0, [])
    assert "wider than either timing's own spread" in wide
    assert "Quote against another run: 38 us to 173 us." in wide  # widened by the 1.6x drift
    assert "No earlier notebook 00 run (bench.crossover) on this kind of machine" in wide
    steady = step_drift.drift_sentence(_timing(100, 4), _timing(101, 4), 3.0)
    assert "stayed within the timings' own spread" in steady
    assert "Quote against another run: 97 us to 104 us." in steady


def test_an_earlier_run_is_read_against_the_range_to_quote():
    record = SimpleNamespace(
        hardware="AMD EPYC",
        provenance={"date": "2026-12-01T10:16:45+00:00"},
        data={"policy_step": {"cpu": {"median_s": 100e-6}}},
    )
    inside = step_drift.drift_sentence(_timing(99, 4), _timing(102, 4), 5.0, [record])
    assert "inside that error bar" in inside
    outside = step_drift.drift_sentence(_timing(60, 1), _timing(61, 1), 5.0, [record])
    assert "outside that error bar" in outside


@pytest.mark.parametrize(
    ("first", "second", "words"),
    [
        (_timing(300, 10), _timing(310, 10), "inside the article's 0.3 ms within a factor of 2"),
        (_timing(77, 1), _timing(99, 29), "below the article's 0.3 ms within a factor of 2"),
        (_timing(120, 10), _timing(200, 10), "no clear effect"),
        (_timing(900, 10), _timing(950, 10), "above the article's 0.3 ms"),
    ],
)
def test_c1s_cpu_half_is_a_finding_over_the_two_timings(first, second, words):
    said = str(step_drift.c1_cpu_finding(first, second))
    assert said.startswith("C1's CPU half, one step: ")
    assert "two timings' middle halves, widened by their drift" in said and words in said
    outcome = step_drift.c1_cpu_finding(first, second).outcome.value
    assert {"inside": "held", "below": "did not hold", "above": "did not hold"}.get(
        words.split()[0], "no clear effect"
    ) == outcome


# --- 00: the forward alone against the whole step (contradiction 15) -------------------------


def _grid(median_us: float, iqr_us: float, loops: int) -> list[dict]:
    return [
        {
            "device": "cpu",
            "width": 128,
            "batch_size": 1,
            "seconds_per_call": median_us * 1e-6,
            "iqr_s": iqr_us * 1e-6,
            "calls_per_repeat": loops,
        }
    ]


STEP = {"cpu": _timing(77.4, 1), "env_only": _timing(12.1, 1)}


def test_the_grids_forward_within_the_steps_policy_part_holds():
    said = str(step_drift.forward_against_step(_grid(33, 2, 60), STEP))
    assert said.startswith("The grid's forward alone (width 128, batch 1): 33 us")
    assert "inside the step's policy part" in said and said.endswith(": held")


def test_a_forward_dearer_than_the_steps_policy_part_breaks_and_names_the_causes_it_can_check():
    single = str(step_drift.forward_against_step(_grid(102, 5, 1), STEP))
    assert "above the step's policy part" in single and "by 56%" in single
    assert "the grid timed single calls, the step loops of 50 steps" in single
    assert "repeats disagree" not in single
    noisy = str(step_drift.forward_against_step(_grid(102, 60, 40), STEP))
    assert "the grid cell's own repeats disagree (IQR 59% of its median)" in noisy
    assert "single calls" not in noisy
    neither = str(step_drift.forward_against_step(_grid(102, 5, 40), STEP))
    assert "no cause this run can check explains it" in neither


def test_the_nearest_width_stands_in_and_a_grid_without_batch_1_says_so():
    grid = _grid(33, 2, 60)
    grid[0]["width"] = 64
    assert "(width 64, batch 1)" in str(step_drift.forward_against_step(grid, STEP))
    grid[0]["batch_size"] = 16
    assert "no batch of 1" in str(step_drift.forward_against_step(grid, STEP))


def test_the_reference_check_says_when_this_cpu_has_no_record(monkeypatch, tmp_path):
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path)
    said = timing_report.against_reference(grid=_grid(33, 2, 60))
    assert said.startswith("No notebook 00 record (bench.crossover) from this kind of machine")
    record = SimpleNamespace(provenance={"date": "2026-12-01T10:00:00+00:00"}, data={"grid": []})
    monkeypatch.setattr(timing_report, "earlier_steps", lambda: [record])
    said = timing_report.against_reference(grid=_grid(33, 2, 60))
    assert said.startswith("Held against the record of 2026-12-01 from this kind of machine")


def test_the_grid_times_a_fast_cell_in_loops_and_says_how_many_calls():
    rows = crossover.forward_grid([8], [1], ["cpu"], repeats=2, warmup=1)
    assert rows[0]["calls_per_repeat"] > 1


def test_the_batching_sentence_says_as_much_per_sample_once():
    grid = [
        {"device": "cpu", "width": w, "batch_size": b, "seconds_per_sample": s}
        for w in (8, 16)
        for b, s in ((1, 4e-6), (16, 1.05e-6), (256, 1e-6))
    ]
    said = crossover_grid.batching_sentence(grid)
    assert said.count("as much per sample") == 1 and "width 16: batch 16 (batch 1 costs 4x)" in said


def test_the_neighbour_table_has_one_row_per_way_the_loop_ran():
    runs = [
        NeighbourRun(case, r, 1000.0 - 100 * i, 0.01, 0.0, 0.5 * i, i < 2)
        for i, case in enumerate(CASES)
        for r in range(2)
    ]
    table = neighbour_findings.neighbour_table(runs).data
    assert table.count("\n| ") == 3  # three rows under the header
    assert "| alone | 1,000 | 0.01 |" in table and "| 0 of 2 |" in table
    spread = [NeighbourRun(CASES[0], r, speed, 0.01, 0.0, 0.0, True)
              for r, speed in enumerate((900.0, 1000.0, 1200.0))]  # fmt: skip
    assert "| alone | 1,000 (900-1,200) |" in neighbour_findings.neighbour_table(spread).data


@pytest.mark.parametrize(
    ("speeds", "words"),
    [
        (
            (0.5, 0.45, 0.5, 0.48, 0.5),
            "longer than alone in every round (speed under 0.91x). The guard judged 0 of 5",
        ),
        ((0.5, 1.0, 0.5, 0.5, 0.5), "in some rounds only: no clear effect. The guard judged 0 of"),
        ((0.5, 0.45), "no verdict: 2 rounds, and a verdict needs 5. The guard judged 0 of 2"),
    ],
)
def test_the_on_core_neighbour_says_the_guard_caught_it_and_a_straddle_is_no_clear_effect(
    speeds, words
):
    """00 printed 'slower than alone in every round' where the guard judged 0 of 2 rounds,
    below a cell saying the guard withholds such verdicts; and a verdict from 2 rounds."""
    n = len(speeds)
    runs = [NeighbourRun(CASES[0], r, 1000.0, 0.01, 0.0, 0.0, True) for r in range(n)]
    runs += [NeighbourRun(CASES[1], r, 1000.0, 0.01, 0.0, 1.0, True) for r in range(n)]
    runs += [NeighbourRun(CASES[2], r, 1000.0 * x, 1.0, 0.5, 0.5, False)
             for r, x in enumerate(speeds)]  # fmt: skip
    said = neighbour_findings.neighbour_findings(runs, None)
    assert words in said[1] and "The guard judged" not in said[0]


@pytest.mark.parametrize(
    ("speeds", "reading", "guess_line"),
    [
        ((1.0, 1.05, 0.95, 1.0, 1.02), "as fast", "it ran as fast: your guess held"),
        ((1.13, 1.2, 1.15, 1.18, 1.14), "shorter than alone in every round",
         "the loop ran faster: neither of the two"),
        ((0.8, 0.85, 0.82, 0.8, 0.84), "longer than alone in every round",
         "it ran slower: your guess did not hold"),
    ],
)  # fmt: skip
def test_a_neighbour_on_another_core_is_as_fast_only_within_ten_percent_both_ways(
    speeds, reading, guess_line
):
    """00 called 1.13-1.20x 'within 10% in every round: as fast'."""
    n = len(speeds)
    runs = [NeighbourRun(CASES[0], r, 1000.0, 0.01, 0.0, 0.0, True) for r in range(n)]
    runs += [NeighbourRun(CASES[1], r, 1000.0 * x, 0.01, 0.0, 1.0, True)
             for r, x in enumerate(speeds)]  # fmt: skip
    runs += [NeighbourRun(CASES[2], r, 500.0, 1.0, 0.5, 0.5, False) for r in range(n)]
    said = neighbour_findings.neighbour_findings(runs, "as fast")
    assert reading in said[0] and guess_line in said[-1]


# --- 01: one meaning of "solved" (contradiction 12) --------------------------------------------


def _run(evaluations, steps=100_000, horizon=None):
    config = PPOConfig.tuned("CartPole-v1", total_steps=steps, anneal_steps=horizon)
    return SimpleNamespace(evaluations=evaluations, env_steps=steps, config=config, episodes=[])


def test_solved_is_the_first_of_three_evaluations_in_a_row_at_475():
    evaluations = [(4096, 486.0), (8192, 151.0), (12288, 500.0), (16384, 480.0), (20480, 490.0)]
    assert baseline_report.solved_step(evaluations) == 12288
    assert baseline_report.solved_step(evaluations[:4]) is None


@pytest.mark.parametrize(
    ("evaluations", "words"),
    [
        ([(8192, 500.0), (16384, 480.0), (24576, 500.0)], "solved at 8,192 steps"),
        ([(8192, 500.0), (16384, 480.0), (24576, 500.0), (32768, 200.0)], "then fell back"),
        ([(4096, 485.8), (8192, 151.7), (12288, 500.0), (16384, 291.1)], "not solved"),
        ([(4096, 200.0)], "it never reached 475"),
    ],
)
def test_the_learning_sentence_uses_the_series_rule(evaluations, words):
    said = baseline_report.learning_sentence(_run(evaluations))
    assert words in said
    assert "solved and then forgot" not in said


def test_the_learning_plot_keeps_its_legend_off_the_data():
    run = _run([(0, 20.0), (4096, 485.8), (8192, 151.7)])
    run.episodes = [(step, 20.0 + step / 100) for step in range(0, 8192, 64)]
    fig = baseline_report.learning_plot(run, placement("all-cpu"))
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(fig.canvas.get_renderer())
    assert legend.y1 <= ax.get_window_extent().y0  # under the axes, not on a peak
    assert any(list(line.get_ydata()) == [475.0, 475.0] for line in ax.lines)
    assert problems(fig) == []


# --- 01: the settings beside each figure (contradiction 14, the config dump) --------------------


def test_the_config_line_names_the_settings_in_one_short_line():
    line = baseline_report.config_line(
        PPOConfig.tuned("CartPole-v1", total_steps=20_480, anneal_steps=100_000, hidden=64)
    )
    assert line.startswith("CartPole-v1: 8 envs x 32 steps per rollout")
    assert "decaying over 100,000 steps; this run trains 20,480." in line and len(line) < 200


def test_the_peer_line_names_cleanrls_settings_and_points_to_notebook_07(monkeypatch):
    ratios = {"round_ratios": [2.0, 2.2, 2.4]}
    summary = {"cleanrl": {"steps_per_s": {"ours_over": {"cleanrl": ratios}}}}
    settings = {"num_envs": 4, "num_steps": 128, "update_epochs": 4, "minibatch_size": 128}
    record = SimpleNamespace(
        hardware="a CPU",
        data={"summary": summary, "settings": {"cleanrl": settings | {"hidden": 64}}},
        provenance={"fingerprint": {"cpu": "a CPU"}},  # a CPU's name alone, no identity
    )
    monkeypatch.setattr(results, "load_references", lambda kind: [record])
    line = baseline_report.peer_line()
    assert (
        "64 units), 3 rounds on a CPU, a CPU's name only (its generation was not recorded): "
        in (line)
    )
    assert "CleanRL at its ppo.py defaults (4 envs x 128 steps, 4 epochs of minibatch 128" in line
    assert "ours 2.20x its speed per step (rounds 2.00-2.40x)" in line
    assert "Notebook 07 races CleanRL at RL Zoo's tuned settings" in line


def test_a_folded_listing_is_one_details_block_and_counts_as_read():
    from hetero_tutorial.app.words import _words

    folded = baseline_report.folded(Markdown("```python\nx = 1\n```"), "one line")
    assert folded.data.startswith("<details><summary>one line</summary>")
    assert folded.data.rstrip().endswith("</details>")
    assert _words(folded.data) == 7  # one line ```python x = 1 ```


def test_the_honest_range_reads_recorded_quartiles_where_a_timing_has_them():
    first = _timing(50, 100) | {"q1_s": 45e-6, "q3_s": 145e-6}
    spread = Spread.of_timings(first, _timing(51, 2))
    assert spread.low == pytest.approx(45e-6) and spread.high == pytest.approx(145e-6)
    timing = crossover.policy_step_costs(["cpu"], repeats=3, steps_per_repeat=2)["cpu"]
    assert timing["q1_s"] <= timing["median_s"] <= timing["q3_s"]


def test_the_summary_line_gives_c1s_outcome_without_repeating_its_sentence():
    timers = {"cpu": {"first_call_s": 2e-3, "naive_s": 1e-3, "honest_s": 1e-3}}
    grid = [
        {"device": "cpu", "width": 8, "batch_size": b, "seconds_per_sample": s}
        for b, s in ((1, 4e-6), (16, 1e-6))
    ]
    step = {"cpu": _timing(300, 10), "env_only": _timing(10, 1)}
    lines = timing_report.findings(timers, grid, step, 11, {"cpu": _timing(310, 10)})
    assert lines[1] == "Batching still paid at batch 16, the largest measured, at width 8."
    wider = grid + [
        {"device": "cpu", "width": 64, "batch_size": b, "seconds_per_sample": s}
        for b, s in ((1, 4e-6), (16, 4e-6))
    ]
    said = timing_report.findings(timers, wider, step, 11, {"cpu": _timing(310, 10)})[1]
    assert said == (
        "Batching stops paying at batch 1 (width 64); at width 8 it still paid at batch 16, "
        "the largest measured."
    )
    assert lines[2].endswith("11 PyTorch operators; C1's CPU half: held.")
    lines = timing_report.findings(timers, grid, step, 11, {"cpu": _timing(60, 1)})
    assert lines[2].endswith("C1's CPU half: no clear effect.")
    # broken, it says which way (00's quick run: 51 us against 0.3 ms, cheaper)
    fast = {"cpu": _timing(50, 1), "env_only": _timing(10, 1)}
    lines = timing_report.findings(timers, grid, fast, 11, {"cpu": _timing(52, 1)})
    assert lines[2].endswith(
        "C1's CPU half: did not hold, cheaper than the article's 0.3 ms by more than its "
        "factor of 2."
    )


def test_the_drift_plot_draws_each_timings_middle_half_and_passes_the_audit():
    first = _timing(50, 4) | {"q1_s": 48e-6, "q3_s": 52e-6}
    second = _timing(51, 120) | {"q1_s": 45e-6, "q3_s": 165e-6}
    fig = step_drift.drift_plot({"C1's step": (first, second), "update": (first, first)})
    assert problems(fig) == []
    low, high = fig.axes[0].get_ylim()
    assert low > 0 and high >= 165  # the shaded error bar, quartiles as recorded


def test_the_update_bar_is_not_red_as_a_copy_is():
    run = SimpleNamespace(phase_seconds={"rollout": 1.0, "advantages": 0.1, "update": 2.0})
    fig = baseline_report.phase_plot(run, placement("all-cpu"))
    bars = {c.get_label(): c[0].get_facecolor() for c in fig.axes[0].containers}
    assert bars["update"] != matplotlib.colors.to_rgba("tab:red")
    assert problems(fig) == []


def test_a_record_of_this_cpus_name_without_its_identity_is_named_and_not_counted(monkeypatch):
    """00 said 'no record from this kind of machine' beside a folder of this CPU's name."""
    here = step_drift.fingerprint()
    older = {k: v for k, v in here.items() if k != "cpu_identity"}
    record = SimpleNamespace(provenance={"fingerprint": older, "date": "2026-12-01"}, data={})
    monkeypatch.setattr(results, "load_references", lambda kind: [record])
    assert step_drift.earlier_steps() == []
    said = timing_report.against_reference(grid=[])
    assert (
        said.startswith("No notebook 00 record (bench.crossover) from this kind")
        and "not count" in said
    )
    monkeypatch.setattr(results, "load_references", lambda kind: [])
    assert "not count" not in timing_report.against_reference(grid=[])


def test_the_forward_against_a_step_timed_twice_names_the_drift_where_one_timing_holds_it():
    """00's quick run: the forward 51.8 us, the step 77.2 us then 48.3 us (1.60x apart): it
    fits under the first timing's policy part, not the second's, and the drift is the cause."""
    first = {"cpu": _timing(77.2, 1), "env_only": _timing(14.1, 1)}
    then = {"cpu": _timing(48.3, 1), "env_only": _timing(14.1, 1)}
    said = str(step_drift.forward_against_step(_grid(51.8, 2, 60), first, then))
    # above the cheaper timing's part, not "both": the sentence then says it fits the other
    assert "above the step's policy part (that forward plus its glue) in its cheaper timing" in said
    assert "both timings" not in said
    assert "the step drifted 1.60x between its timings, and the forward fits under the" in said
    assert "(63.1 us: 77.2 us less the environment's 14.1 us)" in said
    steady = {"cpu": _timing(76.0, 1), "env_only": _timing(14.1, 1)}
    held = str(step_drift.forward_against_step(_grid(51.8, 2, 60), first, steady))
    assert held.endswith(": held") and "drifted" not in held
    beyond = str(step_drift.forward_against_step(_grid(70.0, 2, 60), first, then))
    assert "drifted" not in beyond and "no cause this run can check explains it" in beyond


def _trick(trick: str, with_it: float, without: float, ratio: float) -> dict:
    return {"trick": trick, "with_steps_per_s": with_it, "without_steps_per_s": without,
            "ratio": ratio, "ratio_low": 1.03, "ratio_high": 1.88, "rounds": 5}  # fmt: skip


def test_a_tricks_table_whose_medians_divide_to_another_ratio_says_which_the_verdict_reads():
    """01's quick run: all three tricks at 11,819 against 6,688 steps/s (1.77x divided), the
    paired rounds' median 1.23x: the table says the columns' medians come from different
    rounds; where they agree it says nothing."""
    rows = [
        _trick("paired_networks", 11_819, 10_718, 1.09),
        _trick("all three", 11_819, 6_688, 1.23),
    ]
    text = baseline_report.tricks_table(rows).data
    assert "all three 1.77x against 1.23x" in text and "paired_networks 1." not in text
    assert "the verdicts read the paired ratio" in text
    agreeing = baseline_report.tricks_table(rows[:1]).data
    assert "the verdicts read" not in agreeing and agreeing.count("\n|") == 2
