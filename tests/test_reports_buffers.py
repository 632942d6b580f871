"""Notebook 04's lines and tables: printed from its config, measurements and records."""

import statistics
from dataclasses import replace

import pytest

from hetero_tutorial.notebook import buffer_race, buffer_report, ddpg_findings, peer_races
from hetero_tutorial.notebook.exercises import UNSOLVED
from hetero_tutorial.rl.ddpg.config import DDPGConfig
from hetero_tutorial.studies import copies
from hetero_tutorial.studies.buffer_rows import GatherRow, SamplingRow
from hetero_tutorial.studies.ddpg_buffers import DDPGRun, DDPGSummary

UNREAD = {"batch_size": 256, "sample_iqr_s": None, "add_transitions_per_s": 1e6,
          "bytes_per_transition": 0.0, "raw_bytes_per_transition": 34,
          "neighbour_fraction": 0.0, "copies_per_batch": 0}  # fmt: skip
"""A sampling row's figures that a test below does not read."""


def _sampling(**given) -> SamplingRow:
    return SamplingRow(**UNREAD | given)


def _summary(**given) -> DDPGSummary:
    """A DDPG summary with ``given`` figures (the others, unread below, zero)."""
    unread = {"buffer": "transition", "placement": "all-cpu", "seeds": [0],
              "env_steps_per_s": 0.0, "seconds_per_episode": 0.0,
              "copies_per_1000_samples": 0.0, "eval_return_mean": 0.0,
              "eval_return_by_seed": [0.0], "eval_return_spread": 0.0, "runs": []}  # fmt: skip
    return DDPGSummary(**unread | given)


def _ddpg_run(env_steps_per_s: float = 0.0, total_steps: int = 800) -> DDPGRun:
    return DDPGRun(env_steps_per_s=env_steps_per_s, episode_end_steps=[],
                   total_steps=total_steps, learning_starts=0, record={})  # fmt: skip


def test_the_ddpg_settings_line_follows_the_config():
    config = DDPGConfig(hidden=64, batch_size=32, buffer_capacity=5_000, segment_length=8)
    line = ddpg_findings.ddpg_settings(config, seeds=3)
    assert "64 units per hidden layer, batch 32" in line and "3 seeds" in line
    assert "buffers of 5,000 transitions (pattern B in segments of 8)" in line
    assert f"{config.total_steps:,} steps per run" in line


def _rows(rates: dict[tuple[str, int], float]) -> list[SamplingRow]:
    """Sampling rows whose repeats spread by 1% of their median seconds per batch."""
    return [
        _sampling(design=d, capacity=c, device="cpu", batch_size=256,
                  sample_transitions_per_s=r, sample_iqr_s=0.01 * 256 / r)
        for (d, c), r in rates.items()
    ]  # fmt: skip


def _gathers(capacity: int, random: list[float], contiguous: list[float]) -> GatherRow:
    return GatherRow(capacity=capacity, table_bytes=capacity * 40,
                     random_s=statistics.median(random), contiguous_s=statistics.median(contiguous),
                     random_samples=random, contiguous_samples=contiguous)  # fmt: skip


def _bare_tables(repeats: int = 5) -> tuple[GatherRow, GatherRow]:
    """A bare table's gathers at 10,000 and 1,000,000 rows: the random gather slowed 1.55-1.60x
    more than the contiguous one over ``repeats`` paired repeats (3, too few for a verdict, or
    5), the medians the same either way."""
    small = _gathers(10_000, random=[1.0, 1.1, 0.9, 1.0, 1.05][:repeats],
                     contiguous=[1.0] * repeats)  # fmt: skip
    large = _gathers(1_000_000, random=[1.6, 1.7, 1.5, 1.6, 1.67][:repeats],
                     contiguous=[1.02, 1.0, 1.04, 1.02, 1.02][:repeats])  # fmt: skip
    return small, large


