"""The book's page for the article's readers, in Chinese (``docs/zh.md``): its generated
section, the ledger's verdict on every claim per reference machine, each verdict word
translated by the one table below."""

from __future__ import annotations

from hetero_tutorial.core.machine_load import NOT_JUDGED
from hetero_tutorial.ledger import verdicts as ledger
from hetero_tutorial.ledger.claims import CLAIMS
from hetero_tutorial.ledger.rules import Status

VERDICT_WORDS = {
    Status.HELD.value: "成立",
    Status.NOT_HELD.value: "不成立",
    Status.NO_CLEAR_EFFECT.value: "无明显差异（多次重复的离散范围跨过阈值）",
    Status.NO_VERDICT.value: "无结论（只测了一次，没有离散范围）",
    Status.NOT_MEASURABLE.value: "在该机器上无法测量（例如它没有 GPU）",
    Status.MISSING.value: "尚未测量",
    NOT_JUDGED: "未评判（测量时机器繁忙）",
}
"""Every verdict word the ledger prints, in Chinese: the one place they are translated."""


def verdict_words() -> str:
    """The translation table itself, as the page shows it."""
    lines = ["| 台账用语 (English) | 中文 |", "|---|---|"]
    lines += [f"| {english} | {chinese} |" for english, chinese in VERDICT_WORDS.items()]
    return "\n".join(lines)


def verdicts_table() -> str:
    """Per claim, the verdict on each reference machine, in Chinese."""
    found = ledger.machines(include_this=False)
    if not found:
        return "`data/reference/` 中还没有参考机器的记录。"
    table = ledger.rows(found)
    hardware = {row["machine"]: row["hardware"] for row in table}
    machines = list(hardware)
    lines = ["| 论断 | " + " | ".join(hardware[m] for m in machines) + " |"]
    lines.append("|---|" + "---|" * len(machines))
    for claim in CLAIMS:
        cells = {row["machine"]: row for row in table if row["claim"] == claim.id}
        words = [VERDICT_WORDS[ledger.label(cells[m])] for m in machines]
        lines.append(f"| {claim.id} | " + " | ".join(words) + " |")
    return "\n".join(lines)
