"""The package's folders form layers: each imports only the folders below it, and no module
imports itself back through others (an import cycle). Inside rl/, each concept is a room
with its own rule (PPO and DDPG never import each other; PPO's modules read in the order an
iteration runs); file names say what a module is, once in the package. Modules stay short
(a cap, and the few exceptions named with their reasons), every name the package's top
offers resolves, and the checker itself is tested on a small package of its own."""

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hetero_tutorial"
LAYERS = ("core", "speed", "rl", "profiling", "studies", "allocator", "ledger", "notebook", "app")
"""The folders from the ground up: a folder may import its own modules and those of the
folders before it, never one after it."""
MAX_MODULE_LINES = 450
"""Lines a module may hold: one job read in one sitting. A module past it is split by job
(never cut to fit: the size follows the split), or named in :data:`LONG_MODULES`."""
LONG_MODULES = {
    "notebook/profile_report.py": "notebook 02's one report (one per notebook): the tables "
    "and sentences of its four profilers, the paused against non-blocking sampling, and C5",
    "rl/envs/batched.py": "two batched environments and the base they share (reset, same-step "
    "autoreset, time limits, action checks), each matching Gymnasium's step for step, and "
    "their docstrings of what each step returns, eagerly and compiled",
    "studies/overlap.py": "notebook 06's study: the seed-by-seed driver of the overlapped and "
    "sequential runs, the rows and summaries it writes, and the sequential timeline",
    "profiling/stacks.py": "one job, long for its data: the table of transfer patterns, each "
    "with its reason, and the parser, phase finder and shares that read samples by it",
    "profiling/pyspy.py": "py-spy's whole life cycle: finding it, launching a run in its own "
    "process group, ending it, recording and checking its samples, splitting them per run",
    "ledger/rules.py": "one short rule per claim of the article (C1-C13), with the vocabulary "
    "of verdicts they share",
}
"""The modules allowed past :data:`MAX_MODULE_LINES`, by path under the package, and why."""
MAX_LONG_MODULE_LINES = 600
"""Even a named exception stops here: its reason explains a long job, not a licence to grow."""


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


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    """Every import cycle a depth-first walk of ``graph`` meets, as "a -> b -> a"."""
    state: dict[str, str] = {}
    cycles = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for target in sorted(graph.get(name, ())):
            if state.get(target) == "open":
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return cycles


def _layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a folder later in :data:`LAYERS` than the importing module's own."""
    wrong = []
    for name, targets in graph.items():
        here = _folder(name)
        if here is None:
            continue
        allowed = set(LAYERS[: LAYERS.index(here) + 1])
        for target in targets:
            there = _folder(target)
            if there is not None and there not in allowed:
                wrong.append(f"{name} ({here}) imports {target} ({there})")
    return wrong


def test_no_import_cycles():
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_each_folder_imports_only_the_layers_below_it():
    wrong = _layer_violations(GRAPH)
    assert not wrong, "\n".join(wrong)


