"""Notebooks 04 and 06 as cut to their reading budget: each sentence that the run could
contradict is worded from the numbers, on both sides of its edge, and nothing is shown twice
or promised where it will not print."""

import statistics

import matplotlib

matplotlib.use("Agg")

from test_reports_buffers import _summary

from hetero_tutorial.notebook import buffer_race, ddpg_findings, overlap_figures, overlap_report
from hetero_tutorial.studies import overlap, overlap_findings
from hetero_tutorial.studies.buffer_rows import SamplingRow
from hetero_tutorial.studies.ddpg_buffers import DDPGRun, DDPGSummary

# --- 04 -------------------------------------------------------------------------------------


def _run(rate: float, ends: list[int], total: int = 800, starts: int = 300) -> DDPGRun:
    config = {"total_steps": total, "count_copies_steps": 100, "learning_starts": starts}
    return DDPGRun.from_dict({"env_steps_per_s": rate, "seconds_per_episode": 200 / rate * 1.3,
                              "episode_end_steps": ends, "config": config})  # fmt: skip


def _summaries(rates: dict[str, float], ends: list[int], total: int = 800) -> dict:
    return {
        d: _summary(buffer=d, env_steps_per_s=r, seconds_per_episode=200 / r * 1.3,
                    eval_return_mean=-1400.0, eval_return_by_seed=[-1400.0], seeds=[0],
                    runs=[_run(r, ends, total)])
        for d, r in rates.items()
    }  # fmt: skip


QUICK_ENDS = [200, 400, 600, 800]  # quick mode: only 400-600 runs wholly with timed updates
FULL_ENDS = list(range(200, 5_001, 200))


def test_timed_episodes_are_counted_as_the_trainer_counts_them():
    assert ddpg_findings.timed_episodes(_run(100.0, QUICK_ENDS)) == 1
    assert ddpg_findings.timed_episodes(_run(100.0, FULL_ENDS, total=5_000)) == 22


def test_seconds_per_episode_is_left_out_where_too_few_episodes_were_timed():
    """Review item 3: a median of one episode ranked the buffers against their steps/s."""
    rates = {"transition": 138.2, "trajectory": 139.0, "tensor": 140.2}
    quick = ddpg_findings.ddpg_table(_summaries(rates, QUICK_ENDS)).data
    assert "s / episode |" not in quick
    assert "No s / episode: a run timed 1 whole episode with updates, too few for a median" in quick
    full = ddpg_findings.ddpg_table(_summaries(rates, FULL_ENDS, total=5_000)).data
    assert "| s / episode |" in full and "too few" not in full


def test_the_bars_rank_the_buffers_as_the_table_does():
    rates = {"transition": 138.2, "trajectory": 139.0, "tensor": 140.2}
    seconds, what = ddpg_findings.episode_seconds(_summaries(rates, QUICK_ENDS))
    assert what == "seconds per 200 steps (one episode, from steps/s)"
    assert sorted(seconds, key=seconds.get) == sorted(rates, key=rates.get, reverse=True)
    seconds, what = ddpg_findings.episode_seconds(_summaries(rates, FULL_ENDS, total=5_000))
    assert what == "seconds per episode"


def _costs_rows() -> list[SamplingRow]:
    unread = {"bytes_per_transition": 0.0, "raw_bytes_per_transition": 34,
              "neighbour_fraction": 0.0, "copies_per_batch": 0}  # fmt: skip
    return [
        SamplingRow(design=d, capacity=1000, device="cpu", batch_size=256,
                    sample_transitions_per_s=rate, add_transitions_per_s=300_000.0, **unread)
        for d, rate in (("transition", 700_000.0), ("trajectory", 5_000_000.0),
                        ("tensor", 10_000_000.0))
    ]  # fmt: skip


def _ddpg(rates: dict[str, list[float]]) -> dict[str, DDPGSummary]:
    return {
        d: _summary(env_steps_per_s=statistics.median(r), runs=[_run(x, []) for x in r])
        for d, r in rates.items()
    }


