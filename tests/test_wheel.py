"""What ``pip install .`` installs: the package a learner uses, and none of the repository's
tools (``tools/docs/``: the README's tables, the cards, the book, the instructor's sheet).

The wheel is built as pip builds it, from a copy of the checkout (a stale ``build/lib/``
in the checkout would otherwise slip old modules into it), and its file list read; then
the learner's commands are imported from the unpacked wheel alone, with no ``tools/`` in
reach.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools" / "docs"
LEARNERS = (
    "hetero_tutorial/app/cli.py",
    "hetero_tutorial/app/doctor.py",
    "hetero_tutorial/app/runner.py",
    "hetero_tutorial/app/calibration.py",
    "hetero_tutorial/app/run_times.py",
    "hetero_tutorial/app/words.py",
    "hetero_tutorial/app/fill_ledger.py",
    "hetero_tutorial/app/bench/__init__.py",
)
"""What a learner or an instructor runs from the installed package: doctor, run, bench,
calibration, and the recorded run times doctor scales."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel pip builds from a copy of the checkout (no network, no build isolation)."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("hetero_tutorial", "tools", "tests"):  # tools and tests: to be left out
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "--wheel-dir", str(base / "dist"), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (built,) = (base / "dist").glob("hetero_tutorial-*.whl")
    return built


def test_the_wheel_holds_the_package_and_no_publishing_code(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    outside = sorted(n for n in names if not n.startswith(("hetero_tutorial/", "hetero_tutorial-")))
    assert not outside, f"the wheel holds files outside the package: {outside[:10]}"
    press = {p.stem for p in TOOLS.glob("*.py")} - {"__init__", "__main__"}
    shipped = sorted(n for n in names if n.endswith(".py") and Path(n).stem in press)
    assert not shipped, f"publishing modules in the wheel: {shipped}"
    missing = [name for name in LEARNERS if name not in names]
    assert not missing, f"the wheel lacks what a learner runs: {missing}"
    package = {
        str(p.relative_to(ROOT))
        for p in (ROOT / "hetero_tutorial").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert package <= set(names), sorted(package - set(names))[:10]


def test_the_learners_commands_import_from_the_wheel_alone(wheel: Path, tmp_path: Path):
    """doctor, run and bench import from the unpacked wheel, in a folder with no tools/."""
    zipfile.ZipFile(wheel).extractall(tmp_path / "site")
    probe = (
        "import hetero_tutorial, hetero_tutorial.app.doctor, hetero_tutorial.app.runner\n"
        "from hetero_tutorial.app import cli\n"
        "cli.build_parser().parse_args(['doctor'])\n"
        "print(hetero_tutorial.__file__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().startswith(str(tmp_path / "site")), done.stdout