def test_the_capacity_sentence_reads_every_designs_slowdown_and_the_bare_tables():
    rows = _rows({("transition", 10_000): 100.0, ("trajectory", 10_000): 400.0,
                  ("tensor", 10_000): 2_000.0, ("transition", 1_000_000): 81.0,
                  ("trajectory", 1_000_000): 380.0, ("tensor", 1_000_000): 1_680.0})  # fmt: skip
    small, large = _bare_tables()
    text = buffer_report.capacity_sentence(rows, [small, large])
    assert "19% slower (transition, past the noise)" in text
    assert "16% slower (tensor, past the noise)" in text
    assert "5% slower (trajectory, past the noise)" in text
    assert "slowed too (16% against pattern A's 19%)" in text
    assert "1.60x as long at 1,000,000 rows (38 MiB)" in text
    assert "slowed 1.57x (per repeat 1.55-1.60x) as much as the contiguous one" in text
    assert "past the noise: the measurement fits memory as the cause" in text
    # the same gathers, three repeats of them: too few to say past the noise or within it
    text = buffer_report.capacity_sentence(rows, list(_bare_tables(repeats=3)))
    assert "1.57x (per repeat 1.55-1.60x): no verdict, 3 repeats, and a verdict needs 5" in text
    assert "fits memory" not in text and "within the noise of the repeats" not in text
    flat = _gathers(1_000_000, random=[1.05, 0.9, 1.2, 1.05, 1.1],
                    contiguous=[1.02, 1.0, 1.04, 1.02, 1.02])  # fmt: skip
    text = buffer_report.capacity_sentence(rows, [small, flat])
    assert "within the noise of the repeats: this run cannot tell" in text
    faster = [replace(r, sample_transitions_per_s=2_100.0) if r.design == "tensor" else r
              for r in rows]  # fmt: skip
    text = buffer_report.capacity_sentence(faster, [small, large])
    said = "The tensor buffer did not slow past the noise (sampling as fast): no slowdown common"
    assert said in text
    assert "Pattern A" not in text.split(".")[1]  # pattern A slowed 19%: not a shortfall
    noisy = [replace(r, sample_iqr_s=50 * r.sample_iqr_s) for r in rows]  # IQRs that overlap
    text = buffer_report.capacity_sentence(noisy, [small, large])
    assert "19% slower (transition)," in text and (
        "Pattern A did not slow past the noise (sampling 19% slower); the tensor buffer did not "
        "slow past the noise (sampling 16% slower): no slowdown common to both, past the noise "
        "and over 5%: no memory cost shared by both designs shows at these sizes" in text
    )


def _capacity(a: float, tensor: float) -> str:
    """The capacity sentence where pattern A's and the tensor buffer's sampling rates fell by
    ``a`` and ``tensor`` (fractions) from 10,000 to 1,000,000 transitions, past the noise."""
    rows = _rows({("transition", 10_000): 100.0, ("trajectory", 10_000): 400.0,
                  ("tensor", 10_000): 2_000.0, ("transition", 1_000_000): 100.0 * (1 - a),
                  ("trajectory", 1_000_000): 300.0,
                  ("tensor", 1_000_000): 2_000.0 * (1 - tensor)})  # fmt: skip
    return buffer_report.capacity_sentence(rows, list(_bare_tables()))


def test_the_capacity_sentence_reads_forwards_on_each_side_of_the_5_percent_threshold():
    # 04's quick run: both slowed past the noise, by less than 5%
    text = _capacity(0.03, 0.04)
    assert "3% slower (transition, past the noise)" in text
    assert "4% slower (tensor, past the noise)" in text
    assert (
        "Pattern A and the tensor buffer both slowed past the noise, by less than 5% (3.0% and "
        "4.0%): no slowdown common to both, past the noise and over 5%: no memory cost shared by "
        "both designs shows at these sizes. "
        "A bare float32 table's gathers, for scale: 256 random rows took 1.60x as long at "
        "1,000,000 rows (38 MiB) as at 10,000, 256 contiguous rows 1.02x." in text
    )
    assert "did not both slow" not in text and "fits memory" not in text
    # one on each side of 5%: only the one short of it is named
    text = _capacity(0.051, 0.049)
    assert "The tensor buffer slowed past the noise by less than 5% (4.9%): no slowdown" in text
    assert "Pattern A" not in text  # its 5.1% is past the threshold: no shortfall to name
    text = _capacity(0.049, 0.051)
    assert (
        "(tensor, past the noise). Pattern A slowed past the noise by less than 5% (4.9%)" in text
    )
    # both just past 5%: the gathers are read as a cause
    text = _capacity(0.051, 0.051)
    assert "slowed too (5% against pattern A's 5%)" in text
    assert "A bare float32 table, no buffer at all: 256 random rows took 1.60x" in text
    assert "fits memory as the cause" in text and "for scale" not in text


