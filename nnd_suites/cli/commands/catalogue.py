"""nnd-suites catalogue: every suite nnd-suites can build, by task type, with its judgment, test
count, license and whether its source ships, is in a source folder, or must be downloaded."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nnd_suites.catalogue.entries import CATALOGUE_FILE, load_catalogue, locate_source
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_json
from nnd_suites.infra.formatting import plural, table


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "catalogue",
        help="list every suite nnd-suites can build (build them: build --catalogue --out DIR)",
    )
    parser.add_argument(
        "--source-dir", type=Path, help="a folder of downloaded sources: say which are found there"
    )
    parser.add_argument("--file", type=Path, default=CATALOGUE_FILE, help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rows = []
    for entry in sorted(load_catalogue(args.file), key=lambda e: (e.task_type, e.name)):
        meta = entry.metadata()
        if entry.shipped:
            source = "shipped"
        elif locate_source(entry.source, args.source_dir)[0] is not None:
            source = f"found in {args.source_dir}"
        else:
            source = f"download: {entry.source.url}"
        rows.append(
            {
                "suite": entry.name,
                "task_type": entry.task_type,
                "task": meta.task,
                "judgment": entry.judgment,
                "languages": meta.languages,
                "tests": entry.figures.tests,
                "license": meta.license,
                "source": source,
                "published": entry.figures.published,
                "citation": meta.citation,
            }
        )
    if args.json:
        say_json(json.dumps({"suites": rows}, indent=2, ensure_ascii=False))
        return 0
    columns = ["task_type", "suite", "judgment", "tests", "license", "source"]
    say(table(columns, [[f"{r[c]:,}" if c == "tests" else r[c] for c in columns] for r in rows]))
    tasks = {r["task_type"] for r in rows}
    say(
        f"{plural(len(rows), 'suite')} over {plural(len(tasks), 'task type')}; build them with "
        "`nnd-suites build --catalogue --out DIR [--source-dir DIR]`"
    )
    return 0
