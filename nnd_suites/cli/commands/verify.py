"""nnd-suites verify SUITE --system NAME=MODEL ...: does the suite rank systems as people did?"""

from __future__ import annotations

import argparse
from pathlib import Path

from nnd_suites.cli.options import (
    MIN_RESAMPLES,
    SUITE_HELP,
    add_data_parallel_option,
    add_scoring_options,
    non_negative_int,
    rank_zero,
    resamples,
    scoring_options,
)
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_json


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="correlate the pass rates of the annotated systems' models with their human scores",
        description="Score a model for each annotated system of a suite, then report, overall "
        "and per category, Kendall's tau between pass rates and human scores, the Pearson "
        "correlation of their pairwise gaps (paper 2.3), bootstrap intervals over tests and the "
        "number of systems (3 to 7 systems give wide intervals). Writes verify.json (+ schema), "
        "verify.md and verify.png.",
    )
    parser.add_argument("suite", help=SUITE_HELP)
    parser.add_argument(
        "--system",
        action="append",
        default=[],
        metavar="NAME=MODEL",
        help="an annotated system (see `nnd-suites systems SUITE`) and the model that stands "
        "for it: Hub id or local folder (repeatable)",
    )
    parser.add_argument(
        "--systems-file", type=Path, help="YAML mapping of NAME: MODEL (added to --system)"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for the report")
    parser.add_argument(
        "--resamples",
        type=resamples,
        default=1000,
        help=f"bootstrap resamples (default: 1000; at least {MIN_RESAMPLES}, so that each tail "
        "of a 95%% interval holds a resample)",
    )
    parser.add_argument("--seed", type=non_negative_int, default=0, help="bootstrap seed (>= 0)")
    parser.add_argument("--json", action="store_true", help="print verify.json's object")
    add_scoring_options(parser, model=False)
    add_data_parallel_option(parser, "verify")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: verify imports scipy.stats; `nnd-suites list` must not
    from nnd_suites.evaluation.verify.render import verify_markdown
    from nnd_suites.evaluation.verify.run import collect_systems, verify_suite

    report = verify_suite(
        args.suite,
        collect_systems(args.system, args.systems_file),
        out=args.out,
        resamples=args.resamples,
        seed=args.seed,
        data_parallel=args.data_parallel,
        **scoring_options(args),
    )
    if not rank_zero():
        return 0  # under accelerate/torchrun, rank 0 prints (and wrote the report)
    if args.json:
        say_json(report.model_dump_json(indent=2))
    else:
        say(verify_markdown(report), end="")
        say(f"\nwrote {args.out}/verify.json, verify.schema.json, verify.md, verify.png")
    return 0
