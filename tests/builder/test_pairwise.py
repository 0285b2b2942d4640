"""Pairwise judgments: tests only where a person compared two texts, and the combination rules.

Every expected figure below is derived by hand in the comments from the judgments written here.
"""

from __future__ import annotations

import pytest

from nnd_suites.builder.budget import PairBudget
from nnd_suites.builder.judged_pairs import suite_candidates
from nnd_suites.builder.pairs import build_pairs
from nnd_suites.errors import NNDError, QualityMapError, SourceFormatError
from nnd_suites.quality_map import QualityMap
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.records.judgments import JudgedGroup, Judgment

CONTEXT = {"prompt": "How do I pick a lock?"}


def pairwise_map(**rule) -> QualityMap:
    return QualityMap.from_dict(
        {
            "name": "prefs",
            "description": "the preferred response beats the other",
            "labels": ["chosen", "rejected"],
            "tiers": [["chosen"], ["rejected"]],
            "pairwise": {"high_label": "chosen", "low_label": "rejected", **rule},
        }
    )


def judge(a: str, b: str, verdict: str, rater: str | None = None, **extra) -> Judgment:
    return Judgment(
        response_a=a, response_b=b, verdict=verdict, rater=rater, where=f"{rater}:{a}>{b}", **extra
    )


def made(result) -> list[tuple[str, str]]:
    return [(pair.high.text, pair.low.text) for pair in result.pairs]


# ------------------------------------------------------------ two judgments on one context


@pytest.fixture
def two_judgments_on_one_context() -> JudgedGroup:
    """Arena-style: one prompt, two comparisons of four different responses."""
    return JudgedGroup(
        id="g1",
        context=CONTEXT,
        judgments=[judge("W1", "L1", "a"), judge("L2", "W2", "b")],
    )


def test_only_the_compared_pairs_are_tests(two_judgments_on_one_context):
    result = build_pairs([two_judgments_on_one_context], pairwise_map())
    # W1 beat L1 and W2 beat L2: 2 tests; W1-L2 and W2-L1 were never compared.
    assert made(result) == [("W1", "L1"), ("W2", "L2")]
    assert all(pair.group_id == "g1" and pair.context == CONTEXT for pair in result.pairs)
    assert [pair.label for pair in result.pairs] == ["rejected", "rejected"]
    assert result.counts["groups"] == 1 and result.counts["candidates"] == 4


def test_the_same_data_as_candidate_labels_would_make_cross_pairs(two_judgments_on_one_context):
    """Why judgments are their own kind: labelled chosen/rejected per candidate in one group, the
    candidate builder pairs every winner with every loser (2 x 2 = 4, two of them never judged)."""
    labels = {"W1": "chosen", "L1": "rejected", "W2": "chosen", "L2": "rejected"}
    labelled = Group(
        id="g1",
        context=CONTEXT,
        candidates=[Candidate(text=t, systems=["s"], label=label) for t, label in labels.items()],
    )
    plain = QualityMap.from_dict({**pairwise_map().data, "pairwise": None} | {"name": "plain"})
    crossed = made(build_pairs([labelled], plain))
    assert sorted(crossed) == [("W1", "L1"), ("W1", "L2"), ("W2", "L1"), ("W2", "L2")]
    # A pairwise map refuses labelled candidates, naming the trap.
    with pytest.raises(NNDError, match="would pair a response that won one comparison"):
        build_pairs([labelled], pairwise_map())
    # ... and a map without the rule refuses judged groups, in the builder as in the suite's
    # candidate keeping.
    with pytest.raises(NNDError, match="f:1: the adapter emits judged pairs but quality map"):
        build_pairs([JudgedGroup(id="g", context=CONTEXT, judgments=[], where="f:1")], plain)
    with pytest.raises(NNDError, match="no 'pairwise' rule"):
        suite_candidates(JudgedGroup(id="g", context=CONTEXT, judgments=[]), plain)


def test_a_response_in_two_comparisons_makes_two_tests():
    """W beat L1 and, in another comparison, W beat L2 (pairs sharing a text stay apart)."""
    group = JudgedGroup(
        id="g", context=CONTEXT, judgments=[judge("W", "L1", "a"), judge("W", "L2", "a")]
    )
    assert made(build_pairs([group], pairwise_map())) == [("W", "L1"), ("W", "L2")]


