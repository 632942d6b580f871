import contextlib
import io
import json
import os

import nbformat
import pytest
from tqdm import tqdm

from hetero_tutorial.app import cli
from hetero_tutorial.app.doctor import healthy, render
from hetero_tutorial.app.runner import EXECUTED_KEY, execute_notebook, notebook_paths
from hetero_tutorial.core import results
from hetero_tutorial.core.errors import UsageError
from hetero_tutorial.core.modes import quick_mode
from hetero_tutorial.profiling.pyspy import PySpyStatus


@pytest.fixture(scope="module")
def doctor_run(tmp_path_factory):
    """One doctor run (tens of seconds: calibration, py-spy, a first compile) for the tests
    that read its report: its exit status, what it printed and the JSON it wrote."""
    path = tmp_path_factory.mktemp("doctor") / "doctor.json"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = cli.main(["doctor", "--json", str(path)])
    return status, printed.getvalue(), json.loads(path.read_text())


# The tests that read one doctor run share an xdist group: one worker runs the doctor once.
@pytest.mark.xdist_group("doctor")
def test_doctor_reports_and_writes_json(doctor_run):
    status, text, report = doctor_run
    assert status == 0
    for word in ("Python", "PyTorch", "CPU", "Accelerator", "py-spy", "Calibration", "Threads",
                 "Ray", "Native", "Browser", "compile"):  # fmt: skip
        assert word in text
    labelled = [line for line in text.splitlines() if line.startswith("  ")]
    for label in ("Threads", "Ray", "Native", "Browser"):  # a label never runs into its text
        assert any(line.startswith(f"  {label} ") for line in labelled), label
    overrun = [line for line in labelled if line[14:15] != " " and "written to" not in line]
    assert not overrun, f"a label past its 12 columns runs into its text: {overrun}"
    assert report["calibration_units_per_s"] > 0
    assert report["gymnasium_check"] == "ok"


def test_doctor_classroom_checks_say_what_caps_the_cores_and_who_owns_rays_folder(
    monkeypatch, tmp_path
):
    from hetero_tutorial.app import doctor

    monkeypatch.setenv(doctor.THREADS_VARIABLE, "1")
    assert "HETERO_TUTORIAL_THREADS=1 caps what the notebooks use" in doctor.threads_check()
    monkeypatch.delenv(doctor.THREADS_VARIABLE)
    assert "set HETERO_TUTORIAL_THREADS=N" in doctor.threads_check()
    folder = tmp_path / "ray"
    folder.mkdir(mode=0o500)  # as if another user had made it: not writable here
    monkeypatch.setattr(doctor.tempfile, "gettempdir", lambda: str(tmp_path))
    if os.geteuid() != 0:  # root writes anywhere
        assert "belongs to another user" in doctor.ray_check()
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    assert "make setup-browser" in doctor.browser_check()

    def without_native(native=False):
        return PySpyStatus(not native, "no native frames")

    monkeypatch.setattr(doctor, "py_spy_status", without_native)
    assert doctor.native_check() == "not here (no native frames): 02 samples Python frames only"


@pytest.mark.xdist_group("doctor")
def test_doctor_is_unhealthy_when_the_accelerator_is_broken(doctor_run):
    _, _, report = doctor_run
    assert healthy(report)
    report["accelerator_check"] = "FAILED: no kernel image"
    assert not healthy(report)
    assert "Python" in render(report)


def test_bench_writes_a_record_with_provenance(tmp_path):
    path = tmp_path / "crossover.json"
    argv = ["bench", "crossover", "--widths", "8", "--batch-sizes", "1", "--repeats", "1"]
    assert cli.main([*argv, "--json", str(path)]) == 0
    record = results.load(path)
    assert record.kind == "bench.crossover"
    assert record.provenance["command"].startswith("python -m hetero_tutorial bench crossover")
    assert record.data["grid"][0]["width"] == 8


def test_usage_errors_exit_2_with_one_line(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", "--only", "99"])
    assert exit_info.value.code == 2
    assert "no notebook numbered 99" in capsys.readouterr().err


def test_notebooks_are_found_in_order():
    names = [path.name for path in notebook_paths()]
    assert names == sorted(names) and names[0].startswith("00_")
    assert [p.name for p in notebook_paths(["0"])] == [names[0]]


def test_a_notebook_run_names_the_notebook_in_its_kernel_only(tmp_path):
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "from hetero_tutorial.core import results\nprint(results.provenance()['command'])"
            )
        ]
    )
    path = tmp_path / "07_example.ipynb"
    nbformat.write(notebook, path)
    with tqdm(disable=True) as progress:
        seconds, cells, printed = execute_notebook(path, tmp_path / "out", progress)
    assert seconds > 0 and [(c["cell"], c["section"]) for c in cells] == [(0, "the opening")]
    assert printed >= 6  # the command it printed, counted as words a learner reads
    executed = nbformat.read(tmp_path / "out" / path.name, as_version=4)
    assert "notebooks/07_example.ipynb" in executed.cells[0].outputs[0]["text"]
    mode = "quick" if quick_mode() else "full"
    assert executed.metadata[EXECUTED_KEY] == {"mode": mode}  # the book says which run it shows
    assert results.NOTEBOOK_ENV_VAR not in os.environ  # the runner's own records name the runner


def test_bench_keeps_one_reference_record_per_setting(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "REFERENCE_DIR", tmp_path)
    tiny = ["--steps", "300", "--learning-starts", "100", "--batch-size", "32", "--hidden", "8"]
    for buffer in ("transition", "tensor"):
        assert cli.main(["bench", "ddpg", "--buffer", buffer, *tiny, "--reference"]) == 0
    written = sorted(path.name for path in tmp_path.rglob("*.json"))
    assert written == ["bench.ddpg.tensor.json", "bench.ddpg.transition.json"]


def test_bench_from_python_raises_usage_errors_instead_of_exiting():
    with pytest.raises(UsageError, match="learning_starts"):
        cli.bench(["ddpg", "--steps", "300", "--learning-starts", "250"])


def _run_times(mode, seconds, cells, date="2026-12-01T00:00:00+00:00", machine="Test CPU"):
    machine = {"cpu_model": machine, "cpu_logical_cores": 2, "accelerator": None}
    provenance = {"fingerprint": machine, "date": date, "command": "t", "quick": mode == "quick"}
    data = {"mode": mode, "notebook_seconds": {"03_x.ipynb": seconds},
            "cell_seconds": {"03_x.ipynb": cells}, "calibration_units_per_s": 1.0}  # fmt: skip
    return results.Record("run.times", data, provenance)


def test_the_cards_run_time_is_one_line_each_machines_newest_run():
    from tools.docs import cards

    sweep = {"cell": 14, "section": "4. A width sweep", "seconds": 50.0}
    fit = {"cell": 4, "section": "1. Side by side", "seconds": 10.0}
    dated = enumerate((8, 30, 9), 1)  # the newest, 9 s, is the machine's figure
    runs = [_run_times("quick", s, [fit], date=f"2026-01-0{i}") for i, s in dated]
    runs.append(_run_times("full", 80.0, [{**sweep, "seconds": 60.0}, fit], machine="other"))
    runs.append(_run_times("full", 70.0, [sweep, {**fit, "seconds": 12.0}]))
    line = cards.run_time_line("03_x.ipynb", runs)
    assert line == (
        "**Run time**: 9 s quick, 70-80 s full on the recorded machines (yours: "
        "`python -m hetero_tutorial doctor`)."
    )
    assert "not recorded yet" in cards.run_time_line("09_new.ipynb", runs)
