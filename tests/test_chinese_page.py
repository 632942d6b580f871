"""The page for the article's readers: every verdict word translated, every claim judged."""

from hetero_tutorial.core.machine_load import NOT_JUDGED
from hetero_tutorial.ledger.claims import CLAIMS
from hetero_tutorial.ledger.rules import Status
from tools.docs import book, chinese, kit


def test_every_verdict_word_the_ledger_prints_has_one_translation():
    assert set(chinese.VERDICT_WORDS) == {s.value for s in Status} | {NOT_JUDGED}
    assert len(set(chinese.VERDICT_WORDS.values())) == len(chinese.VERDICT_WORDS)


def test_the_page_restates_every_claim_and_is_in_the_book():
    text = (kit.DOCS_DIR / "zh.md").read_text()
    assert all(f"| {claim.id} |" in text for claim in CLAIMS)
    assert "zh.md" in book.RESULT_PAGES
    table = chinese.verdicts_table()
    assert all(f"| {claim.id} |" in table for claim in CLAIMS)
    assert not any(word in table for word in ("held", "did not hold", "not measurable"))
