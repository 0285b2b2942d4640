"""Per-rater votes, human margins and pooled ratings of identical texts (issue 22 §2).

Every expected vote and margin is derived by hand in the comments from the ratings written here
or from the raw rows of the shipped files.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import statistics

import pytest

from nnd_suites import Suite, build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.builder.pairs import build_pairs
from nnd_suites.quality_map import QualityMap
from nnd_suites.records.groups import Candidate, Group
from nnd_suites.records.judgments import JudgedGroup, Judgment
from nnd_suites.records.pooled_ratings import pool
from nnd_suites.records.votes import Vote

SUMMEVAL = get_adapter("summeval").folder() / "fixtures"


def numeric_map(**rule) -> QualityMap:
    return QualityMap.from_dict(
        {
            "name": "crowd",
            "description": "mean of raters, better by at least 20",
            "labels": ["worse"],
            "rating_rule": {
                "kind": "numeric",
                "rating": "overall",
                "aggregate": "mean",
                "minimum_gap": 20,
                "low_label": "worse",
                **rule,
            },
        }
    )


def rated(text: str, system: str, **by_rater: float) -> Candidate:
    return Candidate(
        text=text,
        systems=[system],
        ratings={"overall": list(by_rater.values())},
        raters=list(by_rater),
        where=f"{system}.tsv",
    )


def one_group(*candidates: Candidate) -> list[Group]:
    return [Group(id="g", context={"input": "i"}, candidates=list(candidates))]


def test_votes_compare_each_raters_own_two_ratings():
    # A: w1 90, w2 70, w3 80 (mean 80); B: w1 40, w2 70, w4 50 (mean 53.3): A beats B by 26.7.
    # Raters of both: w1 (90 - 40 = 50: high), w2 (70 - 70: tie); w3 and w4 rated one side.
    result = build_pairs(
        one_group(rated("a", "A", w1=90, w2=70, w3=80), rated("b", "B", w1=40, w2=70, w4=50)),
        numeric_map(),
    )
    [pair] = result.pairs
    assert pair.votes == [
        Vote(rater="w1", prefers="high", strength=50.0),
        Vote(rater="w2", prefers="tie", strength=0.0),
    ]
    # two raters' votes on the only test: the margin is their share, the tie counted (1 of 2)
    assert result.margin_kind == "rater_share" and pair.margin == 0.5


def test_a_numeric_suite_without_two_common_raters_has_score_gap_margins():
    # every rater rated one side only: no vote; the numeric rule's gap is the margin
    result = build_pairs(
        one_group(rated("a", "A", w1=90), rated("b", "B", w2=60), rated("c", "C", w3=10)),
        numeric_map(),
    )
    assert [(p.high.text, p.low.text, p.votes, p.margin) for p in result.pairs] == [
        ("a", "b", [], 30.0),
        ("a", "c", [], 80.0),
        ("b", "c", [], 50.0),
    ]
    assert result.margin_kind == "score_gap"


def test_candidates_without_raters_give_no_votes_and_labels_no_margin():
    unnamed = [
        Candidate(text=t, systems=[t.upper()], ratings={"overall": v}) for t, v in [("a", [90, 80])]
    ]
    unnamed.append(Candidate(text="b", systems=["B"], ratings={"overall": [10, 20]}))
    result = build_pairs(one_group(*unnamed), numeric_map())
    assert [(p.votes, p.margin) for p in result.pairs] == [([], 70.0)]
    labels = QualityMap.from_dict(
        {"name": "l", "description": "d", "labels": ["ok", "bad"], "tiers": [["ok"], ["bad"]]}
    )
    plain = [Candidate(text=t, systems=[t], label=t) for t in ("ok", "bad")]
    labelled = build_pairs(one_group(*plain), labels)
    assert labelled.pairs[0].votes == [] and labelled.margin_kind is None
    assert labelled.pairs[0].margin is None


def test_pooling_identical_texts_gives_one_score_from_all_their_ratings():
    # A and B wrote the same text: A rated by w1 90, w2 80; B by w2 40, w3 50. Separately
    # (means 85 and 45) they conflict and are both left out. Pooled, w2 counts once with the mean
    # of 80 and 40 (60): raters w1 90, w2 60, w3 50, mean 66.67, against C (w1 20, w3 30: 25).
    same = [rated("same", "A", w1=90, w2=80), rated("same ", "B", w2=40, w3=50)]
    other = rated("other", "C", w1=20, w3=30)
    pooled = pool(same, statistics.fmean)
    assert pooled.systems == ["A", "B"] and pooled.raters == ["w1", "w2", "w3"]
    assert pooled.ratings == {"overall": [90.0, 60.0, 50.0]}
    result = build_pairs(one_group(*same, other), numeric_map())
    assert result.skipped.counts == {} and result.conflicts.counts == {}
    # pairs_per: candidate: each identical candidate is its own test, both on the pooled score
    assert [(p.high.systems, p.high.score, p.low.score) for p in result.pairs] == [
        (["A"], pytest.approx(200 / 3), 25.0),
        (["B"], pytest.approx(200 / 3), 25.0),
    ]
    # votes from every rater of the pooled text who rated C: w1 90 - 20, w3 50 - 30
    expected = [
        Vote(rater="w1", prefers="high", strength=70.0),
        Vote(rater="w3", prefers="high", strength=20.0),
    ]
    assert all(p.votes == expected and p.margin == 1.0 for p in result.pairs)
    separate = build_pairs(one_group(*same, other), numeric_map(identical_texts="separate"))
    assert separate.skipped.counts == {"same text given conflicting ratings": 2}
    assert [(p.high.text, p.low.text) for p in separate.pairs] == []


def test_pooling_without_raters_averages_each_candidates_aggregate():
    # unnamed raters cannot be matched across candidates: A's mean 85 and B's 40 weigh alike
    # (concatenated, A's two ratings would outweigh B's one: 70)
    same = [
        Candidate(text="t", systems=["A"], ratings={"overall": [90, 80]}),
        Candidate(text="t", systems=["B"], ratings={"overall": [40]}, raters=None),
    ]
    pooled = pool(same, statistics.fmean)
    assert pooled.ratings == {"overall": [62.5]} and pooled.raters is None


def test_summeval_votes_and_margin_match_the_raw_expert_rows():
    # Raw rows of article dm-...eee2 (fixture lines 1 and 3): consistency of M0 [5, 5, 4] and of
    # M17 [3, 5, 4]. M0 is high (two 5s), M17 low. expert1 5 vs 3 -> high (gap 2); expert2 5 vs
    # 5 -> tie; expert3 4 vs 4 -> tie. Margin: 1 of 3 raters preferred M0.
    rows = [json.loads(line) for line in (SUMMEVAL / SOURCE_NAME).read_text().splitlines()]
    m0, m17 = (next(r for r in rows[:4] if r["model_id"] == m) for m in ("M0", "M17"))
    assert [a["consistency"] for a in m0["expert_annotations"]] == [5, 5, 4]
    assert [a["consistency"] for a in m17["expert_annotations"]] == [3, 5, 4]
    suite = build_suite("summeval", SUMMEVAL / SOURCE_NAME)
    [pair] = [
        p
        for p in suite.pairs
        if p.aspect == "consistency" and (p.high.systems, p.low.systems) == (["M0"], ["M17"])
    ]
    assert pair.votes == [
        Vote(rater="expert1", prefers="high", strength=2.0),
        Vote(rater="expert2", prefers="tie", strength=0.0),
        Vote(rater="expert3", prefers="tie", strength=0.0),
    ]
    assert pair.margin == pytest.approx(1 / 3)
    assert suite.manifest.margin_kind == "rater_share"
    # every test has the three experts' votes, so every margin is a share of 3
    assert {len(p.votes) for p in suite.pairs} == {3}
    assert {round(p.margin * 3) for p in suite.pairs} <= {1, 2, 3}
    kept = {c.raters == ["expert1", "expert2", "expert3"] for c in suite.candidates}
    assert kept == {True}
    # crowd workers are not identified: no raters, no votes, no margin
    crowd = build_suite("summeval", SUMMEVAL / SOURCE_NAME, annotators="turker")
    assert {c.raters for c in crowd.candidates} == {None}
    assert {(len(p.votes), p.margin) for p in crowd.pairs} == {(0, None)}
    assert crowd.manifest.margin_kind is None


SOURCE_NAME = "model_annotations.aligned.paired.sample.jsonl"


def test_wmt_mqm_votes_are_the_common_raters_mqm_scores():
    # Raw rows of the shipped sample, segment talk.1:1:1 ... checked below from the TSV itself:
    # each candidate's raters and its score are minus the sum of that rater's error weights.
    sample = get_adapter("wmt_mqm").folder() / "fixtures" / "mqm_ted_ende_sample.tsv"
    suite = build_suite("wmt_mqm", sample)
    lines = sample.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"), strict=False)) for line in lines[1:]]
    weights = {"No-error": 0.0, "Minor": 1.0, "Major": 5.0, "Neutral": 0.0}
    for candidate in suite.candidates[:40]:
        mine = [
            r
            for r in rows
            if r["system"] == candidate.systems[0]
            and ":".join((r["doc"], r["doc_id"], r["seg_id"])) == candidate.group_id
        ]
        assert candidate.raters == list(dict.fromkeys(r["rater"] for r in mine))
        penalty = {rater: 0.0 for rater in candidate.raters}
        for row in mine:
            weight = weights[row["severity"]]
            if row["category"].lower().startswith("non-translation"):
                weight = 25.0
            elif row["severity"] == "Minor" and row["category"] == "Fluency/Punctuation":
                weight = 0.1
            if row["category"].lower().startswith("source"):
                weight = 0.0
            penalty[row["rater"]] += weight
        assert candidate.ratings == {"mqm": [-p + 0.0 for p in penalty.values()]}
    voted = [p for p in suite.pairs if p.votes]
    assert voted, "the sample has tests whose two translations one rater annotated"
    # a No-error translation against one with an error, by one rater: that rater prefers high
    assert {v.prefers for p in voted for v in p.votes} == {"high"}
    assert {len(p.votes) for p in suite.pairs} <= {0, 1}
    assert suite.manifest.margin_kind is None  # never two raters on one test: no share


def test_judged_pairs_keep_every_verdict_as_a_vote():
    # X vs Y judged by three raters: r1 X (strength 3), r2 X (1), r3 Y (2): majority X.
    group = JudgedGroup(
        id="g",
        context={"prompt": "p"},
        judgments=[
            Judgment(response_a="X", response_b="Y", verdict="a", rater="r1", strength=3),
            Judgment(response_a="Y", response_b="X", verdict="b", rater="r2", strength=1),
            Judgment(response_a="X", response_b="Y", verdict="b", rater="r3", strength=2),
        ],
    )
    rule = {"high_label": "chosen", "low_label": "rejected"}
    data = {
        "name": "prefs",
        "description": "d",
        "labels": ["chosen", "rejected"],
        "tiers": [["chosen"], ["rejected"]],
    }
    result = build_pairs([group], QualityMap.from_dict({**data, "pairwise": rule}))
    [pair] = result.pairs
    assert (pair.high.text, pair.low.text) == ("X", "Y")
    assert pair.votes == [
        Vote(rater="r1", prefers="high", strength=3.0),
        Vote(rater="r2", prefers="high", strength=1.0),
        Vote(rater="r3", prefers="low", strength=2.0),
    ]
    assert result.margin_kind == "rater_share" and pair.margin == pytest.approx(2 / 3)
    # one verdict with a stated strength per test: the margin is that confidence; under
    # minimum_strength 2, r2's weak preference reads as a tie
    alone = group.model_copy(update={"judgments": group.judgments[:1]})
    single = build_pairs([alone], QualityMap.from_dict({**data, "pairwise": rule}))
    assert single.margin_kind == "confidence" and single.pairs[0].margin == 3.0
    strict = {**rule, "minimum_strength": 2, "combine": "each"}
    each = build_pairs([group], QualityMap.from_dict({**data, "pairwise": strict}))
    assert [(p.high.text, [v.prefers for v in p.votes]) for p in each.pairs] == [
        ("X", ["high", "tie", "low"]),
        ("Y", ["low", "tie", "high"]),
    ]


def test_hh_rlhf_tests_carry_the_one_unnamed_verdict():
    # each row is one crowdworker's verdict, no rater id, no strength: one vote, no margin
    sample = get_adapter("hh_rlhf").folder() / "fixtures" / "hh_sample.jsonl.gz"
    with gzip.open(sample, "rt", encoding="utf-8") as rows:
        assert all("chosen" in json.loads(row) for row in rows)
    suite = build_suite("hh_rlhf", sample)
    assert {tuple(p.votes) for p in suite.pairs} == {(Vote(prefers="high"),)}
    assert suite.manifest.margin_kind is None and {p.margin for p in suite.pairs} == {None}


def test_a_manifest_written_before_margin_kind_still_loads(tmp_path):
    """A format 2.2 manifest has no margin_kind key; its hashes, computed here as 2.2 did (a
    sha256 per field's sorted JSON, the content hash over them less created_with), still hold."""
    sample = get_adapter("hh_rlhf").folder() / "fixtures" / "hh_sample.jsonl.gz"
    build_suite("hh_rlhf", sample, tmp_path / "hh")
    path = tmp_path / "hh" / "manifest.json"
    written = json.loads(path.read_text())
    assert written.pop("margin_kind") is None
    written["format_version"] = "2.2"
    sections = {
        name: hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
        for name, value in written.items()
        if name not in ("section_hashes", "content_hash")
    }
    rows = {k: written["section_hashes"][k] for k in ("pairs", "candidates")}
    sections.update(rows)
    content = {k: v for k, v in sections.items() if k != "created_with"}
    written["section_hashes"] = sections
    written["content_hash"] = hashlib.sha256(
        json.dumps(content, sort_keys=True).encode()
    ).hexdigest()
    path.write_text(json.dumps(written, indent=2))
    old = Suite.load(tmp_path / "hh")
    assert old.manifest.margin_kind is None and old.manifest.format_version == "2.2"
    assert old.manifest.content_hash == written["content_hash"]
