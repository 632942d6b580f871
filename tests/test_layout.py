"""The package's folders form layers: each imports only the folders below it, and no module
imports itself back through others (an import cycle)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hetero_tutorial"
LAYERS = ("core", "rl", "profiling", "studies", "allocator", "ledger", "notebook", "app")
"""The folders from the ground up: a folder may import its own modules and those of the
folders before it, never one after it."""
MAX_MODULE_LINES = 450


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> set[str]:
    """The package's modules that ``name`` imports (anywhere in its body, lazily too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                found.add(target)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _folder(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_folder_is_a_known_layer():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(LAYERS)


def test_no_import_cycles():
    state: dict[str, str] = {}
    cycles = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for target in sorted(GRAPH[name]):
            if state.get(target) == "open":
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[name] = "done"

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_each_folder_imports_only_the_layers_below_it():
    wrong = []
    for name, targets in GRAPH.items():
        here = _folder(name)
        if here is None:
            continue
        allowed = set(LAYERS[: LAYERS.index(here) + 1])
        for target in targets:
            there = _folder(target)
            if there is not None and there not in allowed:
                wrong.append(f"{name} ({here}) imports {target} ({there})")
    assert not wrong, "\n".join(wrong)


def test_core_and_rl_stand_alone():
    """The ground imports no other folder; the algorithms import only the ground."""
    for name, targets in GRAPH.items():
        if _folder(name) == "core":
            assert {_folder(t) for t in targets} <= {"core"}, name
        if _folder(name) == "rl":
            assert {_folder(t) for t in targets} <= {"core", "rl"}, name


def test_the_checker_sees_a_cycle_and_a_layer_violation(tmp_path):
    """The graph builder itself: a relative import and an upward import are both resolved."""
    path = tmp_path / "ppo.py"
    path.write_text("from ..core import timing\nfrom hetero_tutorial.app import cli\n")
    found = _imports("hetero_tutorial.rl.ppo", path)
    assert {"hetero_tutorial.core.timing", "hetero_tutorial.app.cli"} <= found


def test_modules_stay_short():
    long = {
        name: lines
        for name, path in MODULES.items()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by job): {long}"


def test_the_top_level_names_resolve_lazily():
    import subprocess
    import sys

    import hetero_tutorial

    for name in hetero_tutorial.__all__:
        assert getattr(hetero_tutorial, name) is not None, name
    # importing the algorithms alone (a worker process does) loads no plotting library
    probe = "import sys, hetero_tutorial.rl.ppo.runs; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
