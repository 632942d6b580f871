"""The PPO tricks' verdicts name an effect only past the spread of their rounds."""

from hetero_tutorial.studies.ppo_tricks import verdict


def _row(ratio, low, high, rounds):
    return {"trick": "flat_parameters", "ratio": ratio, "ratio_low": low, "ratio_high": high,
            "rounds": rounds}  # fmt: skip


def test_one_round_gives_no_verdict_even_though_its_range_is_a_point():
    assert verdict(_row(1.3, 1.3, 1.3, 1)) == "flat_parameters: no verdict (one round), 1.30x"


def test_an_effect_is_named_only_when_every_round_agrees():
    assert "1.30x faster per step (rounds 1.10-1.50x)" in verdict(_row(1.3, 1.1, 1.5, 5))
    assert "slower here: 0.80x" in verdict(_row(0.8, 0.7, 0.9, 5))
    assert "no clear effect here" in verdict(_row(1.05, 0.95, 1.2, 5))
    assert "no clear effect here" in verdict(_row(1.0, 1.0, 1.0, 5))  # identical rounds


def test_fewer_rounds_than_the_series_minimum_give_no_verdict_however_they_agree():
    """01 named 'slower' from 3 rounds, where 03 and 05 give no verdict below 5 pairs."""
    said = verdict(_row(0.94, 0.78, 0.99, 3))
    assert said.startswith("flat_parameters: no verdict, 0.94x") and "a verdict needs 5" in said
    assert "slower" not in said
    assert "slower here" in verdict(_row(0.94, 0.78, 0.99, 5))


def test_all_three_tricks_take_a_plural_verb():
    row = {"trick": "all three", "ratio": 1.18, "ratio_low": 1.03, "ratio_high": 1.32, "rounds": 5}
    assert verdict(row).startswith("all three make PPO 1.18x faster")
