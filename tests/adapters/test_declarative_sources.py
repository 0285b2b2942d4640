"""The shipped declarative sources build from their source.yaml alone, with the counts an
independent count of the same JSON file gives (json module, no nnd_suites reader)."""

from __future__ import annotations

import hashlib
import json
import statistics
import unicodedata
from collections import Counter, defaultdict
from itertools import combinations

import pytest

from nnd_suites import build_suite
from nnd_suites.adapter import ADAPTERS
from nnd_suites.plugins import catalogue

#: adapter -> (group key fields, aspects), as each README states the rule
SHIPPED = {
    "topical_chat_usr": (
        ("source", "context"),
        (
            "understandability",
            "naturalness",
            "coherence",
            "engagingness",
            "groundedness",
            "overall",
        ),
    ),
    "sfres": (("source",), ("informativeness", "naturalness", "overall")),
    "sfhot": (("source",), ("informativeness", "naturalness", "overall")),
}


def _same_text(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def independent_counts(
    items: list[dict], key: tuple[str, ...], aspects: tuple[str, ...]
) -> Counter:
    """Per aspect: pairs of different texts of one group whose mean scores differ by >= 1
    (identical texts pooled: one text, the mean of their scores)."""
    by_group: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for item in items:
        by_group[tuple(item[k] for k in key)][_same_text(item["system_output"])].append(item)
    counts: Counter = Counter()
    for texts in by_group.values():
        for aspect in aspects:
            means = [statistics.fmean(i["scores"][aspect] for i in same) for same in texts.values()]
            counts[aspect] += sum(abs(a - b) >= 1 - 1e-12 for a, b in combinations(means, 2))
    return counts


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_source_counts_equal_an_independent_count(name):
    cls = ADAPTERS.get(name)
    assert cls.definition == "declarative"
    path = cls.default_source_path()
    items = json.loads(path.read_text("utf-8"))
    key, aspects = SHIPPED[name]
    expected = independent_counts(items, key, aspects)
    stats = build_suite(name).stats()
    assert stats["breakdowns"]["aspect"] == dict(expected)
    assert stats["pairs"] == sum(expected.values())
    assert stats["candidates"] == len(items)
    assert stats["groups"] == len({tuple(item[k] for k in key) for item in items})
    assert hashlib.sha256(path.read_bytes()).hexdigest() == cls.declared.spec.file.sha256


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_fixture_counts_equal_an_independent_count(name):
    cls = ADAPTERS.get(name)
    fixture = (
        cls.folder()
        / "fixtures"
        / json.loads((cls.folder() / "fixtures" / "expected_stats.json").read_text("utf-8"))[
            "source"
        ]
    )
    items = json.loads(fixture.read_text("utf-8"))
    expected = independent_counts(items, *SHIPPED[name])
    assert build_suite(name, fixture).stats()["pairs"] == sum(expected.values()) > 0


def test_list_shows_each_adapter_kind():
    adapters = catalogue()["adapters"]
    assert adapters["sfres"].endswith("(builtin, declarative)")
    assert adapters["quiz_design"].endswith("(builtin, class)")