def test_the_ddpg_speed_names_its_costs_once_and_words_each_side_of_the_bound():
    """The bound a buffer's costs set, 1 to about 1.05x here: above it, inside it, below it
    (the review's 0.83x), and with one seed no verdict on either side."""
    rows = _costs_rows()
    base = [138.0, 140.0, 139.0, 138.5, 139.5]
    above = {"transition": base, "trajectory": [155.0, 157.0, 156.0, 155.5, 156.5],
             "tensor": [140.0, 141.5, 140.75, 140.5, 141.0]}  # fmt: skip
    said = ddpg_findings.ddpg_speed_sentence(_ddpg(above), rows, 256, capacity=1000)
    assert said.startswith("The buffer's cost per environment step (one batch sampled, one ")
    assert said.count(" us") == 3  # each buffer's cost said once, not in every finding
    trajectory, tensor = said.split("Pattern B against pattern A")[1].split("Tensor against")
    assert "above the bound these costs set" in trajectory
    assert "the expectation did not hold" in trajectory
    assert "held" in tensor
    # the first two of the same seeds: above the bound and inside it, but no verdict either way
    two = ddpg_findings.ddpg_speed_sentence(
        _ddpg({d: r[:2] for d, r in above.items()}), rows, 256, capacity=1000)  # fmt: skip
    assert two.count("no verdict, 2 repeats, and a verdict needs 5") == 2
    assert "above the bound these costs set" in two and "held" not in two
    below = ddpg_findings.ddpg_speed_sentence(
        _ddpg({"transition": base, "trajectory": [139.0, 141.0, 140.0, 139.5, 140.5],
               "tensor": [115.0, 117.0, 116.0, 115.5, 116.5]}),
        rows, 256, capacity=1000)  # fmt: skip
    assert "below the bound these costs set" in below.split("Tensor against")[1]
    assert "the expectation did not hold" in below.split("Tensor against")[1]
    one = ddpg_findings.ddpg_speed_sentence(
        _ddpg({"transition": [138.0], "trajectory": [155.0], "tensor": [115.0]}),
        rows, 256, capacity=1000)  # fmt: skip
    assert one.count("no verdict, one figure measures no spread") == 2


def test_one_seed_prints_no_per_design_spread_lines(monkeypatch):
    monkeypatch.setenv("HETERO_TUTORIAL_QUICK", "1")
    one = {d: _summary(seeds=[0], eval_return_by_seed=[-1400.0], eval_return_spread=0.0,
                       runs=[_run(100.0, [], total=800)])
           for d in ("transition", "trajectory", "tensor")}  # fmt: skip
    lines = ddpg_findings.stability_lines(one)
    assert len(lines) == 1 and lines[0].startswith("quick mode: no learning verdict")


def test_the_buffer_race_says_who_is_ahead_and_points_at_its_table():
    shown = buffer_race.race().data
    assert shown.startswith("Recorded on ") and "TorchRL is ahead" in shown
    assert "|" not in shown and "<details>" not in shown
    assert "`data/reference/*/bench.buffer_peers.json`" in shown
    assert (
        "Ours is ahead in every round (the medians shown) on: tensor sampling 5.0x, tensor adding"
        in shown
    )


# --- 06 -------------------------------------------------------------------------------------


def _entry(lag=1, speed=(1.4, 1.3, 1.5), seeds=5, ideal=1.45, workers=1, load=None, **extra):
    return {
        "plan": "overlapped", "backend": "mp", "workers": workers, "max_policy_lag": lag,
        "seeds": seeds, "speedup_vs_sequential": speed[0], "speedup_low": speed[1],
        "speedup_high": speed[2], "ideal_speedup": ideal, "share_of_ideal": speed[0] / ideal,
        "eval_return_mean": -100.0, "other_load_cores": load, "dropped_rollouts": 0, **extra,
    }  # fmt: skip


SEQUENTIAL = {"plan": overlap.SEQUENTIAL, "backend": None, "workers": 0, "max_policy_lag": None,
              "seeds": 5, "speedup_vs_sequential": 1.0, "speedup_low": 1.0,
              "speedup_high": 1.0, "other_load_cores": None}  # fmt: skip


def test_the_others_load_column_shows_only_where_a_run_metered_it():
    """Review item 35: a column of dashes in every row."""
    quiet = overlap_report.summary_table([SEQUENTIAL, _entry()], ideal=False).data
    assert "others' load" not in quiet
    metered = overlap_report.summary_table([SEQUENTIAL, _entry(load=0.12)], ideal=False).data
    assert "others' load (cores)" in metered and "| 0.12 |" in metered


def test_the_speed_up_carries_its_range_over_seeds_only_with_two_or_more():
    table = overlap_report.summary_table([_entry()], ideal=False).data
    assert "| 1.40x (1.30-1.50x) |" in table
    assert "| 1.40x |" in overlap_report.summary_table([_entry(seeds=1)], ideal=False).data


def test_the_workers_plot_is_drawn_only_for_more_than_one_worker_count():
    """Review item 30: one x value and seven legend entries."""
    assert overlap_figures.speedup_by_workers([SEQUENTIAL, _entry(lag=0), _entry()]) is None
    two = overlap_figures.speedup_by_workers([_entry(), _entry(workers=2, ideal=1.8)])
    assert two is not None


