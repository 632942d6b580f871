"""The package's folders form layers: each imports only the folders below it, and no module
imports itself back through others (an import cycle). Inside rl/, each concept is a room
with its own rule (PPO and DDPG never import each other; PPO's modules read in the order an
iteration runs); file names say what a module is, once in the package."""

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


RL_ROOMS = {
    "envs": {"envs"},
    "": {"envs", ""},
    "ppo": {"envs", "", "ppo"},
    "ddpg": {"envs", "", "ddpg"},
    "overlapped": {"envs", "", "ppo", "overlapped"},
}
"""Inside ``rl/``: what each folder may import besides ``core/`` ("": the modules directly in
``rl/``, i.e. nets, flat, buffers, evaluation). PPO and DDPG never import each other; the
overlapped engine runs PPO's own code."""


def _rl_room(name: str) -> str | None:
    parts = name.split(".")
    if parts[:2] != ["hetero_tutorial", "rl"] or len(parts) < 3:
        return None
    return parts[2] if parts[2] in RL_ROOMS else ""


def test_the_folders_of_rl_import_only_what_their_room_may():
    wrong = []
    for name, targets in GRAPH.items():
        room = _rl_room(name)
        if room is None:
            continue
        for target in targets:
            there = _rl_room(target)
            if there is not None and there not in RL_ROOMS[room]:
                wrong.append(f"{name} (rl/{room}) imports {target} (rl/{there})")
    assert not wrong, "\n".join(wrong)


PPO_STEPS = ("config", "policy", "storage", "collectors", "advantages", "learner", "trainer")
"""PPO's modules in the order an iteration uses them (``runs`` measures trainers, after all)."""


def test_ppo_reads_in_the_order_an_iteration_runs():
    """Each of PPO's modules imports only the steps before it, so they read top to bottom."""
    order = [*PPO_STEPS, "runs", "options"]  # options: what a command line asks of a run
    found = {p.stem for p in (PACKAGE / "rl" / "ppo").glob("*.py")} - {"__init__"}
    assert found == set(order), f"rl/ppo/ holds {sorted(found)}; PPO_STEPS names the order"
    for index, step in enumerate(order):
        allowed = {f"hetero_tutorial.rl.ppo.{s}" for s in order[:index]}
        ppo = {
            t
            for t in GRAPH[f"hetero_tutorial.rl.ppo.{step}"]
            if t.startswith("hetero_tutorial.rl.ppo.")
        }
        assert ppo <= allowed, f"rl/ppo/{step}.py imports a later step: {sorted(ppo - allowed)}"


def test_no_file_in_rl_repeats_its_folders_name():
    """A folder says what its files are about (no rl/ppo/ppo_config.py), and a file directly in
    rl/ is not a folder in all but name (no rl/ppo_runs.py beside rl/ppo/)."""
    rl = PACKAGE / "rl"
    folders = {p.name for p in rl.iterdir() if p.is_dir() and p.name != "__pycache__"}
    wrong = [
        str(path.relative_to(PACKAGE))
        for path in rl.rglob("*.py")
        if any(path.stem.startswith(f"{folder}_") for folder in folders | {path.parent.name})
    ]
    assert not wrong, wrong


SHARED_NAMES_ALLOWED = {
    "app/bench": "named after the benchmark it runs (`bench NAME` runs app/bench/NAME.py)",
    "rl/ppo rl/ddpg": "PPO and DDPG are shaped alike: config, learner, trainer, runs in both",
}
"""Where two modules may share a file name, and why (README's Layout says the same)."""


def _allowed(folders: list[str]) -> bool:
    """A bench module may share its benchmark's name; PPO's and DDPG's modules each other's."""
    others = [folder for folder in folders if folder != "app/bench"]
    return len(others) <= 1 or set(others) == {"rl/ppo", "rl/ddpg"}


def test_no_two_modules_share_a_file_name_unless_the_readme_says_why():
    by_name: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            by_name.setdefault(path.name, []).append(str(path.parent.relative_to(PACKAGE)))
    shared = {name: f for name, f in by_name.items() if len(f) > 1 and not _allowed(f)}
    assert not shared, f"file names shared by several modules (rename one): {shared}"
    readme = " ".join((PACKAGE.parent / "README.md").read_text().split())
    for reason in SHARED_NAMES_ALLOWED.values():
        assert reason in readme, f"README's Layout should say why: {reason}"


def test_the_top_level_modules_go_by_their_file_names():
    """No aliases: ``hetero_tutorial.trials`` is ``allocator/trials.py``, as unique names allow."""
    import hetero_tutorial

    aliased = {n: m for n, m in hetero_tutorial._MODULES.items() if m.rsplit(".", 1)[-1] != n}
    assert not aliased, aliased