def test_judged_responses_are_kept_with_their_verdict_labels(two_judgments_on_one_context):
    kept = suite_candidates(two_judgments_on_one_context, pairwise_map())
    assert [(c.text, c.label) for c in kept] == [
        ("W1", "chosen"),
        ("L1", "rejected"),
        ("L2", "rejected"),
        ("W2", "chosen"),
    ]


# ---------------------------------------------------------------- raters who disagree


@pytest.fixture
def disagreeing_raters() -> list[JudgedGroup]:
    """Three pairs on one context, each judged by several raters.

    - X vs Y: r1 X, r2 X, r3 Y              (2 of 3 for X: judged both ways)
    - P vs Q: r1 P, r2 Q                    (1 of 2 each: judged both ways, no majority)
    - M vs N: r1 M, r2 tie, r3 tie          (1 preference, 2 ties)
    """
    judgments = [
        judge("X", "Y", "a", "r1"),
        judge("Y", "X", "b", "r2"),  # the same pair shown the other way round: X again
        judge("X", "Y", "b", "r3"),
        judge("P", "Q", "a", "r1"),
        judge("P", "Q", "b", "r2"),
        judge("M", "N", "a", "r1"),
        judge("M", "N", "tie", "r2"),
        judge("N", "M", "tie", "r3"),
    ]
    return [JudgedGroup(id="g", context=CONTEXT, judgments=judgments)]


def test_majority_with_ties_abstaining(disagreeing_raters):
    result = build_pairs(disagreeing_raters, pairwise_map(combine="majority"))
    # X/Y: 2 of 3 -> X beats Y. P/Q: 1 of 2 is no strict majority -> skipped (2 verdicts).
    # M/N: the ties abstain, 1 of 1 -> M beats N.
    assert made(result) == [("X", "Y"), ("M", "N")]
    assert result.skipped.counts == {"no majority (majority)": 2}
    # Both X/Y and P/Q were judged both ways: X/Y made a test, a conflict the map kept (with
    # the rule that was applied); P/Q made none and is counted once, as skipped, not as kept.
    assert result.conflicts.counts == {"pair judged both ways (majority applied)": 1}


def test_majority_with_ties_voting(disagreeing_raters):
    result = build_pairs(disagreeing_raters, pairwise_map(ties="vote"))
    # M/N: 1 of 3 verdicts is no majority when the ties count -> skipped (3 verdicts).
    assert made(result) == [("X", "Y")]
    assert result.skipped.counts == {"no majority (majority)": 2 + 3}


def test_unanimous(disagreeing_raters):
    result = build_pairs(disagreeing_raters, pairwise_map(combine="unanimous"))
    # X/Y 2 of 3, P/Q 1 of 2: raters disagree (3 + 2 verdicts); M/N: ties abstain, 1 of 1.
    assert made(result) == [("M", "N")]
    assert result.skipped.counts == {"raters disagree (unanimous)": 5}
    assert result.conflicts.counts == {}  # both pairs judged both ways made no test
    strict = build_pairs(disagreeing_raters, pairwise_map(combine="unanimous", ties="vote"))
    assert made(strict) == []
    assert strict.skipped.counts == {"raters disagree (unanimous)": 8}


def test_each_keeps_every_verdict_and_counts_both_ways(disagreeing_raters):
    result = build_pairs(disagreeing_raters, pairwise_map(combine="each"))
    # One test per preference verdict: X>Y (r1, r2), Y>X (r3), P>Q, Q>P, M>N; 2 ties skipped.
    expected = [("X", "Y"), ("X", "Y"), ("Y", "X"), ("P", "Q"), ("Q", "P"), ("M", "N")]
    assert made(result) == expected
    assert len({pair.id for pair in result.pairs}) == 6  # each rater's test has its own id
    assert result.counts["pairs_repeating_texts"] == 1  # r2 repeats r1's X > Y
    assert result.skipped.counts == {"tie (or weak preference)": 2}
    assert result.conflicts.counts == {"pair judged both ways (each applied)": 2}


def test_weak_preferences_are_ties_and_a_missing_strength_is_counted():
    judgments = [
        judge("A", "B", "a", "r1", strength=0.9),
        judge("C", "D", "b", "r1", strength=0.2),  # weak: a tie
        judge("E", "F", "a", "r1"),  # no strength: the rule needs one
    ]
    group = JudgedGroup(id="g", context=CONTEXT, judgments=judgments)
    result = build_pairs([group], pairwise_map(minimum_strength=0.5))
    assert made(result) == [("A", "B")]
    assert result.skipped.counts == {
        "tie (or weak preference)": 1,
        "no strength (the quality map sets minimum_strength)": 1,
    }
    # Without a minimum strength, every preference counts.
    assert made(build_pairs([group], pairwise_map())) == [
        ("A", "B"),
        ("D", "C"),
        ("E", "F"),
    ]