def _counts(ppo: float, ddpg: float, sample: float = 6.0) -> tuple[dict, dict]:
    """Copies counted on meta: PPO's and all-accelerator DDPG's per environment step."""
    found = {"counted_on": "meta", "env_id": "CartPole-v1", "copies_per_env_step": ppo}
    phases = {"rollout": {"count_per_1000_steps": 1000 * (ddpg - sample)},
              "sample": {"count_per_1000_steps": 1000 * sample}}  # fmt: skip
    return found, {"counted_on": "meta", "buffer": "transition", "by_phase": phases,
                   "copies_per_env_step": ddpg}  # fmt: skip


def test_c4_says_how_it_came_out_as_notebook_10s_rule_does():
    from hetero_tutorial.core.results import Record
    from hetero_tutorial.ledger import rules

    def ledger(ppo: float, ddpg: float) -> str:
        provenance = {"fingerprint": {"accelerator": None}, "date": "2026-01-01",
                      "command": "t", "quick": 0}  # fmt: skip
        counted = {"placement": "all-accelerator", "counted_on": "meta",
                   "copies_per_env_step": ppo}  # fmt: skip
        records = {
            "bench.ppo": [Record("bench.ppo", {"placement": "all-accelerator",
                                               "counted_copies": counted}, provenance)],
            "bench.ddpg_placements": [Record("bench.ddpg_placements", {"counted_copies": {
                "all-accelerator": _counts(ppo, ddpg)[1]}}, provenance)],
        }  # fmt: skip
        return rules.c4(records).status.value

    said = copies.c4_sentence(*_counts(0.27, 8.0))  # 04's run
    assert "PPO's copies over DDPG's above 1x): did not hold, 0.034x" in said
    assert "PPO makes 97% fewer copies per step than DDPG" in said
    assert "held, 1.01x." in copies.c4_sentence(*_counts(8.1, 8.0))
    assert "did not hold, 0.988x" in copies.c4_sentence(*_counts(7.9, 8.0))
    assert "did not hold, the two make the same number" in copies.c4_sentence(*_counts(8.0, 8.0))
    assert "held, DDPG copies nothing" in copies.c4_sentence(*_counts(0.27, 0.0, 0.0))
    for ppo, ddpg in ((0.27, 8.0), (8.1, 8.0), (7.9, 8.0), (8.0, 8.0), (0.27, 0.0)):
        said = copies.c4_sentence(*_counts(ppo, ddpg)).split("above 1x): ")[1]
        assert said.startswith(ledger(ppo, ddpg) + ",")


def test_copies_are_counted_per_env_step_and_per_sampled_transition_beside_c7s_20():
    counted = {"all-accelerator": _counts(0, 8.0)[1],
               "all-cpu": {"counted_on": "meta", "by_phase": {}, "copies_per_env_step": 0.0,
                           "note": "every phase on the CPU"}}  # fmt: skip
    table = buffer_report.counted_table(counted, 256).data
    assert "| copies / 1000 env steps | copies / 1000 sampled transitions |" in table
    assert "| all-accelerator | meta | 8000 | 31.2 | rollout 2000, sample 6000 |" in table
    said = copies.c7_switches_sentence(counted, 256)
    assert (
        "all-accelerator makes 31.2 copies per 1000 sampled transitions (8 per step; the " in said
    )
    assert "batch's own 6 copies come to 23.4), at least 20: this run has C7's setting." in said
    assert "held" not in said  # a setting, not the claim: the ledger judges C7
    at = copies.c7_switches_sentence({"a": _counts(0, 5.12, 5.12)[1]}, 256)  # 20.0
    assert at.endswith("at least 20: this run has C7's setting.")
    below = copies.c7_switches_sentence({"a": _counts(0, 5.11, 5.11)[1]}, 256)  # 19.96
    assert "20.0 copies per 1000 sampled" in below and "0.2% below 20: this run's DDPG" in below
    far = copies.c7_switches_sentence({"a": _counts(0, 2.56, 2.56)[1]}, 256)  # 10
    assert "50% below 20: this run's DDPG switches less often" in far
    assert far.endswith("so it lacks C7's setting.")


def _summaries(returns: dict[str, list[float]]) -> dict[str, DDPGSummary]:
    return {
        design: _summary(
            seeds=list(range(len(found))),
            eval_return_by_seed=found,
            eval_return_spread=max(found) - min(found),
            runs=[_ddpg_run(total_steps=800)],
        )
        for design, found in returns.items()
    }


