"""The benchmarks behind ``python -m hetero_tutorial bench NAME``, one module each.

A benchmark module in this package defines:

* ``add_arguments(parser)``: its command-line options;
* ``run(args) -> dict``: runs the measurement and returns the record's fields;
* optionally ``RECORD_TAG``: the option whose value names the record file, for a
  kind saved once per setting (``bench.ddpg.tensor.json``, ``bench.ppo.hybrid.json``),
  as the notebooks save them, so that one setting's record does not replace another's;
  or several options, whose values join with ``-`` (a switch adds its name when on:
  ``bench.profile.all-accelerator-native.json``);

and its docstring's first line is its help text. The command line adds
``--json PATH`` and writes the fields as a :class:`~hetero_tutorial.core.results.Record`
of kind ``bench.NAME`` with provenance. Notebooks call the same functions the
modules call, through the package API.

Starting one benchmark imports its module alone (:func:`load`): the list of every
benchmark with its help line is read from the modules' source (:func:`summary`), so
``bench ppo`` does not pay for the allocator's or the compiler's imports.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any


def names() -> list[str]:
    """Every benchmark's command-line name (``buffers``, ``ppo``, ...), importing none of them."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if info.name[0] != "_")


def summary(name: str) -> str:
    """A benchmark's docstring, read from its source without importing it (its help text)."""
    spec = importlib.util.find_spec(f"{__name__}.{name}")
    source = Path(spec.origin).read_text(encoding="utf-8")
    return ast.get_docstring(ast.parse(source)) or name


def load(name: str) -> ModuleType:
    """The module of one benchmark, imported (with what it needs, and nothing else)."""
    return importlib.import_module(f"{__name__}.{name}")


def benchmarks() -> dict[str, ModuleType]:
    """Every benchmark module, imported, by its command-line name."""
    return {name: load(name) for name in names()}


def record_tag(module: ModuleType, values: Mapping[str, Any]) -> str | None:
    """The tag that names a record of ``module``'s file, from its options' ``values`` (the
    parsed arguments, or the record's fields: they name the setting alike); None without
    ``RECORD_TAG``."""
    options = getattr(module, "RECORD_TAG", None)
    if options is None:
        return None
    parts = []
    for option in (options,) if isinstance(options, str) else options:
        value = values.get(option)
        if isinstance(value, bool):
            parts += [option] if value else []
        elif value is not None:
            parts.append(str(value))
    return "-".join(parts) or None