def test_the_checker_sees_every_kind_of_import_a_cycle_and_a_layer_violation(tmp_path):
    """The graph builder itself: relative imports (two levels up, and beside) and an absolute
    one made lazily inside a function all resolve to the package's modules; a cycle and an
    upward import are found."""
    path = tmp_path / "learner.py"
    path.write_text(
        "from ...core import timing\n"
        "from .config import PPOConfig\n"
        "def later():\n"
        "    import hetero_tutorial.app.cli\n"
    )
    found = _imports("hetero_tutorial.rl.ppo.learner", path)
    seen = {
        "hetero_tutorial.core.timing",
        "hetero_tutorial.rl.ppo.config",
        "hetero_tutorial.app.cli",
    }
    assert seen <= found, found
    upward = {"hetero_tutorial.rl.ppo.learner": found}
    assert _layer_violations(upward) == [
        "hetero_tutorial.rl.ppo.learner (rl) imports hetero_tutorial.app.cli (app)"
    ]
    loop = {"hetero_tutorial.core.a": {"hetero_tutorial.core.b"},
            "hetero_tutorial.core.b": {"hetero_tutorial.core.a"}}  # fmt: skip
    assert _cycles(loop) == [
        "hetero_tutorial.core.a -> hetero_tutorial.core.b -> hetero_tutorial.core.a"
    ]


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_modules_stay_short_but_the_named_exceptions():
    by_path = {str(path.relative_to(PACKAGE)): path for path in MODULES.values()}
    long = {
        name: lines
        for name, path in by_path.items()
        if (lines := _lines(path)) > MAX_MODULE_LINES and name not in LONG_MODULES
    }
    assert not long, (
        f"modules over {MAX_MODULE_LINES} lines: {long}. Split them by job, or name them in "
        "LONG_MODULES with the reason their one job runs long"
    )
    unknown = sorted(set(LONG_MODULES) - set(by_path))
    assert not unknown, f"LONG_MODULES names modules that are not there: {unknown}"
    counted = {name: _lines(by_path[name]) for name in LONG_MODULES}
    stale = {name: lines for name, lines in counted.items() if lines <= MAX_MODULE_LINES}
    assert not stale, f"back under {MAX_MODULE_LINES} lines: drop them from LONG_MODULES: {stale}"
    grown = {name: lines for name, lines in counted.items() if lines > MAX_LONG_MODULE_LINES}
    assert not grown, f"past even an exception's {MAX_LONG_MODULE_LINES} lines: split {grown}"


def test_the_top_level_names_resolve_and_load_lazily():
    """Every name the package's top offers is there, found in the module it names; and
    importing the algorithms alone (a worker process does) loads no plotting library."""
    probe = (
        "import sys, hetero_tutorial as h\n"
        "missing = [n for n in h.__all__ if getattr(h, n, None) is None]\n"
        "print(missing)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"top-level names that do not resolve: {done.stdout}"
    probe = "import sys, hetero_tutorial.rl.ppo.runs; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_core_speed_and_rl_stand_alone():
    """The ground imports no other folder; the speed door only the ground; the algorithms
    the ground and the door."""
    for name, targets in GRAPH.items():
        if _folder(name) == "core":
            assert {_folder(t) for t in targets} <= {"core"}, name
        if _folder(name) == "speed":
            assert {_folder(t) for t in targets} <= {"core", "speed"}, name
        if _folder(name) == "rl":
            assert {_folder(t) for t in targets} <= {"core", "speed", "rl"}, name


def test_rl_reaches_speed_only_through_its_door():
    """``rl/`` imports the speed door's names (``from hetero_tutorial.speed import ...``),
    never one of its modules; and no compile word of the door's appears in ``rl/``'s code."""
    through_a_module = sorted(
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        if _folder(name) == "rl"
        for target in targets
        if _folder(target) == "speed" and target != "hetero_tutorial.speed"
    )
    assert not through_a_module, "\n".join(through_a_module)
    words = ("cpu_forms", "GRAPH_MINIBATCHES", "GRAPH_STEPS", "gcd", "writes_in_place")
    found = sorted(
        f"{path.relative_to(PACKAGE)}:{number}: {word}"
        for path in (PACKAGE / "rl").rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for word in words
        if word in line
    )
    assert not found, "the speed door's words in rl/:\n" + "\n".join(found)


RL_ROOMS = {
    "envs": {"envs"},
    "": {"envs", ""},
    "ppo": {"envs", "", "ppo"},
    "ddpg": {"envs", "", "ddpg"},
    "overlapped": {"envs", "", "ppo", "overlapped"},
    "gail": {"envs", "", "ppo", "gail"},
}
"""Inside ``rl/``: what each folder may import besides ``core/`` ("": the modules directly in
``rl/``, i.e. nets, buffers, evaluation). PPO and DDPG never import each other; the
overlapped engine and GAIL run PPO's own code."""


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
    "rl/ppo rl/ddpg rl/gail": (
        "PPO and DDPG are shaped alike: config, learner, trainer, runs and options in both; "
        "GAIL's config and trainer too"
    ),
}
"""Where two modules may share a file name, and why (CONTRIBUTING.md's Layout says the same)."""


