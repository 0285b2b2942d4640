"""The pair builder: all pairs of known differing quality, validated, nothing dropped silently."""

from __future__ import annotations

import pytest

from nnd_suites import Candidate, Group, QualityMap
from nnd_suites.builder.pairs import build_pairs
from nnd_suites.errors import SourceFormatError

QD_MAP = QualityMap.load("quiz_design")


def group(*cands, gid="g1", context=None) -> Group:
    return Group(
        id=gid,
        context=context or {"answer": "a", "paragraph": "p"},
        candidates=[
            Candidate(text=t, systems=s, label=lab, where=f"f:{i}")
            for i, (t, s, lab) in enumerate(cands)
        ],
    )


def test_all_pairs_of_differing_quality_in_source_order():
    g = group(
        ("good 1", ["A"], "No error"),
        ("bad 1", ["B"], "disfluent"),
        ("good 2", ["C"], "No error"),
        ("bad 2", ["D"], "off_target"),
    )
    result = build_pairs([g], QD_MAP)
    assert [(p.high.text, p.low.text) for p in result.pairs] == [
        ("good 1", "bad 1"),
        ("good 1", "bad 2"),
        ("good 2", "bad 1"),
        ("good 2", "bad 2"),
    ]
    assert [p.category for p in result.pairs] == ["disfluent", "off_target"] * 2
    assert result.counts["pairs"] == 4


def test_errors_are_not_compared_with_each_other():
    g = group(("bad 1", ["B"], "disfluent"), ("bad 2", ["D"], "off_target"))
    result = build_pairs([g], QD_MAP)
    assert result.pairs == []
    assert result.counts["groups_without_pairs"] == 1


def test_identical_texts_with_same_label_are_merged():
    g = group(("good", ["A"], "No error"), ("good", ["B"], "No error"), ("bad", ["C"], "disfluent"))
    per_candidate = build_pairs([g], QD_MAP)
    # One test per annotated candidate (the published figures count this way) ...
    assert len(per_candidate.pairs) == 2
    assert [p.high.systems for p in per_candidate.pairs] == [["A"], ["B"]]
    assert per_candidate.counts["pairs_repeating_texts"] == 1
    # ... or one test per distinct text, systems merged.
    per_text = build_pairs([g], QualityMap.from_dict({**QD_MAP.data, "pairs_per": "text"}))
    assert len(per_text.pairs) == 1
    assert per_text.pairs[0].high.systems == ["A", "B"]


def test_conflicting_labels_for_one_text_are_excluded_and_reported():
    g = group(
        ("same", ["A"], "No error"), ("same", ["B"], "disfluent"), ("other", ["C"], "off_target")
    )
    result = build_pairs([g], QD_MAP)
    assert result.pairs == []
    assert result.skipped.counts["same text given conflicting labels"] == 2
    assert (
        "'same' by [['A'], ['B']]"
        in result.skipped.examples["same text given conflicting labels"][0]
    )


def test_empty_candidate_text_is_skipped_with_its_location():
    g = group(("good", ["A"], "No error"), ("   ", ["B"], "disfluent"))
    result = build_pairs([g], QD_MAP)
    assert result.pairs == []
    assert result.skipped.counts["empty candidate text"] == 1
    assert result.skipped.examples["empty candidate text"] == ["f:1"]


def test_empty_candidate_kept_when_the_source_judged_it():
    g = group(("good", ["A"], "No error"), ("", ["B"], "disfluent"))
    assert len(build_pairs([g], QD_MAP, allow_empty=True).pairs) == 1


def test_empty_context_field_skips_the_group():
    g = group(
        ("good", ["A"], "No error"),
        ("bad", ["B"], "disfluent"),
        context={"answer": "", "paragraph": "p"},
    )
    result = build_pairs([g], QD_MAP)
    assert result.pairs == []
    assert result.skipped.counts["empty context field(s) ['answer']"] == 2