def test_the_ideal_table_words_every_outcome_and_gives_causes_only_outside():
    above = _entry(ideal=1.36, speed=(1.47, 1.44, 1.50), sequential_phase_s=[0.0855, 0.0307],
                   own_phase_s=[0.070, 0.025], own_phase_ideal=1.66)  # fmt: skip
    inside = _entry(lag=0, ideal=1.5, speed=(1.02, 0.98, 1.04))  # the sequential run's pace
    straddles = _entry(backend="ray", ideal=1.45, speed=(1.4, 1.3, 1.6))
    one_seed = _entry(backend="ray", lag=0, ideal=1.0, speed=(1.02, 1.02, 1.02), seeds=1)
    text = overlap_report.ideal_table([SEQUENTIAL, above, inside, straddles, one_seed]).data
    row = "| mp, 1 worker, lag 1 | 1.47x (1.44-1.50x) | 1.36x | above by 8%: did not hold |"
    assert row in text
    assert "| mp, 1 worker, lag 0 | 1.02x (0.98-1.04x) | 1.50x | inside: held |" in text
    assert "| ray, 1 worker, lag 1 | 1.40x (1.30-1.60x) | 1.45x | inside: no clear effect |" in text
    assert "| ray, 1 worker, lag 0 | 1.02x | 1.00x | above by 2%: no verdict |" in text
    causes = text.split("\n\n", 1)[1]
    assert causes.startswith("- mp, 1 worker, lag 1, above its ideal by 8%: its own phases (70.0")
    assert "- ray, 1 worker, lag 0, above its ideal by 2%: no cause this run can check" in causes
    assert "mp, 1 worker, lag 0," not in causes and "ray, 1 worker, lag 1," not in causes
    assert "of ideal" not in text  # no share of a ceiling past 100%
    # the same configurations over three seeds: each is placed, and none is judged
    three = [dict(e, seeds=3) for e in (above, inside, straddles)]
    text = overlap_report.ideal_table([SEQUENTIAL, *three]).data
    assert "| mp, 1 worker, lag 1 | 1.47x (1.44-1.50x) | 1.36x | above by 8%: no verdict |" in text
    assert "| mp, 1 worker, lag 0 | 1.02x (0.98-1.04x) | 1.50x | inside: no verdict |" in text
    assert "| ray, 1 worker, lag 1 | 1.40x (1.30-1.60x) | 1.45x | inside: no verdict |" in text


def test_the_clipping_line_reads_one_comparison_and_the_clip_fraction():
    """Review item 23: which "last minibatch" is meant, and a clip fraction of 0 everywhere."""
    stats = {"updates": 10, "start_approx_kl": 0.0, "start_clipfrac": 0.0,
             "approx_kl": 1.8e-05, "clipfrac": 0.0}  # fmt: skip
    lagged = stats | {"start_approx_kl": 7.1e-05, "approx_kl": 1.9e-04}
    said = overlap_report.clipping_sentence({"0": stats, "1": lagged})
    assert (
        "Lag 1 starts 7.1e-05" in said and ": 3.9x the 1.8e-05 that lag 0's epochs travel" in said
    )
    assert "0.000 at every lag and minibatch: no ratio was clipped" in said
    # one run's clip fraction is no verdict on the expectation, and says so
    assert "Clipping can bite at once, but it did not in this run (1 seed: no verdict" in said
    rows = [{"eval_return_mean": -500.0, "seed": 0}, {"eval_return_mean": -480.0, "seed": 0}]
    stuck = overlap_report.clipping_sentence(
        {"0": stats, "1": lagged}, {"env_id": "Acrobot-v1", "rows": rows}
    )
    bar = "no run's greedy return rose above Acrobot-v1's learning bar of -300: with nothing"
    assert bar in stuck
    learned = {"env_id": "Acrobot-v1", "rows": [*rows, {"eval_return_mean": -150.0, "seed": 1}]}
    assert "a start this close" in overlap_report.clipping_sentence(
        {"0": stats, "1": lagged}, learned
    )
    clipped = overlap_report.clipping_sentence({"0": stats, "1": lagged | {"start_clipfrac": 0.04}})
    assert "no ratio" not in clipped and "lag 1 first 0.040" in clipped
    assert "did not" not in clipped  # it bit at once: the expectation held
    later = overlap_report.clipping_sentence({"0": stats, "1": lagged | {"clipfrac": 0.02}})
    assert "no lagged rollout was clipped at its first step" in later


