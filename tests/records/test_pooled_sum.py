"""Pooling identical texts keeps each candidate's aggregate meaning (issue 33 §6).

Under ``identical_texts: pool`` with ``aggregate: sum`` and unnamed raters, two systems' identical
summary rated 3 by each of 3 workers was pooled to 6 ratings summing to 18 and beat a summary
rated 5 by three (15), while ``systems`` ranked them the other way. Without rater names the
pooled text's score is now the mean of its candidates' own sums (9), and tests and human
scores are judged on that same pooled candidate.
"""

from __future__ import annotations

from nnd_suites import build_suite
from nnd_suites.human.scores import human_scores
from nnd_suites.records.groups import Candidate
from nnd_suites.records.pooled_ratings import pool

SUM_MAP = """\
name: crowd_sum
description: Sum of the three workers' ratings, better by at least 2.
labels: [worse]
rating_rule: {kind: numeric, rating: rating, aggregate: sum, minimum_gap: 2, low_label: worse}
"""
#: simpeval_2022's columns (its shipped fixture's header): three unnamed workers per output
HEADER = "original_id,original,generation,system,sentence_type,rating_1,rating_2,rating_3\n"


def build(tmp_path, *rows: str):
    (tmp_path / "sum.yaml").write_text(SUM_MAP)
    (tmp_path / "rows.csv").write_text(HEADER + "\n".join(rows) + "\n")
    return build_suite("simpeval_2022", tmp_path / "rows.csv", quality_map=tmp_path / "sum.yaml")


def test_a_pooled_sum_of_unnamed_raters_stays_on_one_candidates_scale(tmp_path):
    suite = build(
        tmp_path,
        "0,The long sentence.,Same summary.,A,split,3,3,3",
        "0,The long sentence.,Same summary.,B,split,3,3,3",
        "0,The long sentence.,Better summary.,C,split,5,5,5",
    )
    # A and B: sums 9 and 9 -> pooled 9, not 18; C: 15 beats each (pairs_per: candidate)
    assert [(p.high.systems, p.high.score, p.low.systems, p.low.score) for p in suite.pairs] == [
        (["C"], 15.0, ["A"], 9.0),
        (["C"], 15.0, ["B"], 9.0),
    ]
    scores = human_scores(suite)
    assert {name: s.human_score for name, s in scores.systems.items()} == {
        "C": 15.0,
        "A": 9.0,
        "B": 9.0,
    }
    assert next(iter(scores.systems)) == "C"  # ranked as the tests rank them


def test_human_scores_use_the_pooled_ratings_the_tests_use(tmp_path):
    # A (sum 3) and B (sum 15) wrote the same text: pooled 9 for both; D's other text sums to 3
    suite = build(
        tmp_path,
        "0,The long sentence.,Same summary.,A,split,1,1,1",
        "0,The long sentence.,Same summary.,B,split,5,5,5",
        "0,The long sentence.,Other summary.,D,split,1,1,1",
    )
    assert [(p.high.systems, p.high.score, p.low.score) for p in suite.pairs] == [
        (["A"], 9.0, 3.0),
        (["B"], 9.0, 3.0),
    ]
    # each system scores the text as its tests do, not its own sum (3 and 15)
    scores = human_scores(suite)
    assert {name: s.human_score for name, s in scores.systems.items()} == {
        "A": 9.0,
        "B": 9.0,
        "D": 3.0,
    }


def test_named_raters_pool_rater_by_rater_unless_a_sum_would_grow():
    same = [
        Candidate(text="t", systems=["A"], ratings={"r": [3, 3, 3]}, raters=["w1", "w2", "w3"]),
        Candidate(text="t", systems=["B"], ratings={"r": [1, 3, 5]}, raters=["w1", "w2", "w3"]),
    ]
    # one set of raters: each counts once with their mean, a sum over the same three raters
    assert pool(same, sum, grows_with_raters=True).ratings == {"r": [2.0, 3.0, 4.0]}
    other_raters = [same[0], same[1].model_copy(update={"raters": ["w4", "w5", "w6"]})]
    # six raters would sum to 18: the mean of the two sums (9) keeps the scale
    assert pool(other_raters, sum, grows_with_raters=True).ratings == {"r": [9.0]}
    assert pool(other_raters, sum, grows_with_raters=True).raters is None
    # a mean does not grow with its raters: pooled rater by rater
    assert pool(other_raters, max).raters == ["w1", "w2", "w3", "w4", "w5", "w6"]