def test_the_learning_lines_judge_nothing_in_quick_mode_and_follow_the_rule_otherwise(monkeypatch):
    found = _summaries({"transition": [-300.0, -290.0, -270.0, -260.0, -250.0],
                        "trajectory": [-1200.0, -1180.0, -1150.0, -1120.0, -1100.0],
                        "tensor": [-280.0, -270.0, -260.0, -250.0, -240.0]})  # fmt: skip
    monkeypatch.setenv("HETERO_TUTORIAL_QUICK", "1")
    lines = ddpg_findings.stability_lines(found)
    assert lines[-1].startswith("quick mode: no learning verdict (800 steps per run")
    assert not any("better" in line for line in lines)
    monkeypatch.setenv("HETERO_TUTORIAL_QUICK", "0")
    lines = ddpg_findings.stability_lines(found)
    assert "transition learned better than trajectory" in lines[-2]
    assert "no difference detected" in lines[-1]
    three = _summaries({"transition": [-300.0, -270.0, -250.0],
                        "trajectory": [-1200.0, -1150.0, -1100.0],
                        "tensor": [-280.0] * 3})  # fmt: skip
    assert "no verdict (3 seeds per arm" in ddpg_findings.stability_lines(three)[-2]
    one_seed = _summaries({d: [-200.0] for d in ("transition", "trajectory", "tensor")})
    assert "no verdict (1 seed per arm" in ddpg_findings.stability_lines(one_seed)[-1]


def test_the_buffer_race_is_shown_from_its_record_with_where_the_peer_is_ahead():
    newest = peer_races.race("bench.buffer_peers")  # committed under data/reference/
    shown = buffer_race.race().data
    assert "The race's targets" in shown and "docs/results.md" in shown
    lines = buffer_race.race_sentences(newest)
    ahead = [line for line in lines if line.startswith("TorchRL is ahead")]
    assert ahead and all("bytes / stored transition" in line and "Why:" in line for line in ahead)
    assert "one-byte bools" in ahead[0]
    assert lines[-1].startswith("Ours is ahead in every round (the medians shown) on:")
    assert buffer_race.race(None).data == buffer_race.NO_RACE


def test_row_gathers_time_random_and_contiguous_rows_at_each_capacity():
    from hetero_tutorial.studies.buffer_designs import row_gathers

    found = row_gathers([1_000, 4_000], batch_size=16, repeats=3)
    assert [g.capacity for g in found] == [1_000, 4_000]
    assert found[1].table_bytes == 4_000 * 10 * 4
    assert all(g.random_s > 0 and g.contiguous_s > 0 for g in found)
    assert all(len(g.random_samples) == len(g.contiguous_samples) == 3 for g in found)


def test_the_exercises_guesses_are_set_beside_the_rules_answers():
    solved = [998, 999, 0, 1, 2]  # what check returned: the learner's answer
    ring = buffer_report.ring_guess_line([998, 999, 0, 1, 2], solved)
    assert ring.endswith("[998, 999, 0, 1, 2], as you predicted.")
    assert "not [998, 999, 1000, 1001, 1002]" in buffer_report.ring_guess_line(
        [998, 999, 1000, 1001, 1002], solved
    )
    td = buffer_report.td_guess_line(["truncated", "ordinary"], solved)
    assert td == "The targets that keep gamma * next_q: ordinary and truncated, as you predicted."
    assert "not ordinary, as you predicted" in buffer_report.td_guess_line(["ordinary"], solved)
    # unsolved (check returned None): the reveal waits, printing no slot and no target
    assert buffer_report.ring_guess_line(None, None) == UNSOLVED
    assert buffer_report.td_guess_line(["ordinary"], None) == UNSOLVED


def test_the_ddpg_sentence_quotes_the_articles_times_not_the_ratio_09_asks_for():
    import inspect

    assert "1.36" not in inspect.getsource(ddpg_findings.ddpg_speed_sentence)


def test_the_sampling_ratios_carry_the_spread_of_their_medians():
    rows = [
        _sampling(design=d, capacity=1000, batch_size=100, device="cpu",
                  sample_transitions_per_s=rate, sample_iqr_s=iqr)
        for d, rate, iqr in (("transition", 1e5, 1e-4), ("trajectory", 5e5, 2e-5),
                             ("tensor", 1e6, 1e-5))
    ]  # fmt: skip
    said = buffer_report.sampling_sentence(rows)
    # 1 ms against 0.1 ms per batch, each +- half its IQR: (1.05 / 0.095)x to (0.95 / 0.105)x
    assert "the tensor buffer 10.00x (from the two medians' IQRs 9.05-11.05x) pattern A's" in said


