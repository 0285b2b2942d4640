"""nnd-suites list: every registered plugin and shipped quality map."""

from __future__ import annotations

import argparse
import json

from nnd_suites.cli.catalogue import broken_plugins, catalogue
from nnd_suites.cli.parser import Commands
from nnd_suites.cli.printing import say, say_json
from nnd_suites.errors import PluginError


def register(subparsers: Commands) -> None:
    parser = subparsers.add_parser(
        "list",
        help="list adapters, quality maps, transformations, backends, slices, scorers and "
        "built-in models",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    found = catalogue()
    if args.json:
        say_json(json.dumps(found, indent=2))
    else:
        for kind, entries in found.items():
            say(f"{kind.replace('_', ' ')}:")
            for name, summary in entries.items():
                say(f"  {name:<24} {summary}")
    broken = broken_plugins()
    if broken:  # listed above among the others; the run fails on them
        raise PluginError("; ".join(broken))
    return 0
