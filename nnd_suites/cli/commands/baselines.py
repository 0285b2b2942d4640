"""nnd-suites baselines SUITE: what trivial scorers (no model) achieve on a suite's tests."""

from __future__ import annotations

import argparse
import json

from nnd_suites.cli.options import SUITE_HELP
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_json
from nnd_suites.cli.suites import load_suite


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "baselines",
        help="pass rates of heuristic scorers without a model (shorter, longer, overlap)",
        description="Score a suite with bias baselines (prefer the shorter candidate, the longer "
        "one, the one sharing more words with the context): how much of the suite, and of each "
        "category, a heuristic solves. Equal heuristic scores are a tie, not a pass.",
    )
    parser.add_argument("suite", help=SUITE_HELP)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: the evaluator package is slow to import; `nnd-suites list` stays < 1 s
    from nnd_suites.evaluation.baselines import baselines, baselines_markdown

    result = baselines(load_suite(args.suite))
    if args.json:
        say_json(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        say(baselines_markdown(result), end="")
    return 0
