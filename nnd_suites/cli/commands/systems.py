"""nnd-suites systems SUITE: each annotated system's human score, from the suite's candidates."""

from __future__ import annotations

import argparse

from nnd_suites.cli.options import SUITE_HELP
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_json
from nnd_suites.cli.suites import load_suite


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "systems",
        help="human score per annotated system (overall and per category), from the suite",
        description="Derive each annotated system's human score from the suite's candidates and "
        "quality map: the share of its candidates in the top tier (labels, graded credit) or "
        "its mean rating (numeric and Likert rules), or in a pairwise suite that names its "
        "systems the share of its comparisons it won (a tie counts as half a win); per error "
        "category, the share of its "
        "candidates without that error; per context category (question type, aspect), the "
        "score over its candidates there.",
    )
    parser.add_argument("suite", help=SUITE_HELP)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: human scores pull in the quality-map rules; `nnd-suites list` stays < 1 s
    from nnd_suites.human.scores import human_scores, human_scores_markdown

    scores = human_scores(load_suite(args.suite))
    if args.json:
        say_json(scores.model_dump_json(indent=2))
    else:
        say(human_scores_markdown(scores), end="")
    return 0
