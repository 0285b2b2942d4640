"""nnd-suites place VERIFY_DIR REPORT: predict a new model's human score (paper 5.1)."""

from __future__ import annotations

import argparse
from pathlib import Path

from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_json


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "place",
        help="predict a new model's human score from a verify run and its evaluation",
        description="Fit human score against pass rate over the annotated systems of a verify "
        "run and predict the human score of a new model evaluated on the same suite (same "
        "--limit), with a prediction interval, overall and per category; a fit over fewer "
        "than 4 systems or with r² < 0.5 is flagged poor. A model the verify run scored for a "
        "system is refused: the fit holds its own point.",
    )
    parser.add_argument("verify", type=Path, help="folder written by `nnd-suites verify --out`")
    parser.add_argument("report", type=Path, help="folder written by `nnd-suites evaluate --out`")
    parser.add_argument(
        "--out",
        type=Path,
        help="folder for placement.json (+ schema), placement.md and placement.png",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: the evaluator package is slow to import; `nnd-suites list` stays < 1 s
    from nnd_suites.evaluation.verify.place import place_saved
    from nnd_suites.evaluation.verify.render import PLACEMENT_FILE, placement_markdown

    placement = place_saved(args.verify, args.report, out=args.out)
    if args.json:
        say_json(placement.model_dump_json(indent=2))
    else:
        say(placement_markdown(placement), end="")
        if args.out:
            say(
                f"\nwrote {args.out}/{PLACEMENT_FILE}, placement.schema.json, placement.md, "
                "placement.png"
            )
    return 0