def _allowed(folders: list[str]) -> bool:
    """A bench module may share its benchmark's name; PPO's, DDPG's and GAIL's modules each
    other's."""
    others = [folder for folder in folders if folder != "app/bench"]
    return len(others) <= 1 or set(others) <= {"rl/ppo", "rl/ddpg", "rl/gail"}


def _layout() -> str:
    """CONTRIBUTING.md's Layout section, its whitespace folded."""
    text = (PACKAGE.parent / "CONTRIBUTING.md").read_text()
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return " ".join(section.split())


def test_no_two_modules_share_a_file_name_unless_the_layout_says_why():
    by_name: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            by_name.setdefault(path.name, []).append(str(path.parent.relative_to(PACKAGE)))
    shared = {name: f for name, f in by_name.items() if len(f) > 1 and not _allowed(f)}
    assert not shared, f"file names shared by several modules (rename one): {shared}"
    layout = _layout()
    for reason in SHARED_NAMES_ALLOWED.values():
        assert reason in layout, f"CONTRIBUTING.md's Layout should say why: {reason}"


def test_the_top_level_modules_go_by_their_file_names():
    """No aliases: ``hetero_tutorial.trials`` is ``allocator/trials.py``, as unique names allow."""
    import hetero_tutorial

    aliased = {n: m for n, m in hetero_tutorial._MODULES.items() if m.rsplit(".", 1)[-1] != n}
    assert not aliased, aliased


def test_the_layout_section_names_every_folder_and_the_size_caps():
    layout = _layout()
    folders = sorted(
        str(path.relative_to(PACKAGE)).rsplit("/", 1)[-1]
        for path in PACKAGE.rglob("*")
        if path.is_dir() and path.name != "__pycache__" and any(path.glob("*.py"))
    )
    unnamed = [folder for folder in folders if f"{folder}/" not in layout]
    assert not unnamed, f"CONTRIBUTING.md's Layout names no folder {unnamed}"
    for room in ("ppo", "overlapped"):
        modules = {p.stem for p in (PACKAGE / "rl" / room).glob("*.py")} - {"__init__"}
        missing = sorted(m for m in modules if m not in layout)
        assert not missing, f"CONTRIBUTING.md's Layout does not name rl/{room}/'s {missing}"
    caps = (f"{MAX_MODULE_LINES} lines", "LONG_MODULES", f"past {MAX_LONG_MODULE_LINES}")
    assert all(cap in layout for cap in caps), "CONTRIBUTING.md's Layout should state the size caps"


TOOLS = PACKAGE.parent / "tools"
"""The repository's tools (``tools/docs/``: the README's tables, the cards, the book, the
instructor's sheet): beside the package, outside its wheel (tests/test_wheel.py)."""


def _top_level_imports(path: Path) -> set[str]:
    """The first part of every absolute name ``path`` imports, anywhere in its body."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_package_never_imports_the_repositorys_tools():
    """The tools import the package; the package never imports them: no wheel holds
    ``tools/``, so such an import would fail on every learner's machine."""
    wrong = sorted(
        str(path.relative_to(PACKAGE.parent))
        for path in MODULES.values()
        if "tools" in _top_level_imports(path)
    )
    assert not wrong, f"the package imports the repository's tools: {wrong}"


def test_the_tools_stay_short_and_the_layout_names_them():
    """The size cap holds in ``tools/`` too (no exceptions there), and CONTRIBUTING.md's
    Layout names the folder."""
    modules = sorted(TOOLS.rglob("*.py"))
    assert modules, "no tools/ beside the package"
    long = {
        str(path.relative_to(TOOLS)): lines
        for path in modules
        if (lines := _lines(path)) > MAX_MODULE_LINES
    }
    assert not long, f"tools over {MAX_MODULE_LINES} lines: {long}. Split them by job"
    assert "tools/docs/" in _layout(), "CONTRIBUTING.md's Layout names no folder tools/docs/"
