"""nnd-suites schema: write the JSON Schemas of suite files (manifest, pair rows)."""

from __future__ import annotations

import argparse
from pathlib import Path

from nnd_suites.suite import export_json_schemas


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("schema", help="write the JSON Schemas of suite files")
    parser.add_argument("--out", type=Path, default=Path("."), help="folder (default: .)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    for path in export_json_schemas(args.out):
        print(f"wrote {path}")
    return 0
