"""Notebook 05's replay of the article's threshold lookup."""

from hetero_tutorial.ledger.article import threshold_lookups


def test_the_lookup_gives_the_table_s_thresholds_and_fails_past_them():
    assert threshold_lookups([128, 256, 512]) == [
        "width 128: threshold 0.8",
        "width 256: threshold 0.6",
        "width 512: KeyError '512' (the mlp table holds 128, 256 only)",
    ]
    assert threshold_lookups([64], "cnn") == ["width 64: threshold 0.7"]
