"""The ``nnd-suites`` command line. Each sub-command is a module in ``commands/`` with a
``register(subparsers)`` function; new commands need no edit here."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from nnd_suites import __version__
from nnd_suites.cli import commands
from nnd_suites.errors import NNDError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nnd-suites",
        description="Build Near-Negative Distinction test suites from human evaluations, "
        "score language models on them, and publish them.",
    )
    parser.add_argument("--version", action="version", version=f"nnd-suites {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"{commands.__name__}.{info.name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except NNDError as exc:
        print(f"nnd-suites {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("interrupted; completed work is kept in the cache", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
