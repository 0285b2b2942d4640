"""nnd-suites stats SUITE: counts per breakdown and what was left out."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from nnd_suites.cli.printing import say, say_json
from nnd_suites.formatting import plural
from nnd_suites.suite.resolve import load_suite


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("stats", help="print a suite's counts per breakdown")
    parser.add_argument("suite", help="suite folder (or built-in adapter name)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def print_stats(stats: dict[str, Any]) -> None:
    say(
        f"suite {stats['name']} (adapter {stats['adapter']}): {plural(stats['pairs'], 'pair')} "
        f"from {plural(stats['groups'], 'group')}, {plural(stats['candidates'], 'candidate')}"
    )
    for field, values in stats["breakdowns"].items():
        say(f"  {field}: " + ", ".join(f"{k} {v:,}" for k, v in values.items()))
    if stats["pairs_repeating_texts"]:
        say(
            f"  pairs repeating another pair's texts (identical system outputs): "
            f"{stats['pairs_repeating_texts']:,}"
        )
    # each reason says "conflicting ratings" (numeric maps) or "conflicting labels"
    for reason, count in stats.get("conflicts", {}).items():
        say(f"  kept by the quality map: {reason}: {count:,}")
    if stats["degenerate_pairs"]:
        say(
            f"  degenerate pairs (identical texts, counted apart from pass rates): "
            f"{stats['degenerate_pairs']:,}"
        )
    if stats["groups_without_pairs"]:
        say(f"  groups without any pair: {stats['groups_without_pairs']:,}")
    for reason, count in _grouped_reasons(stats["skipped"]).items():
        say(f"  skipped: {reason}: {count}")


_NAMED = re.compile(r"^(?P<head>.*?) \((?P<name>[^()]*)\)(?P<tail>.*)$")


def _grouped_reasons(skipped: dict[str, int]) -> dict[str, str]:
    """One line per reason: reasons that differ only by a name in brackets (one per system,
    say) are printed once with the names, so a build's output stays readable."""
    groups: dict[str, list[tuple[str, str, int]]] = {}
    for reason, count in skipped.items():
        found = _NAMED.match(reason)
        key = f"{found['head']}{found['tail']}" if found else reason
        groups.setdefault(key, []).append((reason, found["name"] if found else "", count))
    lines = {}
    for key, members in groups.items():
        if len(members) == 1:
            reason, _, count = members[0]
            lines[reason] = f"{count:,}"
            continue
        total = sum(count for _, _, count in members)
        names = ", ".join(f"{name} {count:,}" for _, name, count in members)
        lines[key] = f"{total:,} rows ({names})"
    return lines


def run(args: argparse.Namespace) -> int:
    stats = load_suite(args.suite).stats()
    if args.json:
        say_json(json.dumps(stats, indent=2, ensure_ascii=False))
    else:
        print_stats(stats)
    return 0