def test_unusable_judgments_are_counted():
    judgments = [
        judge("A", "", "a"),
        judge("same", "same", "a"),
        judge("G", "H", "tie"),
    ]
    groups = [
        JudgedGroup(id="g", context=CONTEXT, judgments=judgments),
        JudgedGroup(id="e", context={"prompt": " "}, judgments=[judge("A", "B", "a")]),
    ]
    result = build_pairs(groups, pairwise_map())
    assert result.pairs == []
    assert result.skipped.counts == {
        "empty candidate text": 1,
        "the two responses are the same text": 1,
        "tie (or weak preference)": 1,
        "empty context field(s) ['prompt']": 1,
    }
    assert result.counts["groups_without_pairs"] == 2


def test_a_repeated_group_id_and_the_budget_are_errors(two_judgments_on_one_context):
    with pytest.raises(SourceFormatError, match="repeats the group"):
        build_pairs([two_judgments_on_one_context] * 2, pairwise_map())
    with pytest.raises(NNDError, match="over the limit of 1 pairs per group"):
        build_pairs([two_judgments_on_one_context], pairwise_map(), budget=PairBudget(per_group=1))
    # a group named by its id (no file:line), the id a whole dialogue: clipped, as in pairs.py
    # (the judged builder quoted all 5,000 characters, and no "group" before them)
    dialogue = two_judgments_on_one_context.model_copy(update={"id": "Human: hi " * 500})
    with pytest.raises(NNDError) as raised:
        build_pairs([dialogue], pairwise_map(), budget=PairBudget(per_group=1))
    assert str(raised.value).startswith("group Human: hi Human: hi ")
    assert "... (5,000 characters): this group would give 2 pairs" in str(raised.value)


# ------------------------------------------------------------------ the map's own checks


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pairwise": {"high_label": "rejected", "low_label": "chosen"}}, "must beat low_label"),
        ({"pairwise": {"high_label": "best", "low_label": "rejected"}}, "absent from 'labels'"),
        (
            {"pairwise": {"high_label": "chosen", "low_label": "rejected", "combine": "most"}},
            "'majority', 'unanimous' or 'each'",
        ),
        (
            {
                "rating_rule": {
                    "kind": "graded",
                    "rating": "credit",
                    "levels": {"1": "chosen", "0": "rejected"},
                }
            },
            "not both",
        ),
    ],
)
def test_a_wrong_pairwise_rule_is_a_named_error(change, message):
    with pytest.raises(QualityMapError, match=message):
        QualityMap.from_dict({**pairwise_map().data, **change})


def test_the_shipped_hh_map_is_pairwise():
    rule = QualityMap.load("hh_rlhf").pairwise
    assert (rule.high_label, rule.low_label, rule.combine, rule.ties) == (
        "chosen",
        "rejected",
        "majority",
        "abstain",
    )


def test_each_keeps_unnamed_repeated_verdicts_apart_and_a_nan_strength_is_refused():
    same = [Judgment(response_a="X", response_b="Y", verdict="a") for _ in range(2)]
    result = build_pairs(
        [JudgedGroup(id="g", context=CONTEXT, judgments=same)], pairwise_map(combine="each")
    )
    assert made(result) == [("X", "Y"), ("X", "Y")]
    assert len({pair.id for pair in result.pairs}) == 2
    with pytest.raises(ValueError, match="finite number"):
        Judgment(response_a="X", response_b="Y", verdict="a", strength=float("nan"))


def test_texts_are_compared_by_the_projects_text_rule():
    """'X' and 'X ' (or NFD spellings) are one text: one pair, and no test of a text against
    itself; a response of zero-width spaces is empty."""
    judgments = [
        judge("X", "Y", "a", "r1"),
        judge("Y\u200b", "X ", "b", "r2"),  # the same pair, spelt otherwise: X again
        judge("Z", "Z\u00a0", "a", "r1"),
        judge("W", "\u200b", "a", "r1"),
    ]
    result = build_pairs(
        [JudgedGroup(id="g", context=CONTEXT, judgments=judgments)], pairwise_map()
    )
    assert made(result) == [("X", "Y")]
    assert result.skipped.counts == {
        "the two responses are the same text": 1,
        "empty candidate text": 1,
    }
