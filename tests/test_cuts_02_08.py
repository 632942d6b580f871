"""Notebooks 02 and 08, cut to their reading budget: each sentence that the cuts rewrote
says what its numbers say, on both sides of its edge (the review of 2026-12-07, items 6,
8, 9, 16-19, 32 and 36, and 08's exercise asking before it tells)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st
from IPython.display import Markdown

from hetero_tutorial.core import machine_load, results
from hetero_tutorial.notebook import compile_race, compile_report, forward_grid, profile_report
from hetero_tutorial.profiling import reading
from hetero_tutorial.studies.compile_rows import Breakdown, GridRow, RunRow, SpeedupRow, StepTrace

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


@pytest.fixture(autouse=True)
def quiet_machine(monkeypatch):
    """No study of an earlier test stands for these hand-made figures: judged as quiet."""
    monkeypatch.setattr(machine_load, "_readings", [])


def _notebook(prefix: str) -> nbformat.NotebookNode:
    (path,) = NOTEBOOKS.glob(f"{prefix}_*.ipynb")
    return nbformat.read(path, as_version=4)


# --- 02: what a Python sampler files where (items 5 and 6) -------------------------------


def test_the_kinds_say_that_dispatch_is_counted_with_the_calling_line():
    stacks = Counter(
        {
            ("iteration (ppo/trainer.py:1)", "paired_product (speed/cpu_forms.py:84)"): 6,
            ("iteration (ppo/trainer.py:1)", "Module._wrapped_call_impl (modules/module.py:1)"): 1,
            ("iteration (ppo/trainer.py:1)", "CartPoleEnv.step (classic_control/cartpole.py:1)"): 3,
        }
    )
    said = reading.kinds_sentence(stacks)
    assert "arithmetic with its C++ dispatch" in said and "60%" in said  # cpu_forms: arithmetic
    assert "PyTorch's Python around each call" in said
    assert "fixed cost per call" not in said  # a sampler cannot see it apart (item 6)


def test_the_patterns_table_says_which_tools_see_each_operation_without_its_regexes():
    shown = profile_report.patterns_table().data
    assert "| `.item()`, `.tolist()` | wait | py-spy, cProfile, torch.profiler |" in shown
    assert "| CUDA's copy functions | copy | torch.profiler, py-spy --native |" in shown
    assert "\\(" not in shown and "<details>" not in shown
    assert profile_report.fold(Markdown("x y"), "z").data.startswith("<details><summary>z")


# --- 02: the reveal prints only once the exercise is solved (item 18) --------------------


def _profile(rollout: int = 30, total: int = 100, seconds: dict | None = None, rate: int = 1000):
    shares = SimpleNamespace(
        samples={"rollout": rollout, "update": total - rollout},
        total=total,
        phase_share=lambda: {"rollout": rollout / total, "update": 1 - rollout / total},
    )
    return SimpleNamespace(shares=shares, phase_seconds=seconds or {}, rate=rate)


def test_the_reveal_waits_for_the_solved_exercise():
    unsolved = profile_report.reveal_lines(None, 0.2, _profile())
    assert unsolved == ["Solve the exercise above, then run this cell to compare with your guess."]
    solved = profile_report.reveal_lines(0.15, 0.2, _profile())
    assert "Stepping the environments: 15% of training (your function)" in solved[0]
    assert "the whole rollout: 30%" in solved[0]
    assert "15.0%" in solved[1] and "your guess of 20.0%" in solved[1]
    assert "No guess written" in profile_report.reveal_lines(0.15, None, _profile())[1]


# --- 02: the paused recording, worded from its numbers (item 19) -------------------------


@pytest.mark.parametrize("paused_seconds", [0.5, 2.0])
def test_the_paused_run_is_timed_without_a_story_about_the_machine(paused_seconds):
    free = _profile(30, 1000, {"rollout": 3.0, "update": 7.0})
    paused = _profile(
        30, 1000, {"rollout": 3.0 * paused_seconds, "update": 7.0 * paused_seconds}, rate=250
    )
    said = profile_report.sampling_sentence(free, paused)
    took = f"the paused run, sampled 250 times a second against 1,000, took {paused_seconds:.2f}x"
    assert took in said
    # a paused run that took no longer breaks the expectation that pausing slows it, and says so
    assert ("not longer" in said) is (paused_seconds <= 1)
    assert "one run each, so what the pauses cost has no verdict" in said
    assert "machine's own speed changed" not in said and "slowed most" not in said
    # both samplers fall as far short of their timers: the comparison straddles its noise
    assert "within the noise" in said and "no clear effect; this run cannot tell" in said
    assert "agreement did not hold" in said and "no sign" not in said


def test_a_sampler_that_drops_rollout_stacks_says_so():
    free = _profile(150, 1000, {"rollout": 3.0, "update": 7.0})  # 15% against its timer's 30%
    paused = _profile(300, 1000, {"rollout": 6.0, "update": 14.0})  # 30% against 30%
    said = profile_report.sampling_sentence(free, paused)
    assert "-15.0 points without pauses, +0.0 with them" in said
    assert "falls short by 15.0 points more, past the noise" in said
    assert "drops rollout stacks here" in said


# --- 02: four tools, the lean of each worded from the numbers ----------------------------


def _tools(cprofile_timer: float, torch_share: float, second_timer: float = 0.25) -> list[dict]:
    rows = [
        ("py-spy", "py-spy's child", 0.26),
        ("phase timer", "py-spy's child", 0.24),
        ("phase timer", "a second child", second_timer),  # 1 point from the first by default
        ("phase timer", "under cProfile", cprofile_timer),
        ("torch.profiler", "in this kernel", torch_share),
    ]
    return [{"tool": t, "run": r, "rollout": share, "update": 1 - share} for t, r, share in rows]


def test_the_four_tools_sentence_follows_which_way_each_tool_leans():
    more = profile_report.four_tools_sentence(_tools(0.37, 0.28))
    assert "weighs most on the rollout, the phase of many small calls" in more
    assert "no verdict." in more.split("torch.profiler")[1]  # a few iterations: not judged
    assert "from 24% (phase timer, py-spy's child) to 37% (phase timer, under cProfile)" in more
    less = profile_report.four_tools_sentence(_tools(0.20, 0.22))
    assert "weighed more on the update here" in less and "many small calls" not in less
    # within the 1 point two unprofiled runs' timers differ by, no lean is explained
    same = profile_report.four_tools_sentence(_tools(0.245, 0.235))
    assert "within the 1.0 points between the two py-spy runs' timers" in same
    assert "costs the" not in same and "cost per call" not in same
    # two timers that print the same share: the noise is below what prints, never 0.0 points
    equal = profile_report.four_tools_sentence(_tools(0.37, 0.28, second_timer=0.24))
    assert "past the 0.1 points the two py-spy runs' timers print to" in equal
    assert "0.0 points" not in equal
    # no second timer run: no noise measured, so no verdict and no explanation
    alone = [row for row in _tools(0.37, 0.28) if row["run"] != "a second child"]
    said = profile_report.four_tools_sentence(alone)
    assert "no verdict" in said and "costs the" not in said and "cost per call" not in said
    # without a sampling interval py-spy's gap to its timer is not judged
    assert "no sampling interval came with it: no verdict" in said


# --- 02: the notebook's own wording (items 16, 19, 32) -----------------------------------


def test_02_explains_its_flame_graph_and_sunburst_and_claims_no_pause_cost():
    notebook = _notebook("02")
    prose = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert "`CompiledPiece.__call__` box under the update is no compiler at work" in prose
    assert "The picture has no names" in prose  # the sunburst's arcs carry no labels
    assert "20x as long" not in code  # the paused rate's comment claims no cost of its own
    titles = [c.source.splitlines()[0] for c in notebook.cells if c.cell_type == "markdown"]
    exercise = titles.index("## Exercise: [inclusive time](../docs/glossary.md#inclusive-time)")
    sections = [i for i, t in enumerate(titles) if t.startswith("## 9. cProfile")]
    assert exercise < sections[0]  # asked before cProfile's cumulative times could tell it


# --- 08: the graph break, worded from its counts (item 17) -------------------------------


def test_one_graph_with_one_break_says_which_part_held_the_operations():
    one = compile_report.explain_sentence(StepTrace(graphs=1, graph_breaks=1, reasons=[]))
    assert "of the 2 parts the break cut it into, 1 held tensor operations" in one
    two = compile_report.explain_sentence(StepTrace(graphs=2, graph_breaks=1, reasons=[]))
    assert two == "One step traced into 2 graphs with 1 graph break."


# --- 08: the cache and the first calls' seconds (item 36) --------------------------------


def test_a_warm_cache_is_not_said_to_make_the_first_call_free():
    warm = compile_report.cache_line("build/cache", True)
    assert "each piece's first call still traces" in warm and "warm" not in warm
    assert "empty: every piece compiles from scratch" in compile_report.cache_line("c", False)


def _speedup(piece, size, speedup, low, high, seconds=1.0):
    return SpeedupRow(piece=piece, device="cpu", size=size, mode="compile", speedup=speedup,
                      low=low, high=high, compile_seconds=seconds,
                      break_even_calls=10.0)  # fmt: skip


def _run(piece, mode, size, **figures):
    """A compiled run's row, made by hand: ``figures`` over placeholders."""
    base = dict(piece=piece, unit="iteration", device="cpu", size=size, mode=mode, seconds=1.0,
                env_steps_per_s=1.0, first_iteration_s=1.0, compile_seconds=0.0, speedup=1.0,
                low=None, high=None, break_even_iterations=None, graph_skips=0)  # fmt: skip
    return RunRow(**base | figures)


