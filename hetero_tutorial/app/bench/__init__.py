"""The benchmarks behind ``python -m hetero_tutorial bench NAME``, one module each.

A benchmark module in this package defines:

* ``add_arguments(parser)``: its command-line options;
* ``run(args) -> dict``: runs the measurement and returns the record's fields;
* optionally ``RECORD_TAG``: the option whose value names the record file, for a
  kind saved once per setting (``bench.ddpg.tensor.json``, ``bench.ppo.hybrid.json``),
  as the notebooks save them, so that one setting's record does not replace another's;

and its docstring's first line is its help text. The command line adds
``--json PATH`` and writes the fields as a :class:`~hetero_tutorial.core.results.Record`
of kind ``bench.NAME`` with provenance. Notebooks call the same functions the
modules call, through the package API.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def benchmarks() -> dict[str, ModuleType]:
    """Every benchmark module, by its command-line name (``buffers``, ``ppo``, ...)."""
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            found[info.name] = importlib.import_module(f"{__name__}.{info.name}")
    return found
