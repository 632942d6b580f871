"""The notebook runner's records name the command that made them; run-time totals say what
they leave out."""

import json
from pathlib import Path

import pytest

from hetero_tutorial.app import doctor, run_times, runner
from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError

SERIES = ["00_a.ipynb", "01_b.ipynb", "06_c.ipynb"]


def _run_times(seconds):
    machine = {"cpu_model": "Test CPU", "cpu_logical_cores": 2, "accelerator": None}
    provenance = {"fingerprint": machine, "date": "2026-12-01T00:00:00+00:00", "command": "t",
                  "quick": False}  # fmt: skip
    data = {"mode": "full", "notebook_seconds": seconds, "calibration_units_per_s": 2.0}
    return results.Record("run.times", data, provenance)


def test_run_command_is_the_command_line_that_ran():
    assert runner.run_command() == "python -m hetero_tutorial run"
    assert runner.run_command(True, ["00", "03"], Path("out")) == (
        "python -m hetero_tutorial run --quick --only 00 03 --out out"
    )


def test_a_partial_reference_run_is_refused_before_anything_runs(monkeypatch):
    monkeypatch.setattr(runner, "calibrate", lambda: pytest.fail("nothing may run"))
    with pytest.raises(UsageError, match="must hold every notebook: drop --only"):
        runner.run_notebooks(only=["00"], reference=True)


def test_the_run_times_record_names_the_runner_command(monkeypatch, tmp_path):
    monkeypatch.setenv(runner.QUICK_ENV_VAR, "1")  # the runner sets it; restored afterwards
    monkeypatch.setattr(runner, "calibrate", lambda: 1.0)
    monkeypatch.setattr(runner, "execute_notebook", lambda path, out, progress: (1.0, [], 9))
    monkeypatch.setattr(
        runner.ledger_report, "save", lambda: (tmp_path / "l.json", tmp_path / "l.md")
    )
    monkeypatch.setattr(results, "RESULTS_DIR", tmp_path)
    assert runner.run_notebooks(quick=True, only=["00"], out=tmp_path / "nb") == 0
    saved = json.loads((tmp_path / "quick" / "run.times.json").read_text())
    assert saved["printed_words"] == {"00_devices_and_timing.ipynb": 9}
    assert saved["provenance"]["command"] == (
        f"python -m hetero_tutorial run --quick --only 00 --out {tmp_path / 'nb'}"
    )


def test_run_time_totals_sum_the_series_and_name_the_notebooks_not_recorded(monkeypatch):
    monkeypatch.setattr(run_times, "series_notebooks", lambda: SERIES)
    runs = [_run_times({"00_a.ipynb": 60.0, "01_b.ipynb": 120.0}),
            _run_times({"00_a.ipynb": 80.0, "01_b.ipynb": 100.0, "06_c.ipynb": 30.0})]  # fmt: skip
    assert run_times.series_total(runs) == (70.0 + 110.0 + 30.0, "")
    assert run_times.series_total(runs[:1]) == (180.0, "2 of 3 notebooks; 06 not recorded")
    monkeypatch.setattr(doctor, "run_times_by_machine", lambda: {("m", "full"): runs[:1]})
    (estimate,) = doctor._expected_run_times(rate=1.0)
    assert estimate["reference_seconds"] == 180.0 and estimate["expected_seconds_here"] == 360.0
    assert estimate["notebooks_note"] == "2 of 3 notebooks; 06 not recorded"
