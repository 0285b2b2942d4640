"""nnd-suites schema: write the JSON Schemas of suite files (manifest, pairs), quality maps and
reports (every kind in nnd_suites.infra.output_folder.KINDS that has a schema)."""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

from nnd_suites.cli.printing import say
from nnd_suites.quality_map import write_schema


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("schema", help="write the JSON Schemas of suite files")
    parser.add_argument("--out", type=Path, default=None, help="folder (default: .)")
    parser.add_argument(
        "--quality-map",
        action="store_true",
        help="write only the quality-map schema, by default over the package's checked-in "
        "copy (nnd_suites/schemas/), which editors and the pre-commit hook use",
    )
    parser.add_argument(
        "--reports",
        action="store_true",
        help="write only the report schemas (evaluation report, leaderboard, comparison, verify, "
        "placement, robustness), by "
        "default over the package's checked-in copies (nnd_suites/schemas/)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # imports the report models
    from nnd_suites.evaluation.report_schemas import export_report_schemas
    from nnd_suites.suite import export_json_schemas  # pyarrow and numpy: not for --help

    if args.reports:
        folder = args.out or Path(str(resources.files("nnd_suites.schemas")))
        paths = export_report_schemas(folder)
    elif args.quality_map:
        folder = args.out or Path(str(resources.files("nnd_suites.schemas")))
        paths = [write_schema(folder)]
    else:
        folder = args.out or Path(".")
        folder.mkdir(parents=True, exist_ok=True)
        paths = [*export_json_schemas(folder), write_schema(folder), *export_report_schemas(folder)]
    for path in paths:
        say(f"wrote {path}")
    return 0
