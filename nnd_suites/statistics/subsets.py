"""One order for every table of subsets: largest first, ties by name."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


def largest_first(items: Iterable[tuple[str, T]]) -> dict[str, list[T]]:
    """``(key, item)`` pairs -> key -> items, the largest group first (ties by key), each group
    in the order given. Reports, baselines and slices all list their subsets this way."""
    groups: dict[str, list[T]] = {}
    for key, item in items:
        groups.setdefault(key, []).append(item)
    return dict(sorted(groups.items(), key=lambda entry: (-len(entry[1]), entry[0])))
