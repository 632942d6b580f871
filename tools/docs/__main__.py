"""``python -m tools.docs COMMAND``, from the repository's root: regenerate the generated
text, build the book, check the instructor's sheet, put the install cell into notebooks,
list the glossary links a notebook lacks. ``make docs``, ``make book`` and ``make
notebooks`` run them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hetero_tutorial.core.errors import UsageError

PROG = "python -m tools.docs"


def regenerate() -> int:
    """Rebuild every generated section of the README and of ``docs/`` and every notebook's
    run-time line from ``data/reference/``; print what it rewrote."""
    from hetero_tutorial.core import results
    from tools.docs import cards, kit, readme

    # The cards first: the README's reading minutes count the cards' words.
    for path in cards.update_cards():
        print(f"run-time line of {path.name}'s opening card regenerated")
    for path in readme.update_pages():
        print(f"generated sections of {path.name} regenerated from {results.REFERENCE_DIR}")
    for path in kit.update():
        print(f"generated sections of docs/{path.name} regenerated")
    return 0


def build_book(args: argparse.Namespace) -> int:
    from tools.docs import book

    book.build(args.source, args.out or book.HTML_DIR, teacher=args.teacher)
    return 0


def check_answers(_: argparse.Namespace) -> int:
    from tools.docs import answer_check

    return answer_check.main()


def install_cells(args: argparse.Namespace) -> int:
    from tools.docs import hosted

    return hosted.main(args.notebooks)


def list_glossary_links(_: argparse.Namespace) -> int:
    from tools.docs import glossary_links

    return glossary_links.main()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="The repository's press: generated text, the book, the sheet."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "regenerate",
        help="rewrite the README's and docs/'s generated tables and each notebook's run-time "
        "line from data/reference/ (make docs)",
    ).set_defaults(run=lambda _: regenerate())
    found = commands.add_parser(
        "book",
        help="build the book (static HTML) from the executed notebooks; executes nothing",
        description=(
            "Builds build/book/html/ from the notebooks `make run` (full mode, preferred) or "
            "`make test` (quick mode) executed, with the teacher's kit and a ledger page per "
            "reference machine. Needs the extra [book]."
        ),
    )
    found.add_argument(
        "--from",
        dest="source",
        type=Path,
        metavar="DIR",
        help="the executed notebooks to show (default: build/notebooks in full mode, else "
        "build/nbmake)",
    )
    found.add_argument(
        "--teacher",
        action="store_true",
        help="a teacher's book: with the instructor's sheet (docs/answers.md), which a "
        "learner's book leaves out",
    )
    found.add_argument(
        "--out", type=Path, default=None, help="where the site goes (default build/book/html)"
    )
    found.set_defaults(run=build_book)
    commands.add_parser(
        "check-answers",
        help="check the instructor's sheet against this run's records (data/results/)",
    ).set_defaults(run=check_answers)
    found = commands.add_parser(
        "install-cells",
        help="put the hosted runtime's install cell into each notebook (make install-cells)",
    )
    found.add_argument("notebooks", nargs="*", help="notebook files (default: every notebook)")
    found.set_defaults(run=install_cells)
    commands.add_parser(
        "glossary-links",
        help="list the glossary terms each notebook uses first without a link",
    ).set_defaults(run=list_glossary_links)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as error:
        parser.exit(2, f"error: {error}\n")


if __name__ == "__main__":
    sys.exit(main())
