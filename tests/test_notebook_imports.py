"""Notebooks import from the package's top and from their own report module, nothing deeper.

A notebook that reaches into ``hetero_tutorial.rl.ppo.trainer`` ties the learner to a file
layout the package may change; the top level (``hetero_tutorial/__init__.py``) is the one
face the series shows, and each notebook has one report module of its own, named
``hetero_tutorial.notebook.<topic>_report``.
"""

import ast
from pathlib import Path

import nbformat
import pytest

import hetero_tutorial

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
REPORTS = sorted(p.stem for p in (ROOT / "hetero_tutorial" / "notebook").glob("*_report.py"))


def _imports(path: Path) -> list[tuple[str, str, str | None]]:
    """``(module, name, alias)`` of every ``from hetero_tutorial... import`` in the code cells."""
    found = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import):
                found += [(a.name, "", a.asname) for a in node.names if "hetero_tutorial" in a.name]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hetero_"):
                found += [(node.module, a.name, a.asname) for a in node.names]
    return found


def _report_of(path: Path) -> list[str]:
    return [
        name
        for module, name, _ in _imports(path)
        if module == "hetero_tutorial.notebook" and name.endswith("_report")
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_imports_the_top_and_its_report_module_only(path):
    top = set(hetero_tutorial.__all__)
    for module, name, alias in _imports(path):
        if module == "hetero_tutorial":
            assert name in top, f"{name} is not a name of the package's top"
            continue
        if module == "hetero_tutorial.notebook" and name in REPORTS:
            assert alias == "report", f"import its report module as `report`, not {alias!r}"
            continue
        hint = (
            f"import {name} from the package's top: from hetero_tutorial import {name}"
            if name in top
            else f"give {name} a name at the package's top (hetero_tutorial/__init__.py)"
        )
        pytest.fail(f"deep import `from {module} import {name}`: {hint}")


def test_each_notebook_has_one_report_module_and_each_report_one_notebook():
    owners = {path.name: _report_of(path) for path in NOTEBOOKS}
    assert all(len(found) == 1 for found in owners.values()), owners
    used = [found[0] for found in owners.values()]
    assert sorted(used) == REPORTS, "every report module belongs to exactly one notebook"


def test_the_checker_sees_a_deep_import(tmp_path):
    """The parser itself: a deep import of a top-level name is found, and named as such."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("from hetero_tutorial.rl.ppo.config import PPOConfig")
    ]
    path = tmp_path / "99_probe.ipynb"
    nbformat.write(notebook, path)
    assert _imports(path) == [("hetero_tutorial.rl.ppo.config", "PPOConfig", None)]
    with pytest.raises(pytest.fail.Exception, match="from hetero_tutorial import PPOConfig"):
        test_a_notebook_imports_the_top_and_its_report_module_only(path)


SHOWN = {
    "01": ["gae", "ppo_loss", "PPOLearner.update", "PPOLearner.gradient_step"],
    "03": ["RolloutStorage.flat_batch", "PPOTrainer.iteration"],
    "04": ["DDPGLearner.update", "DDPGLearner.act"],
    "06": ["LagSchedule.ready", "LagSchedule.keeps", "RolloutWorker.run"],
    "07": ["BatchedCartPole._advance", "BatchedCartPole.step"],
    "08": ["BatchedCartPole.step"],
}
"""The mechanism each notebook shows with ``source()``: the code that runs, not a copy."""

ALGORITHM_LINES = {
    "ppo_loss": ["ratio.clamp(1 - clip_coef, 1 + clip_coef)", "torch.max(", "entropy.mean()"],
    "PPOLearner.gradient_step": [
        "ppo_loss(",
        "torch.autograd.grad(loss",
        "clip_norm_(",
        "self.optimizer.step(",
    ],
    "DDPGLearner.update": [
        "self.critic_target(batch.next_obs, self.actor_target(batch.next_obs))",
        "F.mse_loss(self.critic(batch.obs, batch.action), td_target)",
        "-self.critic(batch.obs, self.actor(batch.obs)).mean()",
        "self.critic_optimizer.step(",
        "self.actor_optimizer.step(",
        ".lerp_(",
    ],
}
"""What the source a notebook shows must hold: the algorithm's own lines (a wrapper that
calls a compiled piece would show none of them)."""


@pytest.mark.parametrize("number", sorted(SHOWN))
def test_a_notebook_shows_its_mechanism_with_source(number):
    (path,) = [p for p in NOTEBOOKS if p.name.startswith(number)]
    code = "\n".join(
        c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
    )
    for shown in SHOWN[number]:
        assert f"source({shown})" in code, f"{path.name} should show {shown}"


@pytest.mark.parametrize("shown", sorted(ALGORITHM_LINES))
def test_the_source_shown_holds_the_algorithms_own_lines(shown):
    from hetero_tutorial.notebook.code import source

    owner, _, attribute = shown.partition(".")
    obj = getattr(hetero_tutorial, owner)
    rendered = source(getattr(obj, attribute) if attribute else obj).data
    for line in ALGORITHM_LINES[shown]:
        assert line in rendered, f"source({shown}) should show {line!r}"
