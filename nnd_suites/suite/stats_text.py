"""A suite's counts (:meth:`Suite.stats`) as the lines ``build`` and ``stats`` print: reasons
that differ only by a name in brackets (one per system, say) are grouped on one line."""

from __future__ import annotations

import re
from typing import Any

from nnd_suites.infra.formatting import plural

_NAMED = re.compile(r"^(?P<head>.*?) \((?P<name>[^()]*)\)(?P<tail>.*)$")


def stats_lines(stats: dict[str, Any]) -> list[str]:
    """The lines of a suite's counts: breakdowns, what the quality map kept or pooled,
    degenerate pairs, groups without pairs and each reason rows were skipped."""
    lines = [
        f"suite {stats['name']} (adapter {stats['adapter']}): {plural(stats['pairs'], 'pair')} "
        f"from {plural(stats['groups'], 'group')}, {plural(stats['candidates'], 'candidate')} "
        "read"
    ]
    for field, values in stats["breakdowns"].items():
        lines.append(f"  {field}: " + ", ".join(f"{k} {v:,}" for k, v in values.items()))
    if stats["pairs_repeating_texts"]:
        lines.append(
            f"  pairs repeating another pair's texts (identical system outputs): "
            f"{stats['pairs_repeating_texts']:,}"
        )
    # each reason says "conflicting ratings" (numeric maps) or "conflicting labels"
    for reason, count in stats.get("conflicts", {}).items():
        lines.append(f"  kept by the quality map: {reason}: {count:,}")
    pooled = stats.get("pooled_texts")
    if pooled and pooled["texts"]:
        lines.append(
            f"  pooled (identical_texts: pool): {plural(pooled['candidates'], 'candidate')} "
            f"share their text with another of their group: {plural(pooled['texts'], 'text')}, "
            f"{pooled['scored_differently']:,} of them scored differently by their own ratings, "
            "now one pooled score each"
        )
    if stats["degenerate_pairs"]:
        lines.append(
            f"  degenerate pairs (identical texts, counted apart from pass rates): "
            f"{stats['degenerate_pairs']:,}"
        )
    if stats["groups_without_pairs"]:
        lines.append(f"  groups without any pair: {stats['groups_without_pairs']:,}")
    for reason, count in grouped_reasons(stats["skipped"]).items():
        lines.append(f"  skipped: {reason}: {count}")
    return lines


def grouped_reasons(skipped: dict[str, int]) -> dict[str, str]:
    """One entry per reason: reasons that differ only by a name in brackets are given once,
    with the total and each name's count, so a build's output stays readable."""
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