def test_the_summary_adds_the_compiling_seconds_and_repeats_no_line():
    speedups = [_speedup("act", 8, 1.6, 0.7, 2.5, 2.0), _speedup("update", 256, 1.3, 1.2, 1.4)]
    run = _run("ppo-all-device", "compile", 8, compile_seconds=1.5)
    lines = compile_report.summary_lines(speedups, [run], None, warm=True)
    assert lines[0].startswith("- Of the pieces timed alone (not the whole runs), the largest gain")
    assert "ranked by the low end of each range: one PPO" in lines[0]
    assert "1.30x (1.20-1.40x, faster)" in lines[0]  # ranked by the range, as the exercise
    assert lines[-1] == (
        "- Compiling's first calls: 4.5 s in all over 3 pieces and runs, with kernels in the "
        "cache from an earlier run."
    )
    assert not any("env steps/s" in line for line in lines)  # section 3 printed those
    assert "from an empty cache" in compile_report.summary_lines(speedups, [], None, False)[-1]
    fresh = compile_report.summary_lines(speedups, [run], None, True, written=120)[-1]
    assert fresh.endswith("earlier run, yet 120 new cache files written here: shapes it lacked "
                          "were compiled afresh.")  # fmt: skip
    kept = compile_report.summary_lines(speedups, [run], None, True, written=0)[-1]
    assert kept.endswith("from an earlier run: every kernel came from it.")


