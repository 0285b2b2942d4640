"""nnd-suites build ADAPTER: build a suite from an annotation source."""

from __future__ import annotations

import argparse
from pathlib import Path

from ...build import build_suite
from .stats import print_stats


def parse_options(items: list[str]) -> dict[str, str]:
    options = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--option expects KEY=VALUE, got {item!r}")
        options[key] = value
    return options


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("build", help="build a suite from an annotation source")
    parser.add_argument("adapter", help="adapter name (see `nnd-suites list`)")
    parser.add_argument("--source", help="path or URL of the source (default: the shipped file)")
    parser.add_argument("--out", type=Path, help="suite folder (default: suites/ADAPTER)")
    parser.add_argument("--name", help="suite name (default: the adapter name)")
    parser.add_argument("--quality-map", help="override the adapter's quality map (name or file)")
    parser.add_argument("--skip-malformed", action="store_true",
                        help="record malformed rows (with line numbers) instead of stopping")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="adapter option (repeatable)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = args.out or Path("suites") / (args.name or args.adapter)
    suite = build_suite(args.adapter, args.source, out, name=args.name,
                        quality_map=args.quality_map, skip_malformed=args.skip_malformed,
                        **parse_options(args.option))
    print(f"wrote {out} ({len(suite)} pairs)")
    print_stats(suite.stats())
    return 0
