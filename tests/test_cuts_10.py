"""Notebook 10's compact ledger: words from the records, one meaning per verdict word.

Each test feeds records (or ledger rows) on both sides of what decides the printed words
and asserts the words: a busy study reads *not judged*, one repeat *no verdict*; a claim no
machine can answer shares one line; where the records came from; how far C1's CPU step may
drift before its verdict changes.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hetero_tutorial.core import machine_load
from hetero_tutorial.core.results import Record
from hetero_tutorial.ledger import claims, rules, verdicts
from hetero_tutorial.ledger.claims import Status, group_by_kind
from hetero_tutorial.ledger.rules import C1_CPU_BAND, C1_CPU_S
from hetero_tutorial.notebook import ledger_report as report

GPU = {"type": "cuda", "device": "cuda:0", "name": "Test GPU"}
FOLD = re.compile(r"<details>.*?</details>", re.S)


def _record(kind, data, gpu=False, command="notebooks/00_devices_and_timing.ipynb (quick)",
            date="2026-12-07T07:41:00+00:00", busy=False):  # fmt: skip
    fingerprint = {"accelerator": GPU if gpu else None, "cpu_model": "Test CPU",
                   "cpu_logical_cores": 2, "usable_cores": 2}  # fmt: skip
    provenance = {"fingerprint": fingerprint, "date": date, "command": command, "quick": True}
    if busy:
        reading = machine_load.Busyness(
            "the forward-pass grid", 4.0, {"wait_share": 0.6, "others_on_study_cpus": 0.9}
        )
        provenance["machine_load"] = reading.to_json()
    return Record(kind, data, provenance)


def _crossover(step_s=1e-4, gpu=False, busy=False, **provenance):
    costs = {"cpu": {"median_s": step_s, "iqr_s": step_s / 50}, "env_only": {"median_s": 1e-5}}
    update = {"cpu": {"median_s": 1e-3, "iqr_s": 1e-5}}
    if gpu:
        costs["cuda:0"] = {"median_s": 2 * step_s, "iqr_s": step_s / 50}
        update["cuda:0"] = {"median_s": 5e-4, "iqr_s": 1e-5}
    data = {"policy_step": costs, "value_update": update, "grid": [],
            "value_update_speedup": {"cuda:0": 2.0} if gpu else {}}  # fmt: skip
    return _record("bench.crossover", data, gpu=gpu, busy=busy, **provenance)


def _row(claim, machine, status, measured="a figure", ratio=None):
    return {"claim": claim, "machine": machine, "column": machine, "status": status,
            "measured": measured, "ratio": ratio, "hardware": "Test CPU"}  # fmt: skip


BUSY_LINE = machine_load.Busyness(
    "the forward-pass grid", 4.0, {"wait_share": 0.6, "others_on_study_cpus": 0.9}
).line()


def _full_table(*rows):
    """Ledger rows for every claim on this machine: ``rows``, the rest not measured yet."""
    given = {row["claim"]: row for row in rows}
    return [
        given.get(c.id) or _row(c.id, verdicts.THIS_MACHINE, Status.MISSING.value, "needs a record")
        for c in claims.CLAIMS
    ]


@pytest.mark.parametrize(
    ("measured", "printed"),
    [(BUSY_LINE, "not judged"), ("trajectory buffer 1.16x (one seed)", "no verdict")],
)
def test_a_busy_study_prints_not_judged_and_one_repeat_prints_no_verdict(measured, printed):
    row = _row("C8", verdicts.THIS_MACHINE, Status.NO_VERDICT.value, measured, 1.16)
    assert verdicts.label(row) == printed
    table = _full_table(row)
    assert f"| C8 | 72 s -> 53 s (1.36x), more stable curve | **{printed}**" in verdicts.markdown(
        table
    )
    cell = next(line for line in report.ledger(table).data.split("\n") if "| C8:" in line)
    assert cell.endswith(f"| {printed}, 1.16x |" if printed == "no verdict" else "| not judged |")
    lines = verdicts.takeaways(table)
    assert any(line.startswith("Not judged: C8") for line in lines) == (printed == "not judged")
    assert any(line.startswith("No verdict: C8") for line in lines) == (printed == "no verdict")


@pytest.mark.parametrize("gpu", [False, True])
def test_a_busy_study_of_a_claim_this_machine_cannot_answer_is_not_measurable(gpu):
    """Busy or quiet, a CPU-only machine cannot answer C2: no rerun would judge it. With an
    accelerator, the same busy record is not judged."""
    by_machine = {verdicts.THIS_MACHINE: group_by_kind([_crossover(gpu=gpu, busy=True)])}
    rows = {r["claim"]: r for r in verdicts.rows(by_machine)}
    if gpu:
        assert verdicts.label(rows["C2"]) == "not judged"
    else:
        assert rows["C2"]["status"] == Status.NOT_MEASURABLE.value
        assert "no accelerator" in rows["C2"]["measured"]
    assert verdicts.label(rows["C1-CPU"]) == "not judged"  # judged on any CPU: busy withholds it
    lines = verdicts.takeaways(list(rows.values()))
    unjudged = next(line for line in lines if line.startswith("Not judged: "))
    assert unjudged.startswith("Not judged: C1, C1-CPU, C2." if gpu else "Not judged: C1-CPU.")


def _table(reference_status):
    """C2 on this CPU-only machine and on one reference machine, plus C4 judged on both."""
    here, there = verdicts.THIS_MACHINE, "a-reference"
    return [
        _row("C2", here, Status.NOT_MEASURABLE.value, "no accelerator: nothing to compare"),
        _row("C2", there, reference_status, "no accelerator: nothing to compare", 1.8),
        _row("C4", here, Status.NOT_HELD.value, "PPO 0.270, DDPG 8.000", 0.27 / 8),
        _row("C4", there, Status.NOT_HELD.value, "PPO 0.270, DDPG 8.000", 0.27 / 8),
    ]


def test_claims_no_machine_answers_share_one_line_and_the_judged_keep_a_row():
    text = report.ledger(_table(Status.NOT_MEASURABLE.value)).data
    shown = FOLD.sub("", text)
    assert shown.count("not measurable here") + shown.count("Not measurable here") == 1
    assert "**Not measurable here** on all 2 machines (each compares a CPU with an" in shown
    assert "accelerator, and none of them recorded one): C2." in shown  # by ID: words in the file
    rules = report._rules_and_figures(_table("held"))
    assert "**C2**: A value update with 256 hidden units runs faster on GPU." in rules
    assert "| C4: On-policy PPO" in shown and "did not hold, 0.034x" in shown
    assert "Rule:" not in text and "`data/results/ledger.md`" in text  # the rules: in the file
    assert "Rule: held if the accelerator is faster" in report._rules_and_figures(_table("held"))
    judged = FOLD.sub("", report.ledger(_table(Status.HELD.value)).data)
    assert "| C2: A value update" in judged and "held, 1.80x" in judged
    assert "Not measurable here** on all" not in judged


@pytest.mark.parametrize("reference", [Status.NOT_MEASURABLE.value, Status.HELD.value])
def test_the_takeaway_for_accelerator_claims_says_what_the_other_columns_hold(reference):
    lines = verdicts.takeaways(_table(reference))
    line = next(line for line in lines if line.startswith("C2 compare a CPU"))
    if reference == Status.HELD.value:
        assert line.endswith("the a-reference column answers C2.")
    else:
        assert line.endswith("no other column here answers them either.")
    assert not any("GPU" in line for line in lines)  # no promise of GPU columns


def test_each_column_says_where_its_records_came_from():
    here = [
        _crossover(),
        _record("bench.hybrid", {}, command="notebooks/03_hybrid_rollout_update.ipynb (quick)",
                date="2026-12-07T07:44:00+00:00"),
        _record("bench.allocator", {}, command="fill_ledger.py", date="2026-12-07T07:45:00+00:00"),
    ]  # fmt: skip
    reference = [_record("bench.ppo", {}, command="python -m hetero_tutorial bench ppo",
                         date="2026-12-01T10:00:00+00:00")]  # fmt: skip
    by_machine = {
        verdicts.THIS_MACHINE: group_by_kind(here),
        "a-reference": group_by_kind(reference),
        "empty": {},
    }
    text = report.sources(by_machine).data
    shown = FOLD.sub("", text)
    assert (
        "- **this machine**: 3 records in `data/results/`, from notebooks 00, 03, fill_ledger, "
        "quick mode, 2026-12-07 07:41-07:45, on" in shown
    )
    assert "`data/reference/a-reference/`, committed, from a bench command" in shown
    assert "- **empty**: no records in `data/reference/empty/`, committed." in shown
    assert "|" not in text and "in `data/results/ledger.md`" in text  # every record: there
    listing = report.records_table(by_machine).data
    assert "| this machine | bench.hybrid | 2026-12-07T07:44 | quick | notebook 03 |" in listing


LOW, HIGH = (C1_CPU_S * edge for edge in C1_CPU_BAND)


@given(st.floats(min_value=0.01 * LOW, max_value=50 * HIGH), st.floats(1.0, 2.0))
def test_c1s_margin_line_and_its_verdict_read_one_range(step, drift):
    """10's margin line and C1-CPU's verdict read the same widened range, so they never
    disagree: inside the band held, outside it did not hold, across an edge no clear effect."""
    record = _crossover(step)
    record.data["policy_step_again"] = {"cpu": {"median_s": step * drift, "iqr_s": step / 50}}
    line = report.across_runs_line({verdicts.THIS_MACHINE: group_by_kind([record])})
    status = rules.c1_cpu(group_by_kind([record])).status
    side = re.search(r"lies (inside|outside|across an edge of) the rule's band", line).group(1)
    said = {"inside": Status.HELD, "outside": Status.NOT_HELD}.get(side, Status.NO_CLEAR_EFFECT)
    assert said is status
    if side != "across an edge of":
        factor = float(re.search(r", ([\d.]+)x from the nearest edge", line).group(1))
        assert factor >= 1


def test_a_busy_c1_step_gets_no_drift_margin():
    line = report.across_runs_line(
        {verdicts.THIS_MACHINE: group_by_kind([_crossover(1e-4, busy=True)])}
    )
    assert "one timing's IQR" in line and "nearest edge" not in line


def test_a_record_with_both_timings_says_its_range_spans_them():
    record = _crossover(1e-4)
    record.data["policy_step_again"] = {"cpu": {"median_s": 1.1e-4, "iqr_s": 1e-6}}
    line = report.across_runs_line({verdicts.THIS_MACHINE: group_by_kind([record])})
    assert "its two timings' middle halves" in line and "IQR" not in line


def test_what_to_do_says_not_judged_in_a_few_words_and_files_the_reading(tmp_path):
    for busy in (True, False):
        by_machine = {verdicts.THIS_MACHINE: group_by_kind([_crossover(busy=busy)])}
        shown = report.what_to_do(by_machine).data
        said = "not judged: the forward-pass grid ran on a busy machine"
        assert (said in shown) == busy
        assert machine_load.BUSY_WORDS not in shown  # the full reading: in ledger.md
        assert "The figures behind each answer: in `data/results/ledger.md`." in shown
        assert ("everything on the CPU" in shown) != busy
        saved = report.save(by_machine, tmp_path)[1].read_text()
        figures = saved.split("## The figures behind each answer")[1]
        assert (machine_load.BUSY_WORDS in figures) == busy


def test_one_timing_of_the_c1_step_gives_no_margin():
    line = report.across_runs_line({verdicts.THIS_MACHINE: group_by_kind([_crossover(1.0e-4)])})
    assert "Its step, 0.100 ms from one timing, against the rule's band (0.15-0.60 ms)." in line
    assert "from the nearest edge" not in line


@pytest.mark.parametrize(
    ("first", "again", "words"),
    [  # the margin reads the range the verdict reads: both timings, widened by their drift
        (0.087e-3, 0.123e-3, "0.061-0.176 ms (their drift: 1.41x), "
         "lies across an edge of the rule's band (0.15-0.60 ms): another run could land on "
         "either side"),
        (0.087e-3, 0.090e-3, "0.083-0.094 ms (their drift: 1.03x), "
         "lies outside the rule's band (0.15-0.60 ms), 1.60x from the nearest edge (measured "
         "from the range's nearer end)."),
        (0.200e-3, 0.210e-3, "lies inside the rule's band (0.15-0.60 ms), 1.26x from the "
         "nearest edge (measured from the range's nearer end)."),
    ],
)  # fmt: skip
def test_the_c1_margin_spans_both_timings_widened_by_their_drift(first, again, words):
    record = _crossover(first)
    record.data["policy_step_again"] = {"cpu": {"median_s": again, "iqr_s": again / 50}}
    line = report.across_runs_line({verdicts.THIS_MACHINE: group_by_kind([record])})
    assert words in line


def test_the_saved_ledger_holds_the_table_every_rule_and_every_record(tmp_path):
    by_machine = verdicts.machines(include_this=False)
    json_path, md_path = report.save(by_machine, tmp_path)
    text = md_path.read_text()
    table, rules, records = text.split("\n## ")
    assert table.startswith("# Claims ledger") and "| C1 |" in table
    assert rules.startswith("Each claim's rule") and text.count("Rule: ") == len(claims.CLAIMS)
    assert records.startswith("Every record") and "bench." in records
    assert json_path.parent == tmp_path


@given(st.floats(0.2, 5.0), st.floats(0.5, 2.0))
def test_c1s_cpu_verdict_and_its_drift_margin_never_disagree(step_ms, drift):
    """10 printed "did not hold" for C1's CPU half above a line saying notebook 00's drift
    would carry the step across the band's edge. Both now read the same widened range."""
    first = {"median_s": step_ms * 1e-4, "iqr_s": step_ms * 1e-6}
    again = {"median_s": step_ms * drift * 1e-4, "iqr_s": step_ms * 1e-6}
    record = _crossover(first["median_s"])
    record.data["policy_step"]["cpu"] = first
    record.data["policy_step_again"] = {"cpu": again}
    by_machine = {verdicts.THIS_MACHINE: group_by_kind([record])}
    line = report.across_runs_line(by_machine)
    status = next(r for r in verdicts.rows(by_machine) if r["claim"] == "C1-CPU")["status"]
    if "would carry it across" in line or "across an edge of" in line:
        assert status == Status.NO_CLEAR_EFFECT.value
    elif "outside" in line:
        assert status == Status.NOT_HELD.value
    else:
        assert status in (Status.HELD.value, Status.NO_CLEAR_EFFECT.value)
