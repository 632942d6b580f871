"""The set-up files agree: environment.yml mirrors pyproject.toml, CI runs the README command."""

import re
import sys
from pathlib import Path

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"torch": "pytorch"}
"""PyPI names whose conda-forge package has another name."""


def _normalise(requirement: str) -> str:
    return re.sub(r"\s+", "", requirement).lower()


def test_environment_yml_mirrors_pyproject_dependencies():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = set()
    for requirement in pyproject["project"]["dependencies"]:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)
        wanted.add(_normalise(CONDA_NAMES.get(name, name) + requirement[len(name) :]))
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {
        _normalise(dep)
        for dep in environment["dependencies"]
        if isinstance(dep, str) and not dep.startswith(("python", "pip"))
    }
    assert conda == wanted, (
        f"only in environment.yml: {conda - wanted}; only in pyproject: {wanted - conda}"
    )
    pip_section = next(dep["pip"] for dep in environment["dependencies"] if isinstance(dep, dict))
    assert "-e .[dev,atari,ray,mujoco]" in pip_section
    assert "conda-forge" in environment["channels"]


def test_setup_pins_torch_but_pyproject_leaves_the_range_open():
    constraints = (ROOT / "constraints.txt").read_text().splitlines()
    assert "torch==2.13.0" in constraints
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    torch_requirement = next(
        d for d in pyproject["project"]["dependencies"] if d.startswith("torch")
    )
    assert "==" not in torch_requirement


def test_ci_runs_the_test_command_the_readme_gives():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```\n(.*?)\n```", readme, re.M | re.S)
    assert blocks[:2] == ["make lab", "make test"], "README must give the two commands first"
    assert re.search(r"^make test$", (ROOT / ".ci" / "run").read_text(), re.M)


def test_the_readme_is_a_front_page_that_links_where_the_rest_lives():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150, "README.md is a front page: move detail to docs/"
    for page in ("docs/results.md", "docs/ray.md", "docs/workshop.md", "CONTRIBUTING.md"):
        assert page in readme and (ROOT / page).is_file(), page
    assert "No GPU needed" in readme.split("## ", 1)[0]  # said before the first section
