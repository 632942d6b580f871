"""Starting one benchmark imports what it needs, not every benchmark's modules.

Each check runs in a fresh interpreter: this process has imported everything already.
"""

import json
import subprocess
import sys

import pytest

from hetero_tutorial.app import bench

REPORT = """
import json, sys
from hetero_tutorial.app import cli
try:
    cli.main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""

HEAVY = ("torch._dynamo", "torch._inductor", "sympy", "matplotlib")
"""What no benchmark's start should import unless that benchmark needs it."""


def imported(argv: list[str]) -> set[str]:
    done = subprocess.run([sys.executable, "-c", REPORT.format(argv=argv)],
                          capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def benches_in(modules: set[str]) -> set[str]:
    return {m.rsplit(".", 1)[1] for m in modules if m.startswith("hetero_tutorial.app.bench.")}


@pytest.mark.parametrize("name", ["ppo", "crossover"])
def test_starting_one_benchmark_imports_its_module_alone(name):
    modules = imported(["bench", name, "--help"])
    assert benches_in(modules) == {name}
    assert not any(m.startswith("hetero_tutorial.allocator") for m in modules)
    assert not [m for m in HEAVY if m in modules]


def test_the_list_of_benchmarks_imports_none_of_them():
    modules = imported(["bench", "--help"])
    assert benches_in(modules) == set() and "torch" not in modules
    assert {"allocator", "ppo", "profile"} <= set(bench.names())
    assert bench.summary("profile").startswith("PPO under py-spy")


def test_the_record_tag_joins_the_options_a_module_names():
    class Profile:
        RECORD_TAG = ("placement", "native")

    class Ddpg:
        RECORD_TAG = "buffer"

    assert bench.record_tag(Profile, {"placement": "hybrid", "native": False}) == "hybrid"
    assert bench.record_tag(Profile, {"placement": "hybrid", "native": True}) == "hybrid-native"
    assert bench.record_tag(Ddpg, {"buffer": "tensor"}) == "tensor"
    assert bench.record_tag(object, {"buffer": "tensor"}) is None