def test_identical_learning_verdicts_read_as_one_line():
    def entry(backend, lag):
        return _entry(lag=lag, seeds=1) | {"backend": backend, "eval_returns_by_seed": [-500.0]}

    summary = [entry(b, lag) for b in ("mp", "ray") for lag in (0, 1)]
    lines = overlap_findings.learning_lines({"summary": summary, "env_id": "Acrobot-v1"})
    assert len(lines) == 1
    assert lines[0].startswith("mp, 1 worker, lag 1 against lag 0; ray, 1 worker, lag 1")
    assert lines[0].endswith("no verdict (1 seed per arm: a learning verdict needs 5 or more)")


def test_the_timeline_says_it_is_a_separate_run_beside_the_studys_r_and_u():
    """Review item 25: the Gantt's bars against R and U of the study's runs."""
    lanes = [{"kind": k, "start": s, "end": s + d, "process": k}
             for s, k, d in ((0.0, "rollout", 0.110), (0.11, "update", 0.050),
                             (0.16, "rollout", 0.100), (0.26, "update", 0.040))]  # fmt: skip
    rows = [{"plan": overlap.SEQUENTIAL, "rollout_seconds_per_iteration": 0.0855,
             "update_seconds_per_iteration": 0.0307}]  # fmt: skip
    line = overlap_report.timeline_line(lanes, {"rows": rows})
    assert "a separate run (2 iterations after a warm-up)" in line
    assert "rollouts 105.0 ms, updates 45.0 ms (medians)" in line
    assert "R = 85.5 ms and U = 30.7 ms" in line
    # one seed: one sequential run, not "runs"
    assert "means over the study's sequential run, its first iteration left out" in line
    two = overlap_report.timeline_line(lanes, {"rows": rows * 2})
    assert "means over the study's 2 sequential runs, each one's first iteration" in two


def test_the_collection_race_says_who_is_ahead_and_points_at_its_table():
    shown = overlap_report.collection_race().data
    assert shown.startswith("Recorded on ") and "|" not in shown and "<details>" not in shown
    assert "No peer is ahead" in shown or " is ahead at " in shown
    assert "The race's targets" in shown and "bench.collection_peers.json" in shown


def test_c7s_speed_is_a_finding_against_the_articles_slower():
    from hetero_tutorial.studies import ddpg_placements

    def rows(hybrid: list[float]) -> list[dict]:
        """All-CPU and hybrid steps/s, one per interleaved turn (as many turns as ``hybrid``)."""
        cpu = [100.0, 101.0, 99.0, 100.0, 100.0][: len(hybrid)]
        return [
            {"placement": "all-cpu", "stands_for": ["all-cpu"], "env_steps_per_s": 100.0,
             "chunk_steps_per_s": cpu},
            {"placement": "hybrid", "stands_for": ["hybrid", "all-accelerator"],
             "env_steps_per_s": statistics.median(hybrid), "chunk_steps_per_s": hybrid},
        ]  # fmt: skip

    turns = {
        "slower": [80.0, 85.0, 84.0, 84.0, 84.5],
        "faster": [120.0, 125.0, 118.0, 121.0, 119.0],
        "straddling": [95.0, 104.0, 100.0, 98.0, 102.0],
    }
    slower = ddpg_placements.speed_sentence(rows(turns["slower"]))
    assert "hybrid against all-CPU, steps/s: 0.84x (per turn 0.80-0.85x)" in slower
    assert ": held." in slower
    faster = ddpg_placements.speed_sentence(rows(turns["faster"]))
    assert "above the article's C7, slower than all-CPU (0.85x) (at most 1.00x)" in faster
    assert "the expectation did not hold" in faster
    assert "no clear effect" in ddpg_placements.speed_sentence(rows(turns["straddling"]))
    # the first three turns of each: too few for a verdict, whichever side they lie on
    for hybrid in turns.values():
        few = ddpg_placements.speed_sentence(rows(hybrid[:3]))
        assert few.endswith("no verdict, 3 repeats, and a verdict needs 5.")
        assert not any(w in few for w in (": held", "did not hold", "no clear effect"))
    one = [dict(r, chunk_steps_per_s=r["chunk_steps_per_s"][:1]) for r in rows([80.0])]
    assert "no verdict" in ddpg_placements.speed_sentence(one)
    merged = [dict(rows([80.0])[0], stands_for=["all-cpu", "hybrid", "all-accelerator"])]
    assert "C7 needs an accelerator" in ddpg_placements.speed_sentence(merged)
