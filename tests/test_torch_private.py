"""The package's private PyTorch names are the ones speed/torch_private.py lists, no more and no
fewer, each still present in this PyTorch, whose release the list names."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import torch

from hetero_tutorial.speed.torch_private import CHECKED_ON, PRIVATE_NAMES

PACKAGE = Path(__file__).resolve().parents[1] / "hetero_tutorial"


def _is_private(dotted: str) -> bool:
    """Whether a dotted name has a part with one leading underscore (``__version__`` has two)."""
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def _dotted(node: ast.expr) -> str | None:
    """``torch.a.b`` for an attribute chain rooted at the name ``torch``; None otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not (isinstance(node, ast.Name) and node.id == "torch"):
        return None
    return ".".join(["torch", *reversed(parts)])


def private_names(source: str) -> set[str]:
    """The private PyTorch names a module's code writes: imported (``from torch._x import y``
    gives ``torch._x.y``, ``import torch._x`` gives ``torch._x``) or reached as an attribute
    chain from ``torch`` (the whole chain: ``torch._dynamo.utils.counters``)."""
    tree = ast.parse(source)
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("torch.")}
        elif isinstance(node, ast.Attribute) and id(node) not in inner:
            found.add(_dotted(node) or "")
    return {name for name in found if name.startswith("torch.") and _is_private(name)}


def test_the_reader_finds_each_way_of_writing_a_private_name():
    source = (
        "import torch\nimport torch._dynamo\nfrom torch._a.b import c\n"
        "from torch.utils import data\nx = torch._dynamo.utils.counters['x']\n"
        "torch.compiler.reset()\nprint(torch.__version__)\n"
    )
    assert private_names(source) == {
        "torch._dynamo",
        "torch._a.b.c",
        "torch._dynamo.utils.counters",
    }


def test_the_package_uses_the_private_names_listed_and_no_others():
    used: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in private_names(path.read_text()):
            used.setdefault(name, []).append(str(path.relative_to(PACKAGE)))
    unlisted = {name: where for name, where in used.items() if name not in PRIVATE_NAMES}
    assert not unlisted, (
        f"private PyTorch names not in speed/torch_private.py: {unlisted}. Use a public call, "
        "or list the name there with the reason no public call does its job"
    )
    stale = set(PRIVATE_NAMES) - set(used)
    assert not stale, f"listed in speed/torch_private.py but no longer used: drop {stale}"


def test_every_listed_name_is_in_this_pytorch_and_its_release_was_checked():
    for name in PRIVATE_NAMES:
        module, _, attribute = name.rpartition(".")
        try:
            found = importlib.import_module(name)
        except ImportError:
            found = getattr(importlib.import_module(module), attribute, None)
        assert found is not None, f"this PyTorch ({torch.__version__}) has no {name}"
    release = torch.__version__.split("+")[0]
    assert release in CHECKED_ON, (
        f"PyTorch {release} is not among the releases speed/torch_private.py was checked on "
        f"{CHECKED_ON}: run the tests on it, and add it there once they pass"
    )
