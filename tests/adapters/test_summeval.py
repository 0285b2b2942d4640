"""summeval: the strict-majority-of-5 rule, checked on the fixture with counts derived by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.errors import SourceFormatError

FIXTURE = get_adapter("summeval").folder() / "fixtures"
SOURCE = FIXTURE / "model_annotations.aligned.paired.sample.jsonl"


def test_rule_on_the_fixture_matches_counts_derived_by_hand():
    # Expert ratings of the fixture, high = at least 2 of the 3 experts gave a 5:
    #  article dm-...eee2: consistency high M0 [5,5,4], M8 [5,5,5]; low M17 [3,5,4], M22 [2,1,3]
    #                      coherence   high M8 [5,5,4], M17 [5,2,5]; low M0 [4,4,3], M22 [3,3,3]
    #                      fluency     high M0 [5,5,5], M17 [5,5,2]; low M8 [5,4,4], M22 [4,4,5]
    #                      relevance   high M8 [5,5,3], M22 [5,5,5]; low M0 [5,4,4], M17 [4,4,4]
    #                      -> 2 x 2 = 4 tests per aspect
    #  article cnn-...a0a0: consistency high M0, M9; low M23 -> 2; coherence high M9; low M0, M23
    #                      -> 2; fluency high M0, M9; low M23 -> 2; relevance high M9, M23;
    #                      low M0 -> 2
    #  article dm-...cb5:  consistency all high -> 0; coherence high M1, M2; low M5 -> 2;
    #                      fluency all high -> 0; relevance high M1; low M2, M5 -> 2
    expected = {
        "consistency": 4 + 2 + 0,
        "coherence": 4 + 2 + 2,
        "fluency": 4 + 2 + 0,
        "relevance": 4 + 2 + 2,
    }
    suite = build_suite("summeval", SOURCE)
    stats = suite.stats()
    assert stats["breakdowns"]["aspect"] == expected
    assert stats["pairs"] == sum(expected.values()) == 28
    assert stats["groups"] == 3 and stats["candidates"] == 10
    consistency = {
        (p.group_id[-4:], p.high.systems[0], p.low.systems[0])
        for p in suite.pairs
        if p.aspect == "consistency"
    }
    assert consistency == {
        ("eee2", "M0", "M17"),
        ("eee2", "M0", "M22"),
        ("eee2", "M8", "M17"),
        ("eee2", "M8", "M22"),
        ("a0a0", "M0", "M23"),
        ("a0a0", "M9", "M23"),
    }
    assert all(p.context["document"] for p in suite.pairs)


def test_crowd_workers_and_reference_split(tmp_path):
    # Crowd workers in the fixture: the experts' 3 ratings plus two 5s, 3 of 5 fives needed.
    # consistency: article eee2: high M0 [5,5,4,5,5], M8, M17 [3,5,4,5,5]; low M22 [2,1,3,5,5]
    # -> 3 tests; a0a0: high M0, M9 [5,4,5,5,5]; low M23 [4,4,4,5,5] -> 2 tests; cb5: all high.
    suite = build_suite("summeval", SOURCE, annotators="turker")
    consistency = [p for p in suite.pairs if p.aspect == "consistency"]
    assert len(consistency) == 3 + 2
    # split=test keeps the records at odd 0-based positions: M8, M22 (eee2), M9 (a0a0), M1, M5
    test_half = build_suite("summeval", SOURCE, split="test")
    assert test_half.stats()["candidates"] == 5
    # consistency: eee2 M8 high, M22 low -> 1; a0a0 alone -> 0; cb5 M1, M5 both high -> 0
    assert {(p.high.systems[0], p.low.systems[0]) for p in test_half.pairs} >= {("M8", "M22")}
    assert {s for p in test_half.pairs for s in p.high.systems + p.low.systems} <= {
        "M8",
        "M22",
        "M9",
        "M1",
        "M5",
    }
    assert sum(test_half.stats()["skipped"].values()) == 5


def write(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "paired.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def record(**changes) -> dict:
    scores = {"coherence": 5, "consistency": 5, "fluency": 5, "relevance": 5}
    base = {
        "id": "dm-test-1",
        "model_id": "M0",
        "decoded": "a summary .",
        "text": "An article.",
        "expert_annotations": [scores, scores, scores],
    }
    return {**base, **changes}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"text": None}, "text"),
        ({"expert_annotations": [{"coherence": 6}]}, "missing required field"),
        (
            {
                "expert_annotations": [
                    {"coherence": 6, "consistency": 5, "fluency": 5, "relevance": 5}
                ]
            },
            "coherence: 6 out of range \\[1, 5\\]",
        ),
        ({"text": "Another article."}, "article text differs"),
    ],
)
def test_malformed_records_name_their_line(tmp_path, bad, message):
    changes = {k: v for k, v in bad.items() if v is not None}
    second = record(model_id="M1", **changes)
    if bad.get("text", "") is None:
        del second["text"]
    path = write(tmp_path, [record(), second])
    with pytest.raises(SourceFormatError, match=message) as error:
        build_suite("summeval", path)
    assert error.value.line == 2
    # Skipped, the row is counted; one summary left gives no pair, which is an error saying so.
    with pytest.raises(SourceFormatError, match=r"no pair built: .* malformed row: [^;]*: 1;"):
        build_suite("summeval", path, skip_malformed=True)