def test_section_lines_print_the_busy_line_once():
    speedups = [_speedup("act", 8, 1.6, 1.2, 2.5), _speedup("update", 256, 1.3, 1.2, 1.4)]
    lines = compile_report.speedup_lines(speedups)
    assert [line.split(",")[0] for line in lines] == ["- act", "- minibatch step"]


def test_08_asks_for_the_largest_gain_before_printing_it():
    notebook = _notebook("08")
    exercise = next(i for i, c in enumerate(notebook.cells) if "## Exercise: the piece" in c.source)
    above = "\n".join(c.source for c in notebook.cells[:exercise] if c.cell_type == "code")
    assert "largest_gain_sentence" not in above and "summary_lines" not in above
    assert (
        "summary_lines(speedups, ppo + ddpg, FALLBACK, warm, written)" in notebook.cells[-1].source
    )


# --- 08: rejax's step, set against ours only on this kind of machine (item 9) ------------

_BREAKDOWN = Breakdown(size=256, step_s=400e-6, matmul_s=200e-6, profiled_s=500e-6,
                       matmul_calls=8, matmul_flops=12_000_000, peak_flops_per_s=80e9,
                       peak_size=512)  # fmt: skip


def _race(rejax_steps_per_s: float) -> results.Record:
    setting = {"num_steps": 32, "minibatch_size": 256, "update_epochs": 10}
    stats = {"1024 envs": {"rejax": {"steps_per_s": {"median": rejax_steps_per_s}}}}
    fields = {"setting": setting, "points": {"8": {}, "1024": {}}, "summary": {"stats": stats}}
    return results.Record("bench.device_ppo_peers", fields)