def _ddpg(rates: dict[str, list[float]]) -> dict[str, DDPGSummary]:
    return {
        d: _summary(env_steps_per_s=statistics.median(r), runs=[_ddpg_run(x) for x in r])
        for d, r in rates.items()
    }


def test_a_buffer_slower_than_its_costs_allow_breaks_the_bound_and_says_so():
    """04's run: the tensor buffer samples faster, yet its DDPG ran slower on every seed."""
    rows = [
        _sampling(design=d, capacity=1000, device="cpu", sample_transitions_per_s=s,
                  add_transitions_per_s=a)
        for d, s, a in (("transition", 256 / 453e-6, 1e6), ("trajectory", 256 / 300e-6, 1e6),
                        ("tensor", 256 / 31e-6, 1e6))
    ]  # fmt: skip
    seeds = {"transition": [138.0, 140.0, 139.0, 138.5, 139.5],
             "trajectory": [139.0, 141.0, 140.0, 139.5, 140.5]}  # fmt: skip
    slow_tensor = {"tensor": [115.0, 117.0, 116.0, 115.5, 116.5]}
    said = ddpg_findings.ddpg_speed_sentence(_ddpg(seeds | slow_tensor), rows, 256, capacity=1000)
    tensor = said.split("Tensor against pattern A")[1]
    assert "below the bound these costs set" in tensor and "the expectation did not hold" in tensor
    assert "held" not in tensor
    within_tensor = {"tensor": [140.0, 141.5, 140.75, 140.5, 141.0]}
    within = _ddpg(seeds | within_tensor)
    assert "held" in ddpg_findings.ddpg_speed_sentence(within, rows, 256, capacity=1000)
    # the first two of the same seeds: below the bound or inside it, too few for a verdict
    for tensor_seeds in (slow_tensor, within_tensor):
        two = _ddpg({d: r[:2] for d, r in (seeds | tensor_seeds).items()})
        tensor = ddpg_findings.ddpg_speed_sentence(two, rows, 256, capacity=1000).split(
            "Tensor against pattern A"
        )[1]
        assert "no verdict, 2 repeats, and a verdict needs 5" in tensor
        assert "held" not in tensor
    one_seed = _ddpg({d: [r[0]] for d, r in {"transition": [138.0], "trajectory": [139.0],
                                               "tensor": [115.0]}.items()})  # fmt: skip
    assert "no verdict" in ddpg_findings.ddpg_speed_sentence(one_seed, rows, 256, capacity=1000)


def test_a_change_in_sampling_speed_says_which_way():
    """04 printed '+11%' beside 'did not slow': sampling had got faster."""
    words = [buffer_report._faster_or_slower(c) for c in (0.11, -0.03, 0.001, -0.004)]
    assert words == ["11% faster", "3% slower", "as fast", "as fast"]


@pytest.mark.parametrize(("tensor_after", "words"), [
    (9.5e6, "the buffer measured 1% faster: the other way, so the gather's change did not "
            "carry into the buffer"),
    (9.2e6, "the buffer measured 2% slower: under half that, so the gather's change did not"),
    (8.9e6, "the buffer measured 5% slower: about as the gather predicts"),
    (5.1e6, "the buffer measured 46% slower: 7.8x the predicted change, so the gather explains "
            "under half of it and the rest is the buffer's own"),
])  # fmt: skip
def test_the_bare_gather_predicts_the_tensor_buffers_change_and_says_how_it_came_out(
    tensor_after, words
):
    """04: the bare table's random gather slowed 1.54x, the tensor buffer (which makes that
    very gather) ran 1% faster, and no sentence set the two side by side."""
    rows = _rows({("transition", 10_000): 593e3, ("trajectory", 10_000): 4.9e6,
                  ("tensor", 10_000): 9.4e6, ("transition", 30_000): 590e3,
                  ("trajectory", 30_000): 4.8e6, ("tensor", 30_000): tensor_after})  # fmt: skip
    small = _gathers(10_000, [3e-6] * 5, [2e-6] * 5)
    large = _gathers(30_000, [4.5e-6, 4.6e-6, 4.6e-6, 4.7e-6, 4.6e-6], [2.2e-6] * 5)
    text = buffer_report.capacity_sentence(rows, [small, large])
    assert "That gather, 1.53x (per repeat 1.50-1.57x), is 11% of the tensor buffer's" in text
    assert "so it predicts the buffer 6% slower at 30,000" in text
    assert words in text
