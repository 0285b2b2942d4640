"""Quality maps: the schema, partial orders, rating rules, hierarchies, and their errors."""

from __future__ import annotations

import pytest
import yaml

from nnd_suites import Candidate, QualityMap, QualityMapError, UnknownItemError
from nnd_suites.quality_map import Assessment, builtin_quality_maps


def qmap(**fields) -> QualityMap:
    data = {"name": "t", "description": "test map", "labels": ["good", "bad"], **fields}
    return QualityMap.from_dict(data, origin="t.yaml")


def cand(label=None, **kw) -> Candidate:
    return Candidate(text="x", systems=["s"], label=label, where="f.jsonl:7", **kw)


def test_every_shipped_map_loads():
    maps = builtin_quality_maps()
    assert {"quiz_design", "challenge300"} <= set(maps)
    for name in maps:
        assert QualityMap.load(name).name == name


def test_load_from_yaml_file(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(
        yaml.safe_dump(
            {"name": "m", "description": "d", "labels": ["a", "b"], "tiers": [["a"], ["b"]]}
        )
    )
    m = QualityMap.load(path)
    assert m.better(Assessment(label="a"), Assessment(label="b"))
    assert not m.better(Assessment(label="b"), Assessment(label="a"))


def test_unknown_map_name():
    with pytest.raises(UnknownItemError, match="unknown quality map 'nope'.*quiz_design"):
        QualityMap.load("nope")


def test_schema_violation_names_file_and_place():
    with pytest.raises(QualityMapError, match=r"t\.yaml, at tiers\.0: .*valid list; fix the value"):
        qmap(tiers=["good"])


def test_a_bad_value_of_a_union_is_placed_at_its_key_not_its_branch():
    # was "at hierarchy.separator.constrained-str": pydantic's name of the branch tried
    with pytest.raises(QualityMapError, match=r"t\.yaml, at hierarchy\.separator: .*valid string"):
        qmap(hierarchy={"separator": 5})


def test_partial_order_leaves_incomparable_labels_unpaired():
    # The paper's case: "Not Fluent" and "Not Factual" are both worse than "No Error" but their
    # difference is unknown.
    m = QualityMap.from_dict(
        {
            "name": "fig1",
            "description": "d",
            "labels": ["No Error", "Not Fluent", "Not Factual", "Gibberish"],
            "better_than": [
                ["No Error", "Not Fluent"],
                ["No Error", "Not Factual"],
                ["Not Fluent", "Gibberish"],
            ],
        }
    )
    a = {label: Assessment(label=label) for label in m.labels}
    assert m.better(a["No Error"], a["Not Fluent"])
    assert m.better(a["No Error"], a["Gibberish"])  # transitive
    assert not m.better(a["Not Fluent"], a["Not Factual"])
    assert not m.better(a["Not Factual"], a["Not Fluent"])
    assert not m.better(a["Not Factual"], a["Gibberish"])


def test_cycle_is_named():
    with pytest.raises(QualityMapError, match=r"cycle in the order: .*a > b > c > a") as info:
        QualityMap.from_dict(
            {
                "name": "c",
                "description": "d",
                "labels": ["a", "b", "c"],
                "better_than": [["a", "b"], ["b", "c"], ["c", "a"]],
            },
            origin="cyc.yaml",
        )
    assert "cyc.yaml" in str(info.value)
    assert set(info.value.labels) == {"a", "b", "c"}


def test_cycle_between_tiers_and_edges():
    with pytest.raises(QualityMapError, match="cycle"):
        qmap(tiers=[["good"], ["bad"]], better_than=[["bad", "good"]])


def test_unknown_label_in_order():
    with pytest.raises(QualityMapError, match=r"unknown label\(s\) \['ugly'\]"):
        qmap(tiers=[["good"], ["ugly"]])


def test_label_in_two_tiers_is_a_contradiction():
    with pytest.raises(QualityMapError, match="contradiction: label 'good' is in tiers 0 and 1"):
        qmap(tiers=[["good"], ["good", "bad"]])


def test_ordered_and_excluded_is_a_contradiction():
    with pytest.raises(QualityMapError, match="both ordered and excluded"):
        qmap(tiers=[["good"], ["bad"]], exclude=["bad"])


def test_label_used_by_data_but_absent_from_map():
    m = qmap(tiers=[["good"], ["bad"]])
    with pytest.raises(QualityMapError, match=r"f.jsonl:7: candidate has label 'meh'.*absent"):
        m.assess(cand("meh"), None)


def test_excluded_label_is_reported_not_paired():
    m = qmap(labels=["good", "bad", "unsure"], tiers=[["good"], ["bad"]], exclude=["unsure"])
    assert m.assess(cand("unsure"), None).excluded == "label 'unsure' takes no part (quality map t)"


def test_majority_top_rule_per_aspect():
    m = qmap(
        labels=["high", "low"],
        tiers=[["high"], ["low"]],
        rating_rule={
            "kind": "majority_top",
            "aspects": ["fluency", "relevance"],
            "top": 5,
            "high_label": "high",
            "low_label": "low",
        },
    )
    assert m.views == ["fluency", "relevance"]
    c = cand(ratings={"fluency": [5, 5, 4], "relevance": [5, 4, 4]})
    assert m.assess(c, "fluency").label == "high"  # 2 of 3 is a strict majority
    assert m.assess(c, "relevance").label == "low"
    tie = cand(ratings={"fluency": [5, 5, 4, 4], "relevance": [5]})
    assert m.assess(tie, "fluency").label == "low"  # half is not a strict majority


def test_graded_rule_levels_and_unknown_level():
    m = qmap(
        labels=["correct", "incorrect"],
        tiers=[["correct"], ["incorrect"]],
        rating_rule={
            "kind": "graded",
            "rating": "credit",
            "levels": {"1": "correct", "0": "incorrect"},
            "exclude": ["0.5"],
        },
    )
    assert m.assess(cand(ratings={"credit": [1.0]}), None).label == "correct"
    assert m.assess(cand(ratings={"credit": [0.5]}), None).excluded
    with pytest.raises(QualityMapError, match=r"credit level '0.7'.*neither compares"):
        m.assess(cand(ratings={"credit": [0.7]}), None)


def test_graded_level_both_compared_and_excluded():
    with pytest.raises(QualityMapError, match="both compared and excluded"):
        qmap(
            labels=["correct"],
            rating_rule={
                "kind": "graded",
                "rating": "credit",
                "levels": {"1": "correct"},
                "exclude": ["1.0"],
            },
        )


def test_numeric_rule_minimum_gap():
    m = qmap(
        labels=["lower"],
        rating_rule={
            "kind": "numeric",
            "rating": "slider",
            "aggregate": "mean",
            "minimum_gap": 10,
            "low_label": "lower",
        },
    )
    high = m.assess(cand(ratings={"slider": [80, 90]}), None)
    near = m.assess(cand(ratings={"slider": [78, 80]}), None)
    low = m.assess(cand(ratings={"slider": [70, 75]}), None)
    assert high.score == 85
    assert m.better(high, low)  # 85 - 72.5 >= 10
    assert not m.better(high, near)  # 85 - 79 < 10
    assert not m.better(low, high)


def test_rule_producing_unknown_label():
    with pytest.raises(QualityMapError, match=r"rating_rule produces label\(s\) \['low'\]"):
        qmap(
            labels=["high"],
            rating_rule={
                "kind": "majority_top",
                "aspects": ["a"],
                "top": 5,
                "high_label": "high",
                "low_label": "low",
            },
        )


def test_hierarchy_paths_and_strictness():
    m = qmap(
        labels=["NoE", "RelE", "Other"],
        tiers=[["NoE"], ["RelE", "Other"]],
        hierarchy={"parents": {"RelE": "Semantic Frame", "Semantic Frame": "Consistency"}},
    )
    assert m.category_path("RelE") == ["Consistency", "Semantic Frame", "RelE"]
    with pytest.raises(QualityMapError, match="category 'Other' is not in the hierarchy"):
        m.category_path("Other")
    mqm = qmap(tiers=[["good"], ["bad"]], hierarchy={"separator": "/"})
    assert mqm.category_path("Major", "Accuracy/Mistranslation") == ["Accuracy", "Mistranslation"]


def test_hierarchy_cycle():
    with pytest.raises(QualityMapError, match="cycle in the hierarchy"):
        qmap(tiers=[["good"], ["bad"]], hierarchy={"parents": {"a": "b", "b": "a"}})
