"""The options of one DDPG run, written once: every command that trains DDPG reads them here.

``bench ddpg`` (one buffer design, seed by seed), ``bench ddpg_placements`` (one run per
placement) and ``bench compile`` (its threads, which its DDPG run trains with) take the
same options with one spelling and one type: ``--buffer``, ``--hidden``, ``--batch-size``,
``--steps``, ``--learning-starts`` and ``--threads``. Their defaults are
:class:`DDPGConfig`'s own (and one thread, as :func:`~hetero_tutorial.rl.ddpg.runs.train`
runs), unless a command names its own. :func:`add_ddpg_arguments` adds them to a command's
parser; :func:`ddpg_config_from` reads them back as the :class:`DDPGConfig` the run trains
with.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping

from hetero_tutorial.rl.buffers import DESIGNS
from hetero_tutorial.rl.ddpg.config import DDPGConfig

CONFIG_FIELDS = {
    "buffer": "buffer",
    "hidden": "hidden",
    "batch_size": "batch_size",
    "steps": "total_steps",
    "learning_starts": "learning_starts",
}
"""Each option that sets a field of :class:`DDPGConfig`, and the field it sets."""

THREADS = 1
"""``--threads``' default: one PyTorch CPU thread, as
:func:`~hetero_tutorial.rl.ddpg.runs.train` runs by default."""

HELP: dict[str, str | None] = {
    "buffer": None,
    "hidden": "units per layer",
    "batch_size": None,
    "steps": "env steps",
    "learning_starts": None,
    "threads": "PyTorch CPU threads",
}
"""One help text per option (None: argparse shows none)."""

ALL = (*CONFIG_FIELDS, "threads")


def add_ddpg_arguments(
    parser: argparse.ArgumentParser,
    only: Iterable[str] = ALL,
    helps: Mapping[str, str] | None = None,
    **defaults: object,
) -> None:
    """Add the DDPG run options (``only`` those named) to ``parser``.

    ``defaults``: a command's own default where its run differs (``bench ddpg_placements``
    times pattern A, the transition buffer, for 3,000 steps per placement); every other
    option keeps :class:`DDPGConfig`'s default. ``helps``: a command's own help text where
    the option means more there (its steps are per placement).
    """
    standard = DDPGConfig()
    helps = helps or {}
    unknown = (set(defaults) | set(helps)) - set(only)
    if unknown:  # a misspelt name would otherwise leave the option at its standard default
        raise ValueError(f"no such DDPG option among {sorted(only)}: {sorted(unknown)}")
    for name in only:
        field = CONFIG_FIELDS.get(name)
        default = defaults.get(name, getattr(standard, field) if field else THREADS)
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            type=str if name == "buffer" else int,
            choices=DESIGNS if name == "buffer" else None,
            default=default,
            help=helps.get(name, HELP[name]),
        )


def ddpg_config_from(args: argparse.Namespace) -> DDPGConfig:
    """The :class:`DDPGConfig` of the options a parser built by :func:`add_ddpg_arguments`
    read (the fields it has no option for at their defaults)."""
    given = vars(args)
    return DDPGConfig(
        **{field: given[name] for name, field in CONFIG_FIELDS.items() if name in given}
    )