OTHER = {"cpu_model": "Another CPU", "cpu_logical_cores": 64, "cpu_identity": {"model": 1}}


@pytest.mark.parametrize("rejax_steps_per_s", [51_200.0, 102_400.0, 204_800.0])
def test_another_machines_rejax_step_is_not_set_against_ours(rejax_steps_per_s):
    record = _race(rejax_steps_per_s)
    other = compile_race.rejax_step_line(record, _BREAKDOWN, here=OTHER)
    assert "another machine: its step is not set against this machine's products" in other
    assert "closes that" not in other and "To match it" not in other and "fits" not in other
    here = record.provenance["fingerprint"]
    same = compile_race.rejax_step_line(record, _BREAKDOWN, here=here)
    assert "recorded on this kind of machine" in same
    expected = {
        51_200.0: "fits in the 300 us",
        102_400.0: "would have to fit in 50 us",
        204_800.0: "no overhead removed closes that",
    }[rejax_steps_per_s]
    assert expected in same


def test_an_estimate_from_another_machine_says_it_spans_two():
    stats = {
        "8 envs": {
            "ours": {"steps_per_s": {"median": 10_000.0}},
            "rejax": {"steps_per_s": {"median": 40_000.0}, "compile_s": {"median": 13.0}},
        }
    }
    record = results.Record("bench.device_ppo_peers", {"summary": {"stats": stats}})
    live = [_run("ppo-all-device", "compile", 8, speedup=1.5)]
    other = compile_race.rejax_lines(record, live, here=OTHER)[1]
    assert "an estimate from two measurements on two machines, not a race" in other
    same = compile_race.rejax_lines(record, live, here=record.provenance["fingerprint"])[1]
    assert "an estimate from two measurements, not a race" in same


# --- 08: the plain forward against the act, one forward's direction (item 8) -------------


