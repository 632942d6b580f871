"""Notebook 03's sentences on pinned copies: from the copy-cost rows, with a verdict only
where the medians' IQRs do not overlap."""

from hetero_tutorial.notebook import hybrid_report


def _row(size, mode, seconds, iqr, blocks=None):
    return {"size_bytes": size, "mode": mode, "seconds": seconds, "iqr_s": iqr,
            "gb_per_s": size / seconds / 1e9, "new_pinned_blocks": blocks, "calls": 18,
            "note": None}  # fmt: skip


def test_copy_sentences_name_an_effect_only_outside_the_spread():
    rows = [
        _row(4096, "pageable", 10e-6, 2e-6),
        _row(4096, "pinned", 9.5e-6, 2e-6),  # within the IQRs: no verdict
        _row(2**24, "pageable", 4e-3, 1e-4),
        _row(2**24, "pinned", 2e-3, 1e-4),  # clearly faster
        _row(2**24, "pin on the fly", 6e-3, 1e-4, blocks=1),  # clearly slower
    ]
    small, large = hybrid_report.copy_costs_sentences(rows)
    assert small.startswith("- 4,096 bytes: pageable")
    assert "pinned 0.95x its time (no clear effect)" in small
    assert "pinned 0.50x its time (faster)" in large
    # pinning on the fly reuses PyTorch's cached pinned block: the row says how often it did
    assert "pin on the fly 1.50x its time (slower; 1 new pinned block in 18 calls" in large
    assert "reused from PyTorch's cache" in large and "pinned 0.50x its time (faster)" in large


def test_without_rows_one_line_says_there_is_nothing_to_time():
    assert hybrid_report.copy_costs_sentences([]) == [hybrid_report.NO_COPIES_TO_TIME]
    only = hybrid_report.copy_costs_sentences([_row(4096, "pageable", 1e-5, 1e-6)])
    assert only == ["- 4,096 bytes: pageable 10 us per copy; no other mode timed here."]
