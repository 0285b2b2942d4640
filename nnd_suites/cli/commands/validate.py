"""nnd-suites validate SUITE: check a suite folder against its schema and invariants."""

from __future__ import annotations

import argparse

from nnd_suites.cli.printing import say
from nnd_suites.suite import Suite


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("validate", help="validate a suite folder")
    parser.add_argument("suite", help="suite folder")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    suite = Suite.load(args.suite)  # raises SuiteValidationError naming the fault
    say(
        f"{args.suite}: valid suite {suite.name!r}, {len(suite):,} pairs, "
        f"content hash {suite.manifest.content_hash[:12]}"
    )
    return 0
