"""nnd-suites compare REPORT_A REPORT_B: paired difference of two runs, test by test."""

from __future__ import annotations

import argparse
from pathlib import Path

from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_json


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare two evaluation runs test by test (exact McNemar, Holm across categories)",
        description="Compare two runs saved by `nnd-suites evaluate --out DIR` on the same "
        "tests: per suite and category, the difference in pass rate, the discordant tests, an "
        "exact McNemar p-value and a Holm-adjusted one across the suite's categories. A tie is "
        "not a pass. Runs over different tests are refused, and so is one run given as both "
        "(the same report, or a copy of its folder), and so are runs scored differently "
        "(mode, template) unless --allow-different-scoring.",
    )
    parser.add_argument("report_a", type=Path, help="run folder (or its report.json): A")
    parser.add_argument("report_b", type=Path, help="run folder (or its report.json): B")
    parser.add_argument(
        "--suite",
        action="append",
        metavar="NAME",
        help="compare only this suite (repeatable; default: all, which must be in both runs)",
    )
    parser.add_argument(
        "--allow-different-scoring",
        action="store_true",
        help="compare runs scored with different modes or templates on purpose (the "
        "differences are listed in the comparison); runs over different tests stay refused",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--out",
        type=Path,
        help="write comparison.json (+ schema), comparison.md and differences.png (A - B) there",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: the evaluator package is slow to import; `nnd-suites list` stays < 1 s
    from nnd_suites.evaluation.comparison import compare_runs, comparison_markdown, write_comparison
    from nnd_suites.infra.output_folder import check_output_folder

    if args.out:  # before reading the runs: a folder that cannot take the report costs nothing
        check_output_folder(args.out, "comparison")
    comparison = compare_runs(
        args.report_a,
        args.report_b,
        suites=args.suite,
        allow_different_scoring=args.allow_different_scoring,
    )
    if args.out:
        write_comparison(comparison, args.out)
    if args.json:
        say_json(comparison.model_dump_json(indent=2))
    else:
        say(comparison_markdown(comparison), end="")
        if args.out:
            say(f"\nwrote {args.out}/comparison.json, comparison.md, differences.png")
    return 0
