"""Numeric ratings: per-aspect views, conflicting ratings, candidates without a rating."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import nnd_suites
from nnd_suites import Candidate, Group, QualityMap, QualityMapError
from nnd_suites.builder.pairs import build_pairs

REPO = Path(__file__).resolve().parents[2]
ASPECTS = ["fluency", "adequacy", "coherence", "style", "overall"]


def numeric_map(**rule) -> QualityMap:
    return QualityMap.from_dict(
        {
            "name": "crowd",
            "description": "per aspect, mean of raters, a pair when means differ by >= 20",
            "labels": ["lower"],
            "rating_rule": {
                "kind": "numeric",
                "aggregate": "mean",
                "minimum_gap": 20,
                "low_label": "lower",
                **rule,
            },
        }
    )


def crowd_source() -> list[Group]:
    """Two inputs, three systems each, 0-100 ratings by three raters on five aspects.

    g1: A means 90 on every aspect, B 60, C 80 except 'style' (40): pairs per aspect are
    A>B (30) everywhere, C>B (20) on four aspects, A>C (50) and B>C (20) on style.
    g2: D 50 and E 35 everywhere (gap 15: no pair), F has no 'overall' rating.
    """

    def cand(text, system, means):
        ratings = {aspect: [mean - 5, mean, mean + 5] for aspect, mean in means.items()}
        return Candidate(text=text, systems=[system], ratings=ratings, where=f"{system}.tsv:2")

    rated = {
        "g1": (("a", "A", 90), ("b", "B", 60), ("c", "C", 80)),
        "g2": (("d", "D", 50), ("e", "E", 35), ("f", "F", 95)),
    }
    groups = []
    for gid, systems in rated.items():
        candidates = [
            cand(text, name, dict.fromkeys(ASPECTS, mean)) for text, name, mean in systems
        ]
        groups.append(
            Group(id=gid, context={"input": f"<table>{gid}</table>"}, candidates=candidates)
        )
    groups[0].candidates[2].ratings["style"] = [35, 40, 45]
    del groups[1].candidates[2].ratings["overall"]
    return groups


def test_numeric_aspects_are_independent_views_and_categories():
    result = build_pairs(crowd_source(), numeric_map(aspects=ASPECTS))
    found = [(p.aspect, p.high.text, p.low.text, p.score_gap) for p in result.pairs]
    g1 = [row for row in found if row[1] in "abc" and row[2] in "abc"]
    expected = []
    for aspect in ASPECTS:
        if aspect == "style":
            expected += [(aspect, "a", "b", 30.0), (aspect, "a", "c", 50.0)]
            expected += [(aspect, "b", "c", 20.0)]
        else:
            expected += [(aspect, "a", "b", 30.0), (aspect, "c", "b", 20.0)]
    assert g1 == expected
    # F (95) beats D (50) and E (35) on the four aspects it was rated on.
    assert [row for row in found if row[1] == "f"] == [
        (aspect, "f", low, gap)
        for aspect in ASPECTS[:-1]
        for low, gap in (("d", 45.0), ("e", 60.0))
    ]
    assert {p.category for p in result.pairs} == set(ASPECTS)
    assert all(p.category_path == [p.aspect, "lower"] for p in result.pairs)
    # Counts are per group and candidate, not multiplied by the aspects.
    assert result.counts["groups"] == 2 and result.counts["candidates"] == 6
    # F has no 'overall' rating: a counted skip naming the view, not an error.
    assert result.skipped.counts == {"no rating [overall]": 1}
    assert result.skipped.examples["no rating [overall]"] == ["F.tsv:2"]


def test_single_rating_numeric_skips_a_candidate_without_it():
    result = build_pairs(crowd_source(), numeric_map(rating="overall"))
    assert result.skipped.counts == {"no 'overall' rating": 1}
    assert [(p.high.text, p.low.text) for p in result.pairs] == [("a", "b"), ("c", "b")]
    assert all(p.aspect is None and p.category == "lower" for p in result.pairs)


def test_identical_texts_scored_separately_with_different_scores_are_conflicting_ratings():
    group = Group(
        id="g",
        context={"input": "i"},
        candidates=[
            Candidate(text="same", systems=["A"], ratings={"overall": [90]}),
            Candidate(text="same", systems=["B"], ratings={"overall": [40]}),
            Candidate(text="other", systems=["C"], ratings={"overall": [10]}),
        ],
    )
    separate = numeric_map(rating="overall", identical_texts="separate")
    result = build_pairs([group], separate)
    assert result.skipped.counts == {"same text given conflicting ratings": 2}
    assert result.pairs == []
    data = {**separate.data, "conflicting_labels": "keep"}
    kept = build_pairs([group], QualityMap.from_dict(data))
    assert kept.conflicts.counts == {"same text given conflicting ratings": 1}
    assert [(p.high.systems, p.low.text) for p in kept.pairs] == [
        (["A"], "same"),
        (["A"], "other"),
        (["B"], "other"),
    ]


@pytest.mark.parametrize("rule", [{}, {"rating": "overall", "aspects": ASPECTS}])
def test_numeric_needs_rating_or_aspects(rule):
    with pytest.raises(QualityMapError, match="give either 'rating' .* or 'aspects'"):
        numeric_map(**rule)


def gap_source(high: list[float], low: list[float]) -> list[Group]:
    """One input, two systems whose mean ratings of 'quality' are ``high`` and ``low``."""
    candidates = [
        Candidate(text=text, systems=[text.upper()], ratings={"quality": values})
        for text, values in (("h", high), ("l", low))
    ]
    return [Group(id="g", context={"input": "x"}, candidates=candidates)]


# Means 80 (70, 80, 90) and 60 (55, 60, 65) differ by exactly 20; 0.1 + 0.2 style float noise
# in (60.1, 60.2, 60.3) -> 60.2 against 40.2 is also a gap of "exactly" 20.
@pytest.mark.parametrize(
    ("high", "low"), [([70, 80, 90], [55, 60, 65]), ([60.1, 60.2, 60.3], [40.1, 40.2, 40.3])]
)
def test_a_gap_of_exactly_the_bound_counts_at_least_but_not_more_than(high, low):
    at_least = build_pairs(gap_source(high, low), numeric_map(rating="quality"))
    assert [(p.high.text, p.low.text) for p in at_least.pairs] == [("h", "l")]
    strict = numeric_map(rating="quality", minimum_gap=None, minimum_gap_exclusive=20)
    assert build_pairs(gap_source(high, low), strict).pairs == []
    wider = build_pairs(gap_source([h + 0.5 for h in high], low), strict)
    assert [(p.high.text, p.low.text, p.score_gap) for p in wider.pairs] == [("h", "l", 20.5)]


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ({"minimum_gap": 20, "minimum_gap_exclusive": 20}, "not both"),
        ({"minimum_gap": None}, "give either 'minimum_gap'"),
        ({"minimum_gap": None, "minimum_gap_exclusive": -1}, "minimum_gap_exclusive: "),
        ({"minimum_gap": 0}, "must be > 0"),
        # within the comparison's tolerance, a tie would give two opposite tests
        ({"minimum_gap": 1e-13}, r"must be more than 1e-12 .*minimum_gap_exclusive: 0"),
        ({"minimum_gap": "20"}, "must be a number"),
    ],
)
def test_numeric_bounds_are_one_of_two_and_checked(bounds, message):
    rule = {"kind": "numeric", "rating": "q", "aggregate": "mean", "low_label": "lower"}
    rule.update({"minimum_gap": 20, **bounds})
    rule = {key: value for key, value in rule.items() if value is not None}
    with pytest.raises(QualityMapError, match=message):
        QualityMap.from_dict(
            {"name": "crowd", "description": "d", "labels": ["lower"], "rating_rule": rule}
        )


def test_numeric_pairs_read_high_as_better_and_low_as_its_grade():
    result = build_pairs(crowd_source(), numeric_map(aspects=ASPECTS))
    assert result.pairs
    for pair in result.pairs:
        assert (pair.high.label, pair.low.label, pair.label) == ("better", "lower", "lower")
        assert pair.category_path == [pair.aspect, "lower"]
        assert pair.high.score - pair.low.score >= 20
    named = numeric_map(aspects=ASPECTS, high_label="higher")
    assert {p.high.label for p in build_pairs(crowd_source(), named).pairs} == {"higher"}


def test_the_json_schema_takes_exactly_one_numeric_bound():
    schema_file = Path(nnd_suites.__file__).parent / "schemas" / "quality_map.schema.json"
    validator = jsonschema.Draft202012Validator(json.loads(schema_file.read_text()))
    rule = {"kind": "numeric", "rating": "q", "aggregate": "mean", "low_label": "lower"}
    base = {"name": "crowd", "description": "d", "labels": ["lower"]}
    bounds = [{"minimum_gap": 20}, {"minimum_gap_exclusive": 20}, {}]
    valid = [
        validator.is_valid({**base, "rating_rule": {**rule, **bound}})
        for bound in [*bounds, {"minimum_gap": 20, "minimum_gap_exclusive": 20}]
    ]
    assert valid == [True, True, False, False]
    strict = numeric_map(rating="q", minimum_gap=None, minimum_gap_exclusive=20)
    assert strict.rule.minimum_gap_exclusive == 20 and strict.rule.minimum_gap is None


@pytest.mark.parametrize(
    ("adapter", "fixture", "map_name", "good", "typo"),
    [  # a declared source and a class adapter reach the same check
        ("sfhot", "sfhot_sample.json", "sfhot", "naturalness", "naturalnes"),
        (
            "summeval",
            "model_annotations.aligned.paired.sample.jsonl",
            "summeval",
            "coherence",
            "coherance",
        ),
    ],
)
def test_a_map_aspect_no_candidate_of_the_source_carries_is_an_error(
    tmp_path, adapter, fixture, map_name, good, typo
):
    shipped = REPO / "quality_maps" / f"{map_name}.yaml"
    misspelt = tmp_path / f"{map_name}.yaml"
    misspelt.write_text(shipped.read_text("utf-8").replace(good, typo), "utf-8")
    source = REPO / "adapters" / adapter / "fixtures" / fixture
    with pytest.raises(QualityMapError) as caught:
        nnd_suites.build_suite(adapter, source, quality_map=misspelt)
    message = str(caught.value)
    assert f"{misspelt}:14, at rating_rule.aspects" in message  # the map file and its line
    assert f"rating_rule reads [{typo!r}], which no candidate of the source carries" in message
    assert repr(good) in message  # the aspects the source does give
    assert caught.value.exit_status == 4


def test_an_aspect_some_candidates_lack_stays_a_counted_skip():
    # only F lacks 'overall' (crowd_source): partial coverage, not a misspelt aspect
    result = build_pairs(crowd_source(), numeric_map(aspects=ASPECTS))
    assert result.skipped.counts == {"no rating [overall]": 1}
    with pytest.raises(QualityMapError, match=r"reads \['overal'\], which no candidate"):
        build_pairs(crowd_source(), numeric_map(aspects=[*ASPECTS[:-1], "overal"]))
