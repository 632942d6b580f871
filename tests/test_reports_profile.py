"""Notebook 02's inclusive-share exercise (checkable even where py-spy cannot record), and
section 11's sentences on both sides of each edge: a timer inside or outside a sampler's
interval, two samplers' gaps past or within their noise, a tool that moved the split or not."""

from types import SimpleNamespace

import pytest

from hetero_tutorial.core import machine_load
from hetero_tutorial.notebook import profile_report
from hetero_tutorial.notebook.exercises import check
from hetero_tutorial.notebook.solutions import solution
from hetero_tutorial.profiling.against_timer import Sampled


def test_without_a_profile_the_exercise_is_checked_on_the_hand_made_one(capsys):
    cases = profile_report.inclusive_cases(None)
    assert [function for _, function in cases] == ["f", "g", "main"]
    assert [solution("inclusive_share")(*case) for case in cases] == [0.5, 0.75, 1.0]
    assert check("inclusive_share", solution("inclusive_share"), cases) == 0.5
    assert "Correct on all 3 cases" in capsys.readouterr().out


# --- section 11: each sampler against its own timer, and each tool against the timer -----


@pytest.fixture(autouse=True)
def quiet_machine(monkeypatch):
    """No study of an earlier test stands for these hand-made figures: judged as quiet."""
    monkeypatch.setattr(machine_load, "_readings", [])


def _spy(rollout: int, total: int, timer: float, seconds: float = 10.0) -> SimpleNamespace:
    """A py-spy profile: ``rollout`` of ``total`` training samples in the rollout, and its
    run's phase timer giving the rollout ``timer`` of ``seconds``."""
    samples = {"rollout": rollout, "update": total - rollout}
    shares = SimpleNamespace(
        samples=samples, total=total, phase_share=lambda: {k: v / total for k, v in samples.items()}
    )
    timed = {"rollout": timer * seconds, "update": (1 - timer) * seconds}
    return SimpleNamespace(shares=shares, phase_seconds=timed, rate=1000)


def _tools(free, paused=None, cprofile_timer: float = 0.27, torch_share: float = 0.27):
    cprof = SimpleNamespace(
        phase_shares=lambda: {"rollout": 0.38, "update": 0.60},
        phase_seconds={"rollout": cprofile_timer, "update": 1 - cprofile_timer},
    )
    ranges = [
        {"name": "rollout", "cpu_s": torch_share},
        {"name": "update", "cpu_s": 1 - torch_share},
    ]
    return profile_report.four_tools_rows(free, cprof, ranges, paused)


def test_a_timer_inside_the_samplers_interval_agrees_with_it():
    free, paused = _spy(270, 1000, 0.267), _spy(280, 1000, 0.28)  # 27% sampled, 26.7% timed
    said = profile_report.sampling_sentence(free, paused)
    assert "without pauses the timer lies inside it (agreement held)" in said
    assert "did not hold" not in said
    text = profile_report.four_tools_sentence(_tools(free, paused))
    assert "py-spy gives it 27%, the phase timer 27%: the timer's 27% lies inside" in text
    assert "larger than the sampling noise" not in text


@pytest.mark.parametrize(
    ("rollout", "side", "edge"),
    [(78, "below", "6.9 points past it"), (190, "above", "8.8 points past it")],
)
def test_a_timer_outside_the_samplers_interval_did_not_hold_by_how_much(rollout, side, edge):
    free, paused = _spy(rollout, 475, 0.267), _spy(38, 136, 0.28)  # a wide paused interval
    said = profile_report.sampling_sentence(free, paused)
    assert f"without pauses the timer lies {edge} (agreement did not hold)" in said
    assert f"points {side} its timer's 26.7%" in Sampled.of(free).timer_words()  # 02's table
    # with pauses the timer lies inside the (wide) interval
    assert "with them inside it (agreement held)" in said
    text = profile_report.four_tools_sentence(_tools(free, paused))
    assert "outside the sampler's" in text and "a gap larger than the sampling noise" in text
    # below its timer, dropped stacks could explain it and the paused run did not decide;
    # above it, dropped stacks (which lower a share) cannot
    undecided = "the one cause this run can check, dropped stacks, stays undecided"
    assert (undecided in text) is (side == "below")
    assert ("no cause this run can check explains it" in text) is (side == "above")
    if side == "above":  # a sampler above its timer: dropped stacks cannot be why
        assert "would lower py-spy's share, not raise it" in text
        assert "points higher against its timer, past the noise" in said


def test_two_samplers_gaps_that_straddle_their_noise_show_no_clear_effect():
    # the review's run: 16.4% (13.0%-19.8%) against 26.7%; 27.9% (20.3%-35.4%) against 28.0%
    free, paused = _spy(78, 475, 0.267), _spy(38, 136, 0.28)
    said = profile_report.sampling_sentence(free, paused)
    assert "within the noise" in said and "no clear effect" in said
    assert "this run cannot tell whether sampling without pauses drops" in said
    assert "no sign" not in said and "drops rollout stacks here" not in said
    # the table's sentence does not blame a gap past the noise on the noise
    text = profile_report.four_tools_sentence(_tools(free, paused))
    assert "py-spy gives it 16%, the phase timer 27%, outside the sampler's 13%-20%" in text
    assert (
        "a gap larger than the sampling noise; the one cause this run can check, dropped " in text
    )
    assert "stays undecided (the paused recording above: no clear effect)" in text
    assert "with their noise" not in text


def test_a_sampler_that_drops_stacks_names_the_cause_in_the_table_sentence():
    free, paused = _spy(150, 1000, 0.30), _spy(300, 1000, 0.30)  # 15% and 30% against 30%
    assert "drops rollout stacks here" in profile_report.sampling_sentence(free, paused)
    text = profile_report.four_tools_sentence(_tools(free, paused))
    assert "the cause this run can check: the paused recording above says sampling" in text
    assert "no cause this run can check" not in text
    alone = profile_report.four_tools_sentence(_tools(free))  # no paused recording
    assert "no cause this run can check explains it: no paused recording here" in alone


@pytest.mark.parametrize("torch_share", [0.27, 0.35, 0.20])
def test_torch_profilers_few_iterations_are_not_judged_against_whole_runs_noise(torch_share):
    """02's run: torch.profiler read 1 iteration, the timers' noise came from two 16-iteration
    runs; a gap of 1.0 point was called "past that noise". No verdict, whichever the gap."""
    free, paused = _spy(270, 1000, 0.267), _spy(280, 1000, 0.28)  # timers 1.3 points apart
    text = profile_report.four_tools_sentence(_tools(free, paused, torch_share=torch_share))
    said = text.split("torch.profiler, from its few profiled iterations, gives")[1]
    assert said.endswith("not over so few iterations, so no verdict.")
    assert "past" not in said and "agree" not in said and "moved it" not in said


def test_without_a_second_timer_a_tools_move_has_no_verdict():
    text = profile_report.four_tools_sentence(_tools(_spy(270, 1000, 0.267), torch_share=0.40))
    assert "torch.profiler, from its few profiled iterations, gives 40% against" in text
    assert "costs the" not in text and "weighs most" not in text
