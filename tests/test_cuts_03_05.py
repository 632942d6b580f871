"""Notebooks 03 and 05: thread verdicts that say whether their repeats can decide, the
allocator's estimate set beside training as a finding, and the words that replaced fixed
strings.

Each test feeds figures on both sides of what decides the printed words (how many paired
iterations, which side of 1 or of the estimate) and asserts the words.
"""

from __future__ import annotations

import statistics
from collections import namedtuple
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hetero_tutorial.allocator import criterion
from hetero_tutorial.core.findings import Outcome
from hetero_tutorial.notebook import allocator_report, curriculum_findings, hybrid_report
from hetero_tutorial.studies import threads
from hetero_tutorial.studies.threads import (
    FASTER,
    MIN_PAIRS,
    NO_VERDICT,
    SLOWER,
    UNCLEAR,
    chance_all_one_side,
    rule_parts,
    thread_effects,
)

EVERY = ["fixed-rule", "hybrid", "all-cpu", "all-accelerator", "allocator"]
CPU_ALL = {"rollout": "cpu", "storage": "cpu", "update": "cpu"}


def _sweep(one: list[float], many: list[float], width: int = 512) -> list[dict]:
    """Sweep rows of all-cpu at 1 and 2 threads with the given seconds per iteration (every
    phase the same share, so each role's ratios are the iterations')."""
    return [
        {"width": width, "placement": "all-cpu", "stands_for": ["all-cpu"], "threads": t,
         "iteration_seconds": list(s), "seconds_per_iteration": sorted(s)[len(s) // 2],
         "phase_seconds": {"rollout": [x / 2 for x in s], "update": [x / 2 for x in s]}}
        for t, s in ((1, one), (2, many))
    ]  # fmt: skip


# --- 03: a thread verdict needs MIN_PAIRS paired iterations --------------------------------


@settings(max_examples=40, deadline=None)
@given(
    pairs=st.integers(1, 9),
    gain=st.floats(1.05, 3.0),
    jitter=st.lists(st.floats(0.0, 0.02), min_size=9, max_size=9),
    faster=st.booleans(),
)
def test_a_one_sided_spread_is_a_verdict_only_from_enough_pairs(pairs, gain, jitter, faster):
    many = [1.0 + j for j in jitter[:pairs]]
    one = [m * (gain if faster else 1 / gain) for m in many]
    for effect in thread_effects(_sweep(one, many)):
        if pairs < MIN_PAIRS:
            assert effect["verdict"] == NO_VERDICT, effect
        else:
            assert effect["verdict"] == (FASTER if faster else SLOWER), effect
        assert effect["pairs"] == pairs


def test_the_odds_behind_the_minimum():
    assert chance_all_one_side(2) == 0.5 and chance_all_one_side(5) == 1 / 16
    assert chance_all_one_side(MIN_PAIRS) < 0.07 < chance_all_one_side(MIN_PAIRS - 1)


def test_the_rule_says_no_verdict_and_why_below_the_minimum():
    rows = _sweep([2.0, 2.1], [1.0, 1.0])  # all cores twice as fast, but two pairs only
    text, figures = rule_parts(thread_effects(rows), "update")
    assert text == (
        "The learner (update): no verdict at any width (2 paired iterations, and a verdict "
        "needs 5: noise alone puts all 2 on one side 50% of the time)"
    )
    assert "2 pairs" in figures
    table = hybrid_report.thread_table(thread_effects(rows)).data
    assert "| no verdict (2 pairs) |" in table
    enough = _sweep([2.0, 2.1, 1.9, 2.0, 2.05], [1.0] * 5)
    text, _ = rule_parts(thread_effects(enough), "update")
    assert text.startswith("The learner (update): both cores from width 512 (every width")


def test_the_rule_names_a_width_without_a_verdict_beside_one_with():
    rows = _sweep([2.0, 2.1, 1.9, 2.0, 2.05], [1.0] * 5, width=1024)
    short = _sweep([0.5, 0.5], [1.0, 1.0], width=64)
    for row in short:  # the narrow width timed fewer iterations
        rows.append(row)
    text, _ = rule_parts(thread_effects(rows), "update")
    assert text == (  # no "1 thread below" for a width that gave no verdict
        "The learner (update): both cores from width 1024. Both cores were faster at width "
        "1024; no verdict at width 64"
    )
    straddles = _sweep([1.1, 0.9, 1.05, 0.95, 1.0], [1.0] * 5, width=128)
    text, _ = rule_parts(thread_effects(straddles + short), "update")
    assert text.startswith(
        "The learner (update): either count (1 thread leaves the other core free). Both cores "
        "showed no clear effect"
    )
    assert text.endswith("; no verdict at width 64")
    assert UNCLEAR in {e["verdict"] for e in thread_effects(straddles)}


def test_the_rule_names_each_width_by_its_own_verdict():
    """03's quick run: one thread faster at 128, no clear effect at 512; the rule said
    "1 thread" for the learner, as if 512 had decided it too."""
    slower = _sweep([1.0] * 5, [1.1, 1.12, 1.15, 1.13, 1.1], width=128)
    level = _sweep([1.1, 0.9, 1.05, 0.95, 1.0], [1.0] * 5, width=512)
    text, _ = rule_parts(thread_effects(slower + level), "update")
    assert text.startswith(
        "The learner (update): 1 thread at width 128, either count at width 512. Both cores"
    )
    faster = _sweep([2.0, 2.1, 1.9, 2.0, 2.05], [1.0] * 5, width=1024)
    (line,) = hybrid_report.thread_rule_lines(thread_effects(slower + level + faster))[1:2]
    assert line == (
        "The learner (update): both cores from width 1024, 1 thread at width 128, either count "
        "at width 512."
    )


def test_the_sweep_note_says_when_its_pairs_are_too_few():
    few = _sweep([1.0, 1.0], [1.0, 1.0])
    assert hybrid_report.sweep_note(few).endswith(
        "2 paired iterations each: too few for a thread verdict (2 paired iterations, and a "
        "verdict needs 5: noise alone puts all 2 on one side 50% of the time)."
    )
    enough = _sweep([1.0] * 5, [1.0] * 5)
    assert hybrid_report.sweep_note(enough).endswith("5 paired iterations each.")


def test_the_rule_lines_leave_the_figures_to_the_table():
    lines = hybrid_report.thread_rule_lines(thread_effects(_sweep([2.0] * 5, [1.0] * 5)))
    assert len(lines) == 3 and not any("over all cores' by width" in line for line in lines)


def test_the_thread_plot_labels_ratios_plainly_and_only_the_widths_measured():
    rows = _sweep([1.3, 1.25, 1.2, 1.3, 1.28], [1.0] * 5, 128)
    rows += _sweep([1.0, 1.1, 0.9, 1.0, 1.05], [1.0] * 5, 1024)
    figure = hybrid_report.thread_effects(thread_effects(rows))
    (ax,) = figure.axes
    figure.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["128", "1024"]
    labels = [t.get_text() for t in ax.get_yticklabels() + ax.get_yminorticklabels()]
    assert all("^" not in label and "10" not in label for label in labels), labels
    assert "1x" in labels


def test_copies_lines_set_counted_beside_moved():
    run = SimpleNamespace(copies_per_env_step=0.0)
    counted = {
        "all-accelerator": {"counted_on": "meta", "copies_per_env_step": 0.5195,
                            "copies_per_iteration": 133, "steps_counted": 256},
        "hybrid": {"counted_on": "cuda:0", "copies_per_env_step": 0.0156,
                   "copies_per_iteration": 4, "steps_counted": 256},
    }  # fmt: skip
    lines = hybrid_report.copies_lines({"all-accelerator": run, "hybrid": run}, counted)
    assert "hybrid: 4 copies per iteration of 256 environment steps" in lines[1]
    assert lines[-1] == "Counted on cuda:0, meta: the copies each plan's code makes."


def test_one_configuration_gives_no_ratio_in_words():
    text = hybrid_report.runs_sentence({"all-accelerator": object()}, None)
    assert text == (
        "One configuration stood for both plans: no ratio to take on this machine (C6 needs an "
        "accelerator)."
    )


# --- 05: the thread check, the estimate, the criterion, the curriculum ---------------------


def _row(plans, seconds, threads_, network="mlp-256", iterations=None):
    iterations = iterations or [seconds] * 5
    return {"network": network, "plan": plans[0] if plans else "x", "plans": list(plans),
            "label": f"all-cpu, {threads_} thread(s)", "threads": threads_,
            "seconds_per_iteration": seconds, "iteration_seconds": list(iterations),
            "total_seconds": sum(iterations),
            "decision_seconds": 0.5 if "allocator" in plans else None, **CPU_ALL}  # fmt: skip


@pytest.mark.parametrize(
    ("pairs", "chosen", "other", "starts"),
    [
        (2, 1.2, 1.0, "no verdict: 2 paired iterations, a verdict needs 5"),
        (4, 1.0, 1.2, "no verdict: 4 paired iterations"),
        (5, 1.2, 1.0, "wrong: 2 threads were faster, past the noise"),
        (5, 1.0, 1.2, "right: faster than 2 threads, past the noise"),
        (
            5,
            [1.0, 1.0, 1.0, 1.3, 1.0],
            [1.1] * 5,
            "no clear effect against 2 threads: per iteration",
        ),
    ],
)
def test_the_thread_check_decides_only_from_enough_pairs(pairs, chosen, other, starts):
    """Past the noise means every paired iteration on one side: the last case chose the
    faster median, but one pair went the other way, so it is no "right"."""
    chosen, other = ([x] * pairs if isinstance(x, float) else x for x in (chosen, other))
    rows = [
        _row(EVERY, statistics.median(chosen), 1, iterations=chosen),
        _row([], statistics.median(other), 2, iterations=other),
    ]
    (row,) = criterion.criterion(rows)
    assert row["threads_verdict"].startswith(starts)


def test_the_thread_choices_line_groups_networks_by_outcome():
    verdicts = [
        {"network": "mlp-64", "threads_chosen": 1, "threads_verdict": "right: faster than 2 "
         "thread(s), past the noise"},
        {"network": "mlp-256", "threads_chosen": 2, "threads_verdict": "wrong: 1 thread "
         "were faster, past the noise"},
        {"network": "mlp-1024", "threads_chosen": 2, "threads_verdict": "as good as 1 thread "
         "within the noise"},
        {"network": "cnn-512", "threads_chosen": 2, "threads_verdict": "no verdict: 2 paired "
         "iteration(s), a verdict needs 5"},
    ]  # fmt: skip
    assert allocator_report.thread_choice_line(verdicts) == (
        "Its thread choice: the right count past the noise at mlp-64 (1); the wrong count past "
        "the noise at "
        "mlp-256 (2); no clear effect against another count at mlp-1024 (2); no verdict at "
        "cnn-512 (2)."
    )


def _decision(network, estimate, other_estimate):
    chosen = SimpleNamespace(total=estimate, threads=1, label="all-cpu, 1 thread")
    other = SimpleNamespace(total=other_estimate, threads=2, label="all-cpu, 2 threads")
    return SimpleNamespace(fields=lambda: {"network": network}, chosen=chosen,
                           candidates=(chosen, other))  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(
    ratio=st.floats(0.3, 3.0).filter(lambda r: abs(r - 1) > 0.06),
    other=st.floats(0.3, 3.0).filter(lambda r: abs(r - 1) > 0.01),
)
def test_training_against_the_estimate_is_a_finding(ratio, other):
    estimate = 0.01
    seconds = [estimate * ratio * f for f in (0.98, 0.99, 1.0, 1.01, 1.02)]
    rows = [
        _row(EVERY, estimate * ratio, 1, iterations=seconds),
        _row([], estimate * other, 2),
    ]
    finding = allocator_report.estimate_finding(_decision("mlp-256", estimate, estimate), rows[0],
                                                rows)  # fmt: skip
    assert finding.outcome is (Outcome.HELD if ratio > 1 else Outcome.NOT_HELD)
    text = str(finding)
    if ratio < 1:
        assert "below the estimate (at least 1.00x)" in text
        assert "the expectation did not hold" in text
        cause = "the estimate runs high at mlp-256, as the thread check's 2 threads ran below"
        assert (cause in text) is (other < 1)
        assert ("no cause this run can check explains it" in text) is (other >= 1)
    else:
        assert text.endswith("inside the estimate (at least 1.00x): held")


def test_an_estimate_finding_straddling_or_from_one_iteration_says_so():
    estimate = 0.01
    wide = [_row(EVERY, estimate, 1, iterations=[0.008, 0.01, 0.012, 0.009, 0.011])]
    (line,) = allocator_report.estimate_lines([_decision("mlp-256", estimate, 1.0)], wide)
    assert line.endswith("no clear effect, its range reaches both sides of 1.00x")
    few = [_row(EVERY, estimate, 1, iterations=[0.008, 0.01, 0.012])]  # the same range, 3 times
    (line,) = allocator_report.estimate_lines([_decision("mlp-256", estimate, 1.0)], few)
    assert "(per iteration 0.80-1.20x)" in line
    assert line.endswith("no verdict, 3 repeats, and a verdict needs 5")
    one = [_row(EVERY, 0.005, 1, iterations=[0.005])]
    (line,) = allocator_report.estimate_lines([_decision("mlp-256", estimate, 1.0)], one)
    assert "no verdict, one figure measures no spread" in line


def _verdict(network, configurations, **more):
    base = {"network": network, "configurations": configurations, "best_fixed": "all-cpu",
            "slowdown": 0.0, "slowdown_low": 0.0, "slowdown_high": 0.0,
            "within_tolerance": True, "decision_seconds": 0.5, "saved_vs_fixed_rule": 0.0,
            "threads_chosen": 1, "threads_seconds": {"1": 0.01, "2": 0.02},
            "threads_verdict": "right: faster than 2 threads, past the noise"}  # fmt: skip
    return base | more


def test_the_criterion_says_once_when_there_was_nothing_to_compare():
    collapsed = [_verdict("mlp-64", 1), _verdict("cnn-512", 1)]
    assert allocator_report.criterion_sentences(collapsed, "synthetic") == [
        allocator_report.NOTHING_TO_COMPARE
    ]
    table = allocator_report.criterion_table(collapsed).data
    assert "| mlp-64 | 1 | 1: 10 ms, 2: 20 ms | right: faster than 2 threads" in table
    assert "within 5%" not in table
    split = [
        _verdict("mlp-64", 1),
        _verdict(
            "cnn-512",
            3,
            slowdown=0.1,
            slowdown_low=0.08,
            slowdown_high=0.12,
            saved_vs_fixed_rule=0.2,
        ),
    ]
    lines = allocator_report.criterion_sentences(split, "synthetic")
    assert lines[0].startswith("mlp-64: the five plans were one configuration here")
    assert lines[1].startswith("cnn-512: the allocator's configuration ran +10.0%")
    assert lines[2].startswith("Measured here (synthetic frames): the allocator saved +20.0%")
    assert "within 5%" in allocator_report.criterion_table(split).data


def _summary(allocator_sums, best_sums, measuring=0.5, same=False):
    """A curriculum of one stage: the allocator's configuration against one fixed contender."""
    label = "all-cpu, 1 thread" if same else "hybrid, 1 thread"
    step = {"stage": "mlp-64", "decision_seconds": measuring, "held": False,
            "seconds": {p: sum(best_sums) for p in criterion.FIXED_PLANS}
            | {"allocator": sum(allocator_sums)},
            "rows": {p: label for p in criterion.FIXED_PLANS}, "by_threads": {}}  # fmt: skip
    totals = {p: sum(best_sums) for p in criterion.FIXED_PLANS}
    totals["allocator"] = sum(allocator_sums) + measuring
    return {"stages": ["mlp-64"], "timeline": [step], "totals": totals, "threads": {},
            "iteration_sums": {p: list(best_sums) for p in criterion.FIXED_PLANS}
            | {"allocator": list(allocator_sums)}}  # fmt: skip


def test_the_curriculum_line_says_whether_the_measuring_repays():
    same = [0.1] * 5
    line = curriculum_findings.curriculum_line(_summary(same, same, same=True))
    assert line.endswith("its choices ran that same configuration, so the measuring never repays.")
    assert "against the plans fixed-rule" in line and "one configuration here" in line
    assert "lost 500 ms" in line
    faster = curriculum_findings.curriculum_line(_summary([0.09] * 5, [0.1, 0.1, 0.1, 0.1, 0.1]))
    assert "past the noise: the measuring repays after about 50 iterations." in faster
    slower = curriculum_findings.curriculum_line(_summary([0.11] * 5, [0.1] * 5))
    assert slower.endswith("so the measuring never repays.") and "ran slower (" in slower
    unclear = curriculum_findings.curriculum_line(_summary([0.09, 0.11, 0.1, 0.1, 0.1], [0.1] * 5))
    assert "ran no faster past the noise" in unclear


def test_the_decision_counts_a_rollout_call_per_vector_step():
    from hetero_tutorial.allocator.decision import _phase_reason

    cell = namedtuple("Cell", "where")("cpu (1 thread)")  # a dictionary key, as a Cell is
    cost = SimpleNamespace(
        cell=cell, seconds_per_call=4e-4,
        calls_per_iteration=32, seconds_per_iteration=32 * 4e-4,
    )  # fmt: skip
    chosen = SimpleNamespace(cost=lambda phase: cost, total=0.02, label="all-cpu, 1 thread")
    text = _phase_reason("rollout", chosen, [chosen], set(), envs=4)
    assert text.startswith("on cpu (1 thread): 400 us per vector step (4 environments), x32")
    assert "environment step" not in text


def test_threads_module_keeps_the_busy_guard():
    busy = threads.thread_effects  # the table's word for a busy study is not "no verdict"
    assert busy is thread_effects and threads.NOT_JUDGED != NO_VERDICT


# --- one thread answer per width range (for notebook 10's advice) -------------------------


def _effect(width, verdict):
    return {"width": width, "role": "iteration", "verdict": verdict, "threads": 2,
            "few_threads": 1}  # fmt: skip


def _check(width, verdict, chosen=1, best=1, pairs=5):
    return {"network": f"mlp-{width}", "threads_verdict": verdict, "threads_chosen": chosen,
            "threads_best": best, "threads_pairs": pairs}  # fmt: skip


RIGHT = "right: faster than 2 threads, past the noise"
TIE = "as good as 2 threads within the noise"


def test_one_answer_merges_agreeing_widths_into_ranges():
    effects = [_effect(128, UNCLEAR), _effect(512, FASTER), _effect(1024, FASTER)]
    checks = [_check(64, RIGHT, chosen=1), _check(256, TIE), _check(1024, RIGHT, chosen=2)]
    ranges = threads.one_answer(effects, checks)
    assert [(r["widths"], r["answer"], r["disagree"]) for r in ranges] == [
        ([64], "1 thread", False),
        ([128, 256], threads.EITHER_COUNT, False),
        ([512, 1024], "2 threads", False),
    ]
    text = threads.one_answer_sentence(ranges)
    assert text.startswith(
        "width 64: 1 thread (05: 1 thread at 64); width 128-256: either count, no clear "
        "effect (03: within the noise at 128; 05: within the noise at 256); width 512-1024: "
        "2 threads (03: 2 threads at 512 and 1024; 05: 2 threads at 1024)"
    )
    assert "disagree" not in text


def test_one_answer_names_a_disagreement_at_one_width_and_a_flip_between_widths():
    same_width = threads.one_answer([_effect(256, FASTER)], [_check(256, RIGHT, chosen=1)])
    assert same_width[0]["disagree"] and same_width[0]["answer"] is None
    text = threads.one_answer_sentence(same_width)
    assert text.startswith("width 256: the notebooks disagree (03: 2 threads at 256; 05: 1")
    assert text.endswith("A disagreement remains at width 256: no answer there until a rerun "
                         "of both agrees")  # fmt: skip
    flip = threads.one_answer(
        [_effect(128, FASTER), _effect(512, FASTER)], [_check(256, RIGHT, chosen=1)]
    )
    assert [r["disagree"] for r in flip] == [False, True, False]
    agree = threads.one_answer(
        [_effect(128, FASTER), _effect(512, FASTER)], [_check(256, RIGHT, chosen=2)]
    )
    assert len(agree) == 1 and not agree[0]["disagree"]
    # a count flanked by "either count" on both sides: nothing opposes it
    between = threads.one_answer([_effect(128, SLOWER)], [_check(64, TIE), _check(256, TIE)])
    assert [r["answer"] for r in between] == [threads.EITHER_COUNT, "1 thread",
                                              threads.EITHER_COUNT]  # fmt: skip
    assert "disagree" not in threads.one_answer_sentence(between)


def test_one_answer_reads_too_few_pairs_and_busy_studies_as_no_verdict():
    ranges = threads.one_answer(
        [_effect(128, NO_VERDICT), _effect(512, threads.NOT_JUDGED)],
        [_check(256, RIGHT, chosen=2, pairs=2)],
    )
    assert len(ranges) == 1 and ranges[0]["answer"] is None
    assert threads.one_answer_sentence(ranges) == (
        "width 128-512: no verdict (03: no verdict at 128, not judged (busy machine) at 512; "
        "05: no verdict at 256)"
    )


def test_one_answer_keeps_not_judged_apart_from_no_verdict():
    busy = threads.one_answer(
        [_effect(128, threads.NOT_JUDGED)], [_check(256, threads.NOT_JUDGED, pairs=5)]
    )
    assert threads.one_answer_sentence(busy) == (
        "width 128-256: not judged (busy machine) (03: not judged (busy machine) at 128; 05: "
        "not judged (busy machine) at 256)"
    )


def test_findings_name_a_busy_study_once_and_keep_the_counts(monkeypatch):
    run = SimpleNamespace(median_iteration_seconds=0.4, env_steps_per_s=5000.0)
    counted = {"all-accelerator": {"copies_per_iteration": 133},
               "hybrid": {"copies_per_iteration": 4}}  # fmt: skip
    effects = thread_effects(_sweep([2.0] * 5, [1.0] * 5))
    args = ({"all-accelerator": run}, counted, effects, [])
    quiet = hybrid_report.hybrid_findings(*args)
    assert quiet[0] == "One configuration (all-accelerator): 400 ms per iteration, 5,000 steps/s."
    assert quiet[1] == "Copies per iteration, counted: all-accelerator 133, hybrid 4."
    # section 4's two rules, a clause each: not its lines again, word for word
    assert quiet[2] == (
        "Threads (section 4): the actor: both cores from width 512; the learner: both cores "
        "from width 512."
    )
    sweep = SimpleNamespace(study="the width sweep", busy=True)
    monkeypatch.setattr(
        hybrid_report, "readings_of", lambda *f: [sweep] if any(x is effects for x in f) else []
    )
    busy = hybrid_report.hybrid_findings(*args)
    assert busy[0] == "not judged (busy machine): the width sweep; each reading is under its study."
    assert busy[1].startswith("One configuration") and busy[2].startswith("Copies per iteration")
    assert len(busy) == 3  # no thread rule from the busy sweep


def test_a_run_that_stood_for_every_plan_says_so_in_a_word():
    rows = [{"network": "mlp-64", "plans": ["fixed-rule", "hybrid", "allocator"],
             "label": "all-cpu, 1 thread", "seconds_per_iteration": 0.01, "iqr_s": 0.001},
            {"network": "mlp-64", "plans": [], "label": "all-cpu, 2 threads",
             "seconds_per_iteration": 0.012, "iqr_s": 0.001}]  # fmt: skip
    shown = allocator_report.rows_table(rows, folded=False).data
    assert "| mlp-64 | every plan | all-cpu, 1 thread |" in shown
    assert "(the thread check)" in shown
    split = [dict(rows[0], plans=["fixed-rule"]), dict(rows[0], plans=["hybrid", "allocator"])]
    assert "every plan" not in allocator_report.rows_table(split, folded=False).data


def test_a_thread_table_whose_medians_divide_to_another_ratio_says_which_the_verdict_reads():
    """03's quick run: the actor at width 128, 37.5 ms on 1 thread and 32.6 ms on both
    (1.15x divided) beside a paired ratio of 1.00x; the table says why they differ."""
    effect = {"width": 128, "role": "rollout", "one_thread_s": 0.0375, "all_cores_s": 0.0326,
              "ratio": 1.00, "low": 0.99, "high": 1.26, "verdict": "no clear effect",
              "pairs": 5, "threads": 2}  # fmt: skip
    text = hybrid_report.thread_table([effect]).data
    assert "(rollout at width 128 1.15x against 1.00x): each median comes from its own" in text
    agreeing = hybrid_report.thread_table([effect | {"ratio": 1.14}]).data
    assert "the verdicts read" not in agreeing
