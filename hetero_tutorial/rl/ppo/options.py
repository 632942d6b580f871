"""The options of one PPO run, written once: every command that trains PPO reads them here.

``bench ppo``, ``bench profile``, the program py-spy launches
(:mod:`hetero_tutorial.profiling.target`) and the studies' commands (``bench hybrid``,
``bench ppo_tricks``, ``bench overlap``) take the same options with one spelling,
one help text and one default (``--env``, ``--hidden``, ``--steps``, ...).
:func:`add_arguments` adds them to a command's parser, :meth:`RunOptions.from_args`
reads them back, :meth:`RunOptions.config` turns them into the :class:`PPOConfig` the
run trains with, and :meth:`RunOptions.argv` writes them as a command line again, for
a child process that must run the same thing.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields

from hetero_tutorial.rl.ppo.config import PPOConfig


@dataclass(frozen=True)
class RunOptions:
    """What one PPO run trains on, how long, from which seed, and with how many threads."""

    env: str = "CartPole-v1"
    """Gymnasium id of the task"""
    hidden: int | None = None
    """width of the actor's and critic's hidden layers (None: the tuned width for ``env``)"""
    steps: int = 50_000
    """environment steps to train for"""
    seed: int = 0
    """the run's seed"""
    threads: int | None = 1
    """PyTorch CPU threads (None: leave PyTorch's own count)"""
    accelerator: str | None = None
    """the accelerator to use, e.g. cuda:1 (None: the one found)"""
    num_envs: int | None = None
    """environments stepped together (None: tuned)"""
    num_steps: int | None = None
    """steps per environment in each rollout (None: tuned)"""
    minibatch_size: int | None = None
    """transitions per gradient step (None: tuned)"""
    epochs: int | None = None
    """passes over each rollout (None: tuned)"""

    def config(self) -> PPOConfig:
        """The tuned settings for ``env``, with this run's budget and overrides."""
        overrides = {
            "hidden": self.hidden,
            "num_envs": self.num_envs,
            "num_steps": self.num_steps,
            "minibatch_size": self.minibatch_size,
            "update_epochs": self.epochs,
        }
        given = {name: value for name, value in overrides.items() if value is not None}
        return PPOConfig.tuned(self.env, total_steps=self.steps, **given)

    def argv(self) -> list[str]:
        """These options as command-line flags (those left at None are left out, except the
        threads: None is ``--threads auto``, since absent means the default, one)."""
        flags = []
        for name, value in asdict(self).items():
            if name == "threads" and value is None:
                value = AUTO
            if value is not None:
                flags += [f"--{name.replace('_', '-')}", str(value)]
        return flags

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        """The options a parser built by :func:`add_arguments` read (the rest at their defaults)."""
        given = vars(args)
        return cls(**{f.name: given[f.name] for f in fields(cls) if f.name in given})


HELP = {
    "env": "Gymnasium id (default {})",
    "hidden": "hidden width (default: the tuned width for the task)",
    "steps": "environment steps to train for (default {:,})",
    "seed": "the run's seed (default {})",
    "threads": "PyTorch CPU threads (default {}; auto: leave PyTorch's own count)",
    "accelerator": "accelerator device, e.g. cuda:1 (default: the one found)",
    "num_envs": "environments stepped together (default: tuned)",
    "num_steps": "steps per environment per rollout (default: tuned)",
    "minibatch_size": "transitions per gradient step (default: tuned)",
    "epochs": "update epochs per rollout (default: tuned)",
}
"""One help text per option; ``{}`` is filled with the command's default."""

ALL = tuple(f.name for f in fields(RunOptions))

AUTO = "auto"
"""``--threads auto``: leave PyTorch's thread count alone (``threads=None``)."""


def _threads(text: str) -> int | None:
    return None if text == AUTO else int(text)


def add_arguments(
    parser: argparse.ArgumentParser, only: Iterable[str] = ALL, **defaults: object
) -> None:
    """Add the run options (``only`` those named) to ``parser``.

    ``defaults``: a study's own default where its task differs (``bench hybrid`` trains
    Pendulum, the article's task for C6, for 61,440 steps); every other option keeps
    :class:`RunOptions`' default.
    """
    standard = RunOptions()
    for name in only:
        default = defaults.get(name, getattr(standard, name))
        kind = {"env": str, "accelerator": str, "threads": _threads}.get(name, int)
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            type=kind,
            default=default,
            help=HELP[name].format(default),
        )
