"""The shipped declarative sources build from their source.yaml alone, with the counts an
independent count of the same JSON file gives (json module, no nnd_suites reader)."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import statistics
import unicodedata
from collections import Counter, defaultdict
from itertools import combinations

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.cli.catalogue import catalogue
from nnd_suites.errors import NNDError, SourceFormatError

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


# ----------------------------------- unshipped sources: their fixtures, counted with the csv module
def _fixture_rows(name: str) -> tuple[object, list[dict[str, str]]]:
    folder = ADAPTERS.get(name).folder() / "fixtures"
    path = folder / json.loads((folder / "expected_stats.json").read_text("utf-8"))["source"]
    with path.open(newline="", encoding="utf-8") as handle:
        return path, list(csv.DictReader(handle))


@pytest.mark.parametrize(
    ("name", "text", "raters"),
    [("simpeval_past", "processed_generation", 5), ("simpeval_2022", "generation", 3)],
)
def test_simpeval_counts_equal_an_independent_count(name, text, raters):
    path, rows = _fixture_rows(name)
    by_input: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if _same_text(row[text]):  # an empty output takes no part (counted by the build)
            ratings = [float(row[f"rating_{i}"]) for i in range(1, raters + 1)]
            by_input[row["original_id"]][_same_text(row[text])].extend(ratings)
    expected = sum(
        abs(statistics.fmean(a) - statistics.fmean(b)) >= 10 - 1e-12
        for texts in by_input.values()
        for a, b in combinations(texts.values(), 2)
    )
    stats = build_suite(name, path).stats()
    assert stats["pairs"] == expected > 0
    assert stats["skipped"] == {"empty candidate text": sum(not r[text].strip() for r in rows)}


def test_asset_pairwise_counts_equal_an_independent_count():
    path, rows = _fixture_rows("asset_pairwise")
    judged = [r for r in rows if r["winner"] != "similar"]
    tests = [r for r in judged if r["asset_simplification"] != r["other_simplification"]]
    stats = build_suite("asset_pairwise", path).stats()
    assert stats["pairs"] == len(tests) > 0
    assert stats["breakdowns"]["category"] == dict(Counter(r["aspect"] for r in tests))
    same = sum(r["asset_simplification"] == r["other_simplification"] for r in rows)
    assert stats["skipped"]["the two responses are the same text"] == same


def test_copilot_arena_counts_equal_an_independent_count(tmp_path):
    path, rows = _fixture_rows("copilot_arena")
    tests = [
        r
        for r in rows
        if r["completion_a"].strip()
        and r["completion_b"].strip()
        and _same_text(r["completion_a"]) != _same_text(r["completion_b"])
    ]
    assert any(not r["suffix"].strip() for r in tests)  # the cursor at the end of the file
    suite = build_suite("copilot_arena", path)
    assert len(suite.pairs) == len(tests) > 0
    assert suite.manifest.optional_context_fields == ["prefix", "suffix"]
    assert [p.context["suffix"] for p in suite.pairs].count("") == sum(
        not r["suffix"] for r in tests
    )
    assert "\r\n" in suite.pairs[0].context["prefix"]  # a quoted field keeps its line ends
    broken = tmp_path / "copilot.csv"
    broken.write_text(path.read_text("utf-8") + '"def broken():\n    pass"\n', "utf-8")
    with pytest.raises(SourceFormatError, match=r"copilot.csv:\d+: row has 1 fields"):
        build_suite("copilot_arena", broken)
    stats = build_suite("copilot_arena", broken, skip_malformed=True).stats()
    assert stats["pairs"] == len(tests)
    assert stats["skipped"]["malformed row: row has 1 fields, the header 7"] == 1


@pytest.mark.parametrize(
    ("aspect", "value", "scale"),
    [("overall", 40, "[1, 5]"), ("understandability", 3, "[0, 1]"), ("coherence", 0.5, "[1, 3]")],
)
def test_a_rating_beyond_usrs_scales_is_the_rows_fault(tmp_path, aspect, value, scale):
    # topical_chat_usr declared no bounds: an overall of 40 (for 4.0) built one test more, exit 0;
    # then one scale for all (0-5): an understandability of 3 (scale 0-1) built 5 more
    shipped = ADAPTERS.get("topical_chat_usr").folder() / "data" / "topical_chat.json"
    items = json.loads(shipped.read_text("utf-8"))
    items[3]["scores"][aspect] = value
    edited = tmp_path / "topical_chat.json"
    edited.write_text(json.dumps(items, indent=1), "utf-8")
    fault = rf"json:\d+: column 'scores\.{aspect}': {value} out of range {re.escape(scale)}"
    with pytest.raises(SourceFormatError, match=fault):
        build_suite("topical_chat_usr", edited)
    stats = build_suite("topical_chat_usr", edited, skip_malformed=True).stats()
    assert stats["skipped"] == {
        f"malformed row: column 'scores.{aspect}': value out of range {scale}": 1
    }


def _one_group_alone(items):
    key = (items[0]["source"], items[0]["context"])
    return [i for i in items if (i["source"], i["context"]) != key] + items[:1]


@pytest.mark.parametrize(
    ("edit", "fault"),
    [
        (
            lambda items: items.insert(1, items[0]),
            r"json:\d+: duplicate candidate: .* group 'so , i .*"
            r"\(2,684 characters\) \(first at topical_chat\.json:\d+\)",
        ),
        (
            _one_group_alone,
            r"source\.yaml:\d+: group 'so , i .* \(topical_chat\.json:\d+\) has one",
        ),
        (
            lambda items: items[3]["scores"].update(overall="x" * 5000),
            r"json:\d+: column 'scores\.overall': 'x{99}\.\.\. \(5,002 characters\) is not a "
            "number",
        ),
    ],
)
def test_an_error_quotes_a_long_group_id_or_value_shortened(tmp_path, edit, fault):
    # a topical_chat_usr group id is the whole dialogue and its fact: a repeated item printed
    # all 2,684 characters of it on one line (and a 5,000-character rating its whole value)
    shipped = ADAPTERS.get("topical_chat_usr").folder() / "data" / "topical_chat.json"
    items = json.loads(shipped.read_text("utf-8"))
    items = edit(items) or items
    edited = tmp_path / "topical_chat.json"
    edited.write_text(json.dumps(items, indent=1), "utf-8")
    with pytest.raises(NNDError, match=fault) as raised:
        build_suite("topical_chat_usr", edited)
    assert len(str(raised.value)) < 600, str(raised.value)
