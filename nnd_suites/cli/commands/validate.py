"""nnd-suites validate SUITE: check a suite (folder, exported config, Hub suite) against its
schema, its content hash and its invariants."""

from __future__ import annotations

import argparse
from pathlib import Path

from nnd_suites.cli.options import SUITE_HELP
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser("validate", help="validate a suite (folder or any suite name)")
    parser.add_argument(
        "suite",
        help=SUITE_HELP,
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: nnd_suites.suite imports pyarrow and numpy, which --help and list do not need
    from nnd_suites.resolve import load_suite, refuse_ambiguous
    from nnd_suites.suite import Suite

    # a folder is read as one (a damaged or foreign folder is named as such); any other
    # spec goes through the resolver (hub:ORG/NAME/CONFIG, a built-in name); a bare built-in
    # name that is also a folder here is refused as the resolver refuses it
    refuse_ambiguous(args.suite)
    suite = Suite.load(args.suite) if Path(args.suite).is_dir() else load_suite(args.suite)
    say(
        f"{args.suite}: valid suite {suite.name!r}, {len(suite):,} pairs, "
        f"content hash {suite.manifest.content_hash[:12]}"
    )
    return 0
