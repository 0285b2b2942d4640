"""nnd-suites stats SUITE: counts per breakdown and what was left out."""

from __future__ import annotations

import argparse
import json
from typing import Any

from nnd_suites.cli.options import SUITE_HELP
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_json
from nnd_suites.cli.suites import load_suite


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser("stats", help="print a suite's counts per breakdown")
    parser.add_argument("suite", help=SUITE_HELP)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def print_stats(stats: dict[str, Any]) -> None:
    # lazy: importing nnd_suites.suite.* runs the suite package (pyarrow): not for --help
    from nnd_suites.suite.stats_text import stats_lines

    for line in stats_lines(stats):
        say(line)


def run(args: argparse.Namespace) -> int:
    stats = load_suite(args.suite).stats()
    if args.json:
        say_json(json.dumps(stats, indent=2, ensure_ascii=False))
    else:
        print_stats(stats)
    return 0
