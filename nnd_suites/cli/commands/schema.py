"""nnd-suites schema: write the JSON Schemas of suite files (manifest, pairs), quality maps,
declared sources (source.yaml) and reports (every kind in nnd_suites.infra.output_folder.KINDS
that has a schema): every file nnd_suites/schemas/ ships (``--out nnd_suites/schemas`` refreshes
them in a clone)."""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say
from nnd_suites.quality_map import write_schema


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "schema",
        help="write the JSON Schemas of suite files, quality maps, source.yaml and reports",
    )
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
    from nnd_suites.declarative import model as declarative
    from nnd_suites.evaluation.report_schemas import export_report_schemas, report_schemas
    from nnd_suites.infra.output_file import write_schema_files
    from nnd_suites.quality_map.model import SCHEMA_FILE, generate_schema
    from nnd_suites.suite.manifest import suite_schemas  # pyarrow and numpy: not for --help

    if args.reports:
        folder = args.out or Path(str(resources.files("nnd_suites.schemas")))
        paths = export_report_schemas(folder)
    elif args.quality_map:
        folder = args.out or Path(str(resources.files("nnd_suites.schemas")))
        paths = [write_schema(folder)]
    else:
        # one call: every file is checked (a file of the user's is refused) before any is written
        schemas = {
            **suite_schemas(),
            SCHEMA_FILE: generate_schema(),
            declarative.SCHEMA_FILE: declarative.generate_schema(),
            **report_schemas(),
        }
        paths = write_schema_files(args.out or Path("."), schemas)
    for path in paths:
        say(f"wrote {path}")
    return 0
