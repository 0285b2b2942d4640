"""nnd-suites robustness: one model across suites x transformations, compared test by test."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nnd_suites.cli.options import (
    SUITE_HELP,
    add_scoring_options,
    probability,
    rank_zero,
    scoring_options,
)
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_json


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "robustness",
        help="evaluate a model on suites and their transformed children; paired deltas",
        description="Evaluate one model on every suite untouched and under every transformation "
        "(GEM's Transformation-Parent sets): per (suite, transformation), the parent and "
        "transformed pass rates on the same tests, the delta with a 95% interval, an exact "
        "McNemar test, and the tests the transformation changed or made degenerate.",
    )
    parser.add_argument(
        "--suite",
        action="append",
        required=True,
        metavar="SUITE",
        help=SUITE_HELP + ", all, or a dataset folder (every config) (repeatable)",
    )
    parser.add_argument(
        "--transform",
        action="append",
        required=True,
        metavar="NAME[:param=value,...]",
        help="transformation spec (repeatable), e.g. lowercase, typos:rate=0.05,seed=1",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="write robustness.json, robustness.md, robustness.png (and the evaluator's report "
        "and per-test outcomes under evaluation/) there",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object with the cells on stdout"
    )
    parser.add_argument(
        "--alpha",
        type=probability,
        default=0.05,
        help="significance level marking cells, between 0 and 1 (0.05)",
    )
    add_scoring_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: the evaluator package is slow to import; `nnd-suites list` stays < 1 s
    from nnd_suites.evaluation.report import RequestCounts
    from nnd_suites.evaluation.report_markdown import requests_note
    from nnd_suites.evaluation.robustness import robustness, to_markdown
    from nnd_suites.evaluation.tiny import EMBEDDED_NOTE, resolve_embedded

    (model,), embedded = resolve_embedded([args.model])
    if embedded and args.json:  # else the tables on stdout say it, under their heading
        say(EMBEDDED_NOTE, file=sys.stderr)
    report = robustness(
        model,
        args.suite,
        args.transform,
        out=args.out,
        alpha=args.alpha,
        **scoring_options(args),
    )
    if not rank_zero():
        return 0  # rank 0 prints (and wrote the report)
    if args.json:
        say_json(json.dumps(report.summary(), ensure_ascii=False))
        return 0
    # The overall table (the per-category tables are in robustness.md).
    say(to_markdown(report, per_category=False))
    recorded = report.evaluation
    reference = recorded.get("reference_requests")
    note = requests_note(
        RequestCounts.model_validate(recorded["requests"]),
        recorded.get("reference_model"),
        None if reference is None else RequestCounts.model_validate(reference),
    )
    say(f"\n{note}, {recorded.get('seconds', 0):.1f} s")
    if args.out:
        say(f"wrote {args.out}/robustness.json, robustness.md, robustness.png, evaluation/")
    return 0