def _grid(
    ratio_low: float, ratio_high: float, width: int = 64, batch: int = 16, repeats: int = 5
) -> list[GridRow]:
    """Eager and compiled forwards whose paired ratios span ``ratio_low``-``ratio_high``, their
    median midway: ``repeats`` of them, 3 (too few for a verdict) or 5."""
    ratios = [ratio_low, (ratio_low + ratio_high) / 2, ratio_high]
    if repeats == 5:
        ratios += [(3 * ratio_low + ratio_high) / 4, (ratio_low + 3 * ratio_high) / 4]
    eager, compiled = [1.0] * len(ratios), [1.0 / r for r in ratios]
    base = dict(piece="forward", device="cpu", size=batch, iqr_s=0.0, first_call_seconds=1.0,
                compile_seconds=0.0, width=width, batch_size=batch)  # fmt: skip
    return [GridRow(**base, mode=mode, seconds=sorted(samples)[len(samples) // 2],
                    samples=samples)
            for mode, samples in (("eager", eager), ("compile", compiled))]  # fmt: skip


ratio_pairs = st.tuples(
    st.floats(0.1, 10.0, allow_nan=False), st.floats(0.1, 10.0, allow_nan=False)
).map(sorted)


@given(ratio_pairs, st.sampled_from(["faster", "slower"]))
def test_the_plain_forward_takes_the_acts_side_or_the_finding_says_it_broke(pair, act_side):
    low, high = pair
    if high - low < 1e-6 or low <= 1.0 <= high:
        return  # straddling ranges: the next test
    act = (
        _speedup("act", 8, 1.5, 1.2, 1.8)
        if act_side == "faster"
        else _speedup("act", 8, 0.6, 0.5, 0.7)
    )
    said = str(forward_grid.forward_finding(_grid(low, high), [act], forms=True))
    same_side = (low > 1.0) == (act_side == "faster")
    if same_side:
        assert said.endswith(": held") and "did not hold" not in said
    else:
        assert "the expectation did not hold" in said
        assert "different code: the act is the paired actor-critic" in said
        assert "another batch (16, the act's 8)" in said
    # the same range from three repeats: too few for a verdict either way
    few = str(forward_grid.forward_finding(_grid(low, high, repeats=3), [act], forms=True))
    assert few.endswith("no verdict, 3 repeats, and a verdict needs 5")
    assert "held" not in few


@given(ratio_pairs, st.sampled_from([3, 5]))
def test_each_grid_cell_prints_its_range_and_the_verdict_the_range_gives(pair, repeats):
    low, high = pair
    (line,) = forward_grid.grid_table(_grid(low, high, repeats=repeats)).splitlines()[1:]
    assert f"{low:.2f}-{high:.2f}x" in line
    if repeats == 3:
        assert line.endswith("no verdict")
    elif low > 1.0:
        assert line.endswith("compiled faster")
    elif high < 1.0:
        assert line.endswith("compiled slower")
    else:
        assert line.endswith("no clear effect")


def test_a_straddling_forward_or_act_gives_no_verdict_of_direction():
    act = _speedup("act", 8, 1.5, 1.2, 1.8)
    said = str(forward_grid.forward_finding(_grid(0.8, 1.3), [act]))
    assert "no clear effect" in said
    few = str(forward_grid.forward_finding(_grid(0.8, 1.3, repeats=3), [act]))
    assert "(per repeat 0.80-1.30x)" in few and "no clear effect" not in few
    assert few.endswith("no verdict, 3 repeats, and a verdict needs 5")
    unclear = _speedup("act", 8, 1.1, 0.9, 1.3)
    assert "sets no side of 1 to compare" in forward_grid.forward_finding(
        _grid(0.5, 0.6), [unclear]
    )
    assert "to set side by side" in forward_grid.forward_finding([], [act])


def test_a_break_without_a_checkable_cause_says_none_explains_it():
    act = _speedup("act", 16, 1.5, 1.2, 1.8)
    said = str(forward_grid.forward_finding(_grid(0.5, 0.6), [act], forms=False))
    assert "the expectation did not hold; no cause this run can check explains it" in said
    # the same range from three repeats: where it fell and why, but no verdict
    few = str(forward_grid.forward_finding(_grid(0.5, 0.6, repeats=3), [act], forms=False))
    # no verdict to explain: the sentence lists no causes, and says none explains nothing
    assert "no cause this run can check" not in few and "did not hold" not in few
    assert few.endswith("no verdict, 3 repeats, and a verdict needs 5")


def test_a_busy_grid_is_not_judged_in_one_short_clause(monkeypatch):
    busy = machine_load.Busyness("grid", 4.0, off_reference=("a step 4x this CPU's record",))
    monkeypatch.setattr(forward_grid, "withheld", lambda *figures: busy)
    unclear = _speedup("act", 8, 1.1, 0.9, 1.3)
    said = forward_grid.forward_finding(_grid(0.5, 0.6), [unclear])
    assert said.endswith("x eager; not judged (measured on a busy machine).")


@given(ratio_pairs, ratio_pairs)
def test_the_grid_trend_follows_the_two_widths_ranges(narrow, wide):
    """08's grid lost at width 512 too (0.73x) and no line said what that meant: a fixed cost
    per call predicts the larger call fares better; the line says which way it went."""
    grid = _grid(*narrow, width=64) + _grid(*wide, width=512)
    (line,) = forward_grid.grid_trend_lines(grid)
    assert line.startswith("batch 16: width 64 ")
    if wide[0] > narrow[1]:
        assert "fared better, as a fixed cost per call predicts" in line
    elif wide[1] < narrow[0]:
        assert "fared worse, which a fixed cost per call cannot explain" in line
    else:
        assert "no clear trend with width" in line
    few = _grid(*narrow, width=64, repeats=3) + _grid(*wide, width=512, repeats=3)
    assert "too few repeats to tell a trend" in forward_grid.grid_trend_lines(few)[0]


def test_a_middle_width_that_breaks_the_order_is_said():
    """08's full grid: width 64 0.57x, 256 0.48x, 1024 1.17x: the ends fared better, the
    middle worse."""
    grid = _grid(0.55, 0.59, width=64) + _grid(0.46, 0.50, width=256)
    grid += _grid(1.15, 1.19, width=1024)
    (line,) = forward_grid.grid_trend_lines(grid)
    assert "width 64 0.57x, width 256 0.48x, width 1024 1.17x (not steadily)" in line
    assert "fared better" in line