def test_duplicate_candidate_is_a_source_error():
    # a fault of the source file (exit status 3), not a usage error (2, as it was)
    g = group(("good", ["A"], "No error"), ("good", ["A"], "No error"))
    with pytest.raises(SourceFormatError, match="f:1: duplicate candidate: system 'A' gives"):
        build_pairs([g], QD_MAP)


def test_repeated_group_id_is_a_source_error():
    g = group(("good", ["A"], "No error"))
    with pytest.raises(SourceFormatError, match="group id 'g1' repeats"):
        build_pairs([g, g], QD_MAP)


def test_unknown_label_stops_the_build_naming_the_item():
    g = group(("good", ["A"], "No error"), ("bad", ["B"], "grammar"))
    with pytest.raises(Exception, match=r"f:1: candidate has label 'grammar'"):
        build_pairs([g], QD_MAP)


def test_pair_ids_are_stable_content_hashes():
    g = group(("good", ["A"], "No error"), ("bad", ["B"], "disfluent"))
    first = build_pairs([g], QD_MAP).pairs[0].id
    assert first == build_pairs([g], QD_MAP).pairs[0].id
    changed = group(("good!", ["A"], "No error"), ("bad", ["B"], "disfluent"))
    assert build_pairs([changed], QD_MAP).pairs[0].id != first


def test_likert_views_pair_per_aspect():
    m = QualityMap.from_dict(
        {
            "name": "lk",
            "description": "d",
            "labels": ["high", "low"],
            "tiers": [["high"], ["low"]],
            "rating_rule": {
                "kind": "majority_top",
                "aspects": ["fluency", "coherence"],
                "top": 5,
                "high_label": "high",
                "low_label": "low",
            },
        }
    )
    g = Group(
        id="d1",
        context={"document": "doc"},
        candidates=[
            Candidate(
                text="s1", systems=["M0"], ratings={"fluency": [5, 5, 3], "coherence": [2, 2, 2]}
            ),
            Candidate(
                text="s2", systems=["M1"], ratings={"fluency": [4, 4, 4], "coherence": [5, 5, 5]}
            ),
        ],
    )
    pairs = build_pairs([g], m).pairs
    assert [(p.aspect, p.high.text, p.low.text) for p in pairs] == [
        ("fluency", "s1", "s2"),
        ("coherence", "s2", "s1"),
    ]
    assert len({p.id for p in pairs}) == 2


def test_numeric_pairs_keep_the_score_gap():
    m = QualityMap.from_dict(
        {
            "name": "num",
            "description": "d",
            "labels": ["lower"],
            "rating_rule": {
                "kind": "numeric",
                "rating": "score",
                "aggregate": "median",
                "minimum_gap": 10,
                "low_label": "lower",
            },
        }
    )
    g = Group(
        id="x",
        context={"src": "s"},
        candidates=[
            Candidate(text=t, systems=[t], ratings={"score": v})
            for t, v in (("a", [90, 80, 85]), ("b", [70, 72, 60]), ("c", [84]))
        ],
    )
    pairs = build_pairs([g], m).pairs
    assert [(p.high.text, p.low.text, p.score_gap) for p in pairs] == [
        ("a", "b", 15.0),
        ("c", "b", 14.0),
    ]


def test_conflicting_labels_kept_when_the_map_says_so():
    keep = QualityMap.from_dict({**QD_MAP.data, "conflicting_labels": "keep"})
    g = group(
        ("same", ["A"], "No error"), ("same", ["B"], "disfluent"), ("bad", ["C"], "off_target")
    )
    result = build_pairs([g], keep)
    assert [(p.high.text, p.low.text, p.low.systems) for p in result.pairs] == [
        ("same", "same", ["B"]),
        ("same", "bad", ["C"]),
    ]
    assert result.counts["conflicting_texts"] == 1
    assert result.counts["degenerate_pairs"] == 1
    assert sum(result.skipped.counts.values()) == 0
    assert result.conflicts.counts["same text given conflicting labels"] == 1
