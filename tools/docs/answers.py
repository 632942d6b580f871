"""The instructor's sheet, ``docs/answers.md``: what to expect from each question and exercise.

A teacher needs, beside every discussion question of ``docs/questions.md`` and every
exercise of the notebooks, the answer a seat should reach and what a different one
usually means. The written part of each entry is Markdown, ``tools/docs/answer_key.md``
(read by :mod:`tools.docs.answer_key`); a number in it is never typed but a slot
(``{name}``) filled here from a reference record under ``data/reference/`` (naming the
machine and the file), or computed by the exercise's own solution. The questions and
exercises are read from their sources, so an entry cannot be missing without the kit's test
saying so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import nbformat

from hetero_tutorial.core import contention, results
from hetero_tutorial.core.paths import REPO_DIR
from hetero_tutorial.notebook.solutions import solution
from hetero_tutorial.rl.overlapped.ray_engine import user_temp_dir
from hetero_tutorial.rl.ppo.config import PPOConfig
from hetero_tutorial.studies.crossover_grid import BATCH_WITHIN, batches_that_pay
from hetero_tutorial.studies.threads import rule_parts, thread_effects
from tools.docs import answer_key
from tools.docs.cards import notebook_paths

QUESTIONS = REPO_DIR / "docs" / "questions.md"
HEADING = re.compile(r"^## (\d\d) · (.+)$", re.M)
ITEM = re.compile(r"^(\d+)\. (.+?)(?=^\d+\. |\Z)", re.M | re.S)
CHECK = re.compile(r"""\bcheck\(\s*["'](\w+)["']""")


def discussion_questions(path: Path = QUESTIONS) -> dict[str, list[str]]:
    """The numbered questions of each notebook's section of the questions page, by notebook
    number (``"00"``), each as one line of text."""
    text = path.read_text()
    headings = list(HEADING.finditer(text))
    found = {}
    for heading, after in zip(headings, [*headings[1:], None], strict=True):
        body = text[heading.end() : after.start() if after else len(text)]
        found[heading.group(1)] = [" ".join(item.group(2).split()) for item in ITEM.finditer(body)]
    return found


def notebook_exercises() -> dict[str, list[str]]:
    """The exercises of each notebook (the names its code cells pass to ``check``), by
    notebook number, in the order they come."""
    found: dict[str, list[str]] = {}
    for path in notebook_paths():
        notebook = nbformat.read(path, as_version=4)
        code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
        found[path.name[:2]] = list(dict.fromkeys(CHECK.findall(code)))
    return found


Records = dict[str, list[tuple[str, results.Record]]]
"""The reference records by kind, each with where it lies (``folder/file``)."""


def _reference_records() -> Records:
    found: Records = {}
    for path in sorted(results.REFERENCE_DIR.glob("*/*.json")):
        record = results.load(path)
        found.setdefault(record.kind, []).append((f"{path.parent.name}/{path.name}", record))
    return found


def _each(records: Records, kind: str, say: Callable[[results.Record], str]) -> str:
    """``say`` of every reference record of ``kind``, each naming its file; or that none is."""
    said = [f"{say(record)} (`{where}`)" for where, record in records.get(kind, [])]
    return "; ".join(said) if said else f"no reference record of `{kind}` yet"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def _timers(record: results.Record) -> str:
    cpu = record.data["timers"]["cpu"]
    return (
        f"first call {_ms(cpu['first_call_s'])}, naive {_ms(cpu['naive_s'])}, honest median "
        f"{_ms(cpu['honest_s'])} (naive/honest {cpu['naive_s'] / cpu['honest_s']:.2f}x)"
    )


def _best_batches(record: results.Record) -> str:
    best = solution("best_batch_per_width")(record.data["grid"])
    return "best batch per width " + ", ".join(f"{w}: {b}" for w, b in best.items())


def _pays_batches(record: results.Record) -> str:
    """Where batching stops paying, as notebook 00 reads it: per width, the smallest batch
    within ``BATCH_WITHIN`` of the cheapest per sample (the grid's largest: still paying)."""
    found = ", ".join(f"width {r['width']}: {r['batch_size']}" for r in batches_that_pay(
        record.data["grid"]))  # fmt: skip
    return (
        f"batching stops paying (the smallest batch within {BATCH_WITHIN:.0%} of the cheapest) "
        f"at {found}"
    )


def _rollout_copies(record: results.Record) -> str:
    envs, steps = record.data["config"]["num_envs"], record.data["config"]["num_steps"]
    copies = solution("rollout_copies")(envs, steps)
    return (
        f"{copies} copies per rollout of {steps} vector steps of {envs} environments, "
        f"{copies / (envs * steps):.2f} per environment step"
    )


def _counted_copies(record: results.Record) -> str:
    counted = record.data["counted_copies"]
    return ", ".join(f"{plan} {c['copies_per_iteration']:,}" for plan, c in counted.items())


def _transfer_share(record: results.Record) -> str:
    data = record.data
    return (
        f"transfer share {data['transfer_share']:.1%} ± {data['transfer_share_stderr']:.1%} from "
        f"{data['samples']} samples; the rollout {data['phase_share']['rollout']:.0%} of training"
    )


def _samples_needed(record: results.Record) -> str:
    """Samples for two standard errors between the measured share and the article's 37%."""
    share = record.data["transfer_share"]
    needed = 4 * 0.37 * (1 - 0.37) / (0.37 - share) ** 2
    return f"measured {share:.1%}: about {needed:.0f} samples would tell it from 37%"


def _buffers(record: results.Record) -> str:
    largest = max(row["capacity"] for row in record.data["rows"])
    return (
        ", ".join(
            f"{row['design']} {row['copies_per_batch']} copies, neighbours "
            f"{row['neighbour_fraction']:.0%}"
            for row in record.data["rows"]
            if row["capacity"] == largest
        )
        + f" (capacity {largest:,})"
    )


def _thread_widths(record: results.Record) -> str:
    """03's width sweep read per phase: from which width each gains from every core."""
    rows = [r for r in record.data["width_sweep"] if "phase_seconds" in r]
    effects = thread_effects(rows)
    return "; ".join(rule_parts(effects, role)[0] for role in ("rollout", "update"))


def _ddpg_rate(record: results.Record) -> str:
    return f"{record.data['buffer']} {record.data['env_steps_per_s']:.0f} env steps/s"


def _repaid(record: results.Record) -> str:
    """After how many iterations the allocator's measuring repays a plan 5% faster."""
    rounds = [c["decision_seconds"] / (0.05 * c["best_fixed_s"]) for c in record.data["criterion"]]
    return (
        f"{min(rounds):.0f}-{max(rounds):.0f} iterations over its {len(rounds)} networks, were "
        "it to save 5% of an iteration"
    )


def _overlap(record: results.Record) -> str:
    rows = [row for row in record.data["summary"] if row["plan"] != "sequential"]
    return ", ".join(
        f"{row['backend']} lag {row['max_policy_lag']} {row['speedup_vs_sequential']:.2f}x"
        for row in rows
    )


def _ray_start(record: results.Record) -> str:
    return f"{record.data['ray_start_seconds']:.1f} s"


def _compiled(piece: str) -> Callable[[results.Record], str]:
    def say(record: results.Record) -> str:
        rows = [r for r in record.data["speedups"] if r["piece"] == piece and "low" in r]
        return ", ".join(
            f"{piece} at {r['size']:,} {r['speedup']:.2f}x ({r['low']:.2f}-{r['high']:.2f}x)"
            for r in rows
        )

    return say


def _break_even(record: results.Record) -> str:
    rows = [r for r in record.data["speedups"] if "break_even_calls" in r]
    return ", ".join(f"{r['piece']} at {r['size']:,} {_calls(r['break_even_calls'])}" for r in rows)


def _calls(calls: float | None) -> str:
    """A break-even in calls; None where compiling gained nothing to pay back with."""
    return "never (no steady gain)" if calls is None else f"{calls:,.0f} calls"


def _largest_gain(record: results.Record) -> str:
    rows = [r for r in record.data["speedups"] if "low" in r]
    return f"`{solution('largest_gain')(rows)!r}`"


def _bytes(env_id: str) -> str:
    config = PPOConfig.tuned(env_id)
    return f"{env_id} {solution('rollout_bytes')(config):,} bytes"


def _speedup_and_saved() -> str:
    speedup, saved = solution("speedup_and_time_saved")(72.0, 53.0)
    return f"72 s -> 53 s: speed-up {speedup:.2f}x, time saved {saved:.0%}"


FIGURES: dict[str, Callable[[Records], str]] = {
    "timers": lambda r: _each(r, "bench.crossover", _timers),
    "best_batches": lambda r: _each(r, "bench.crossover", _best_batches),
    "pays_batches": lambda r: _each(r, "bench.crossover", _pays_batches),
    "rollout_copies": lambda r: _each(r, "bench.ppo", _rollout_copies),
    "counted_copies": lambda r: _each(r, "bench.hybrid", _counted_copies),
    "thread_widths": lambda r: _each(r, "bench.hybrid", _thread_widths),
    "transfer_share": lambda r: _each(r, "bench.profile", _transfer_share),
    "samples_needed": lambda r: _each(r, "bench.profile", _samples_needed),
    "buffers": lambda r: _each(r, "bench.buffers", _buffers),
    "ddpg_rates": lambda r: _each(r, "bench.ddpg", _ddpg_rate),
    "repaid": lambda r: _each(r, "bench.allocator", _repaid),
    "overlap": lambda r: _each(r, "bench.overlap", _overlap),
    "ray_start": lambda r: _each(r, "bench.overlap", _ray_start),
    "compiled_act": lambda r: _each(r, "bench.compile", _compiled("act")),
    "compiled_env": lambda r: _each(r, "bench.compile", _compiled("env_step")),
    "break_even": lambda r: _each(r, "bench.compile", _break_even),
    "largest_gain": lambda r: _each(r, "bench.compile", _largest_gain),
    "rollout_bytes": lambda r: ", ".join(_bytes(env) for env in ("CartPole-v1", "Pendulum-v1")),
    "speedup_and_saved": lambda r: _speedup_and_saved(),
    "wait_share": lambda r: f"{contention.WAIT_SHARE}",
    "ray_temp": lambda r: f"`{user_temp_dir().parent}/ray-<uid>`",
}
"""The figures the key's entries quote (``{name}`` in their text), each from the reference
records (naming the file it came from) or from the package's own solutions and settings."""


def _filled(text: str, records: Records) -> str:
    names = set(re.findall(r"\{(\w+)\}", text))
    return text.format(**{name: FIGURES[name](records) for name in names})


MISSING = "**no answer written yet** (add it to `tools/docs/answer_key.md`)"


def _entry(label: str, key: answer_key.Answer | None, records: Records) -> list[str]:
    if key is None:
        return [f"- {label}", f"  - Expect: {MISSING}"]
    return [
        f"- {label}",
        f"  - Expect: {_filled(key.expected, records)}",
        f"  - A surprising answer usually means: {_filled(key.surprise, records)}",
    ]


def _first_sentence(text: str) -> str:
    found = re.match(r"(.+?[.?!])(\s|$)", text)
    return found.group(1) if found else text


def answers_sheet() -> str:
    """Per notebook, an entry for each discussion question and each exercise: the expected
    answer or range (numbers from the reference records, named) and what a surprise means."""
    records = _reference_records()
    questions, exercises = discussion_questions(), notebook_exercises()
    titles = dict(HEADING.findall(QUESTIONS.read_text()))
    lines: list[str] = []
    for number in sorted(questions.keys() | exercises.keys()):
        lines += ["", f"### {number} · {titles.get(number, 'notebook ' + number)}", ""]
        for index, question in enumerate(questions.get(number, []), start=1):
            label = f"**Q{index}.** {_first_sentence(question)}"
            lines += _entry(label, answer_key.QUESTIONS.get((number, index)), records)
        for name in exercises.get(number, []):
            label = f"**Exercise `{name}`.**"
            lines += _entry(label, answer_key.EXERCISES.get(name), records)
    return "\n".join(lines).strip()


def seat_signs() -> str:
    """ "When a seat shows X": what each common symptom on a seat means, and what to do."""
    records = _reference_records()
    lines = []
    for sign in answer_key.SEAT_SIGNS:
        lines.append(f"- **{sign.shows}** {_filled(sign.means, records)}")
    return "\n".join(lines)
