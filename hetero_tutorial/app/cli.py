"""The command line: ``python -m hetero_tutorial {doctor, run, ledger, bench NAME}``.

What a learner and an instructor run from the installed package. The repository's own
tools (the README's and docs' tables, the cards, the book) are ``python -m tools.docs``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from hetero_tutorial.app import bench as benches
from hetero_tutorial.core.errors import UsageError


def _command_line(argv: list[str]) -> str:
    return shlex.join(["python", "-m", "hetero_tutorial", *argv])


def _add_doctor(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "doctor", help="pre-flight check: versions, CPU, accelerator, py-spy, expected run times"
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the report as JSON")


def _add_run(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "run", help="execute every notebook headless (full mode unless --quick), with progress"
    )
    parser.add_argument("--quick", action="store_true", help="quick mode: small budgets")
    parser.add_argument(
        "--only", nargs="+", metavar="NN", help="run only these notebooks, by number (e.g. 00 03)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for executed copies (default build/notebooks)",
    )
    parser.add_argument(
        "--reference",
        action="store_true",
        help="also save the run times as a reference record under data/reference/<machine>/",
    )


def _add_ledger(commands: argparse._SubParsersAction) -> None:
    commands.add_parser(
        "ledger",
        help="judge every claim on this machine's results and the reference records",
        description="Writes data/results/ledger.json and ledger.md and prints the table.",
    )


def _add_bench(commands: argparse._SubParsersAction, wanted: str | None) -> None:
    """Every benchmark as a sub-command; only ``wanted``'s module is imported for its options
    (None: every module's)."""
    parser = commands.add_parser("bench", help="run one benchmark and write a JSON record")
    names = parser.add_subparsers(dest="benchmark", required=True, metavar="NAME")
    for name in benches.names():
        doc = benches.summary(name)
        sub = names.add_parser(name, help=doc.strip().splitlines()[0], description=doc)
        if wanted is not None and name != wanted:
            continue  # listed with its help line; its options are read only when it runs
        benches.load(name).add_arguments(sub)
        where = sub.add_mutually_exclusive_group()
        where.add_argument("--json", type=Path, metavar="PATH", help="where to write the record")
        where.add_argument(
            "--reference",
            action="store_true",
            help="write it as a reference record under data/reference/<machine>/ (to commit)",
        )


class _RaisingParser(argparse.ArgumentParser):
    """A parser whose usage errors raise :class:`UsageError` instead of exiting the process
    (argparse's ``error`` exits with status 2: a notebook's kernel would go with it)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def build_parser(
    parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser,
    argv: Sequence[str] | None = None,
) -> argparse.ArgumentParser:
    """The command line's parser; ``parser_class`` :class:`_RaisingParser` for calls from
    Python (sub-commands' parsers take the same class).

    ``argv``: the command line it will parse. Then only the benchmark it names (``bench
    NAME ...``) has its module imported, so starting one benchmark does not import every
    other's (seconds: the allocator's imports include PyTorch's compiler). None: every
    benchmark's options, for tools that parse many command lines.
    """
    parser = parser_class(
        prog="python -m hetero_tutorial",
        description="Where should deep RL run, CPU or GPU? Measure it on this machine.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    _add_doctor(commands)
    _add_run(commands)
    _add_ledger(commands)
    wanted = None
    if argv is not None:
        wanted = argv[1] if len(argv) > 1 and argv[0] == "bench" else ""
    _add_bench(commands, wanted)
    return parser


def _run_bench(args: argparse.Namespace, argv: list[str]) -> int:
    from hetero_tutorial.core import results  # PyTorch, through the machine's fingerprint

    module = benches.load(args.benchmark)
    fields = module.run(args)
    record = results.Record(
        f"bench.{args.benchmark}", fields, results.provenance(command=_command_line(argv))
    )
    tag = benches.record_tag(module, vars(args))
    if args.json:
        path = results.save(record, args.json)
    elif args.reference:
        path = results.save(record, directory=results.reference_directory(record), tag=tag)
    else:
        path = results.save(record, tag=tag)
    summary = {k: v for k, v in fields.items() if not isinstance(v, (list, dict))}
    print(json.dumps(summary, indent=2, default=str))
    print(f"record written to {path}")
    return 0


def bench(argv: list[str]) -> int:
    """``python -m hetero_tutorial bench ARGV...`` from Python (a notebook, say).

    A usage error raises :class:`UsageError` with its explanation, where :func:`main`
    would exit the process (or a notebook's kernel) with status 2.
    """
    argv = ["bench", *argv]
    return _run_bench(build_parser(_RaisingParser, argv).parse_args(argv), argv)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv=argv)
    args = parser.parse_args(argv)
    try:
        return _dispatch(args, argv)
    except UsageError as error:
        parser.exit(2, f"error: {error}\n")


def _dispatch(args: argparse.Namespace, argv: list[str]) -> int:
    if args.command == "doctor":
        from hetero_tutorial.app.doctor import doctor

        return doctor(args.json)
    if args.command == "run":
        from hetero_tutorial.app.runner import run_notebooks

        return run_notebooks(
            quick=args.quick, only=args.only, out=args.out, reference=args.reference
        )
    if args.command == "ledger":
        return _run_ledger()
    return _run_bench(args, argv)


def _run_ledger() -> int:
    from hetero_tutorial.notebook import ledger_report

    json_path, md_path = ledger_report.save()
    print(md_path.read_text().split("\n## ")[0])  # the table; the rules and figures follow it
    print(f"ledger written to {json_path} and {md_path}")
    return 0
