"""The package functions that print a notebook's conclusions, draw its pictures and show its
progress: each says what the numbers say, so it cannot contradict them on another machine."""

from collections import Counter

import matplotlib
import pytest

matplotlib.use("Agg")

from hetero_tutorial.core import results
from hetero_tutorial.ledger import advice
from hetero_tutorial.ledger.claims import group_by_kind
from hetero_tutorial.notebook import diagrams, profile_report
from hetero_tutorial.notebook.code import source
from hetero_tutorial.notebook.progress import Progress, widgets_render
from hetero_tutorial.profiling import reading
from hetero_tutorial.rl.ddpg.learner import DDPGLearner
from hetero_tutorial.rl.ppo.advantages import gae
from hetero_tutorial.studies import crossover, crossover_findings
from hetero_tutorial.studies.ddpg_buffers import time_ratio


def test_progress_prints_one_line_where_widgets_do_not_render(capsys, monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert not widgets_render()  # pytest is no Jupyter front end
    with Progress(3, "iterations") as bar:
        for _ in range(3):
            bar.update()
    out = capsys.readouterr().out
    assert out.startswith("iterations: 3 of 3 done in ") and out.count("\n") == 1
    monkeypatch.setenv("HETERO_TUTORIAL_PROGRESS", "widget")
    assert widgets_render()


def test_plain_progress_prints_a_line_with_the_time_left_while_it_runs(capsys, monkeypatch):
    from hetero_tutorial.notebook import progress

    clock = iter([0.0, 5.0, 20.0, 21.0, 40.0, 41.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    monkeypatch.setenv("HETERO_TUTORIAL_PROGRESS", "plain")
    with Progress(4, "iterations") as bar:
        for _ in range(4):
            bar.update()
    lines = capsys.readouterr().out.splitlines()
    # at 20 s, 2 of 4 done: as long again to go; at 5 s nothing (under the interval)
    assert lines[0] == "iterations: 2 of 4 after 20 s, about 20 s left"
    assert lines[-1] == "iterations: 4 of 4 done in 41.0 s" and len(lines) == 2
    assert (
        progress.plain_line("x", 1, 3, 95.0) == "x: 1 of 3 after 1 min 35 s, about 3 min 10 s left"
    )
    from tests.test_notebook_quality import PROGRESS_FALLBACK

    assert not PROGRESS_FALLBACK.search("\n".join(lines))


def test_source_shows_our_code_without_its_docstring():
    shown = source(gae).data
    assert shown.startswith("`hetero_tutorial/rl/ppo/advantages.py`, lines ")
    assert "def gae(" in shown and "Generalised advantage estimates" not in shown
    acting = source(DDPGLearner.act).data  # decorated: the function's own code, not the wrapper
    assert "rl/ddpg/learner.py" in acting and "def act(" in acting and "_contextlib" not in acting


def _commented_signature(x: int) -> int:  # fmt: skip
    """A docstring that source() leaves out."""
    return x


def test_source_finds_the_body_after_a_signature_ending_in_a_comment():
    shown = source(_commented_signature).data
    assert "return x" in shown and "A docstring" not in shown


def test_the_pipeline_diagram_marks_each_presets_copies():
    figure = diagrams.pipeline(["all-accelerator", "hybrid", "all-cpu"])
    red = [
        p
        for p in figure.axes[0].patches
        if p.get_edgecolor()[:3] == matplotlib.colors.to_rgb(diagrams.COPY_COLOUR)
    ]
    # all-accelerator: the environments' hop; hybrid: the transfer and the weight sync
    assert len(red) == 3
    texts = " ".join(t.get_text() for t in figure.axes[0].texts)
    assert "weight sync" in texts and "on accelerator" in texts


def test_error_bars_of_shares_stop_at_zero_and_one():
    bars = profile_report.share_errors([0.01, 0.5, 0.99], [0.05, 0.05, 0.05])
    assert bars[0].tolist() == pytest.approx([0.01, 0.05, 0.05])
    assert bars[1].tolist() == pytest.approx([0.05, 0.05, 0.01])


def test_a_profile_is_read_from_the_training_loop_up():
    loop = "PPOTrainer.iteration (/r/hetero_tutorial/rl/ppo.py:426)"
    launcher = ("_run_module_as_main (<frozen runpy>:198)", "main (/r/target.py:83)")
    samples = Counter(
        {
            (*launcher, loop, "PairedMLP.forward (/r/hetero_tutorial/rl/nets.py:90)"): 3,
            (
                *launcher,
                loop,
                "CartPoleEnv.step (/v/gymnasium/envs/classic_control/cartpole.py:9)",
            ): 1,
        }
    )
    trimmed, marked = reading.from_the_loop(samples, {next(iter(samples))})
    assert all(stack[0].endswith(loop) and ":" in stack[0] for stack in trimmed)
    assert len(marked) == 1 and sum(trimmed.values()) == 4
    kinds = reading.work_kinds(samples)
    assert kinds["arithmetic"]["share"] == 0.75 and kinds["environment"]["share"] == 0.25
    assert "arithmetic" in reading.kinds_sentence(samples)


def test_sentences_follow_the_measured_numbers():
    timers = {"cpu": {"first_call_s": 3.0, "naive_s": 1.0, "honest_s": 1.0}}
    assert "a one-off cost that warming up keeps out" in crossover_findings.timers_sentence(timers)
    timers["cuda:0"] = {"first_call_s": 1.0, "naive_s": 0.1, "honest_s": 1.0}
    assert "it timed queueing, not work" in crossover_findings.timers_sentence(timers)
    # on a CPU nothing queues: a naive loop faster than the warmed median is a changed machine
    timers = {"cpu": {"first_call_s": 0.5, "naive_s": 0.5, "honest_s": 1.0}}
    said = crossover_findings.timers_sentence(timers)
    assert "queueing" not in said and "the machine's speed changed" in said
    assert "faster than warmed-up calls" in said
    grid = [
        {"device": "cpu", "width": 8, "batch_size": b, "seconds_per_sample": s}
        for b, s in ((1, 4e-6), (16, 1.05e-6), (256, 1e-6))
    ]
    assert "width 8: batch 16 (batch 1 costs 4x" in crossover.batching_sentence(grid)
    assert "no crossover" in crossover.crossover_sentence(grid)
    costs = {"cpu": {"median_s": 3e-5, "iqr_s": 1e-6}, "env_only": {"median_s": 1e-5}}
    said = crossover_findings.policy_step_sentence(costs, 10)
    assert "the policy's part, 20 us (67%), runs 10 PyTorch operators" in said
    assert "about 2 us each" in said and "article" not in said  # C1's CPU half: c1_cpu_finding


def _ddpg(buffer, seconds, speeds):
    runs = [
        {"seconds_per_episode": s, "env_steps_per_s": v, "config": {"buffer": buffer, "seed": i}}
        for i, (s, v) in enumerate(zip(seconds, speeds, strict=True))
    ]
    return {
        "buffer": buffer,
        "seconds_per_episode": sorted(seconds)[len(seconds) // 2],
        "runs": runs,
        "env_steps_per_s": sorted(speeds)[len(speeds) // 2],
    }


def test_ddpgs_time_ratio_falls_back_to_speed_when_no_episode_was_timed():
    transition, tensor = [1.2, 1.3, 1.25, 1.22, 1.28], [1.0, 1.1, 1.05, 1.02, 1.08]
    spread, per = time_ratio(
        _ddpg("transition", transition, [1] * 5), _ddpg("tensor", tensor, [1] * 5)
    )
    assert per == "per episode" and spread.side(1.0) is True
    # the first three of the same seeds: too few to name a side
    spread, per = time_ratio(
        _ddpg("transition", transition[:3], [1] * 3), _ddpg("tensor", tensor[:3], [1] * 3)
    )
    assert per == "per episode" and spread.side(1.0) is None
    assert "a verdict needs 5: no verdict" in spread.noise()
    nan = float("nan")
    spread, per = time_ratio(
        _ddpg("transition", [nan] * 5, [100, 110, 105, 102, 108]),
        _ddpg("tensor", [nan] * 5, [120, 130, 125, 122, 128]),
    )
    assert per.startswith("per step") and spread.value == pytest.approx(125 / 105)
    assert spread.side(1.0) is True


def _record(kind, data):
    machine = {"cpu_model": "Test CPU", "cpu_logical_cores": 2, "accelerator": None}
    provenance = {"fingerprint": machine, "date": "2026-12-01T00:00:00", "command": "t", "quick": 0}
    return results.Record(kind, data, provenance)


def test_advice_is_generated_from_the_records_and_names_what_is_missing():
    grid = [
        {"device": "cpu", "width": w, "batch_size": b, "seconds_per_sample": s / b}
        for w in (32, 256)
        for b, s in ((1, 1e-5), (64, 2e-5), (256, 6e-5))
    ]
    crossing = _record(
        "bench.crossover",
        {
            "grid": grid,
            "policy_step": {"cpu": {"median_s": 5e-5}, "env_only": {"median_s": 1e-5}},
            "value_update": {"cpu": {"median_s": 1e-3}},
        },
    )
    items = {item["question"]: item for item in advice.advice(group_by_kind([crossing]))}
    assert items["where each phase should run"]["advice"].startswith("everything on the CPU")
    assert items["which batch sizes (per forward call)"]["advice"].endswith(
        "batch at least 256 at every width measured"
    )
    assert items["how many CPU threads"]["advice"] == "not measured yet: run notebooks 03 and 05"
    grid += [{"device": "cpu", "width": 1024, "batch_size": b, "seconds_per_sample": s}
             for b, s in ((1, 1e-4), (64, 2e-6), (256, 1.9e-6))]  # fmt: skip
    two = advice.batch_sizes(group_by_kind([crossing]))["advice"]
    assert two == "on the CPU, batch at least 256 at widths 32 and 256, 64 at width 1024"
    text = advice.markdown(list(items.values()), "Test CPU")
    assert text.startswith("**What to do on Test CPU**") and "- **Which replay buffer**" in text
