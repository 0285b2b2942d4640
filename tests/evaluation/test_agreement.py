"""Human margins and the raters' agreement ceiling (issue 22 §2), on hand-made tests whose
figures are computed by hand in the comments, then in a real report of the Quiz Design suite."""

from __future__ import annotations

import json

import pytest
from agreement_votes import leave_one_out

from nnd_suites.evaluation.report import EvaluationReport
from nnd_suites.evaluation.report_markdown import markdown
from nnd_suites.human.agreement import (
    NO_MARGIN,
    agreement_ceiling,
    margin_strata,
    margin_weight,
)
from nnd_suites.records.pairs import Pair, PairCandidate
from nnd_suites.records.votes import Vote
from nnd_suites.statistics.outcomes import wilson
from nnd_suites.suite import Suite


def _pair(n: int, votes: str = "", margin: float | None = None) -> Pair:
    """Test number ``n`` with one vote per letter of ``votes`` (h: high, l: low, t: tie)."""
    prefers = {"h": "high", "l": "low", "t": "tie"}
    return Pair(
        id=f"{n:016x}",
        group_id=f"g{n}",
        context={"text": f"context {n}"},
        high=PairCandidate(text=f"good {n}", label="ok", systems=["a"]),
        low=PairCandidate(text=f"bad {n}", label="error", systems=["b"]),
        label="error",
        category="error",
        category_path=["error"],
        votes=[Vote(rater=f"r{i}", prefers=prefers[v]) for i, v in enumerate(votes)],
        margin=margin,
    )


def test_leave_one_rater_out_by_hand():
    # (cases, agreed, others tied, tie votes among the cases) per test, each vote against the
    # majority of the other votes:
    assert leave_one_out(_pair(1, "hhh").votes) == (3, 3, 0, 0)  # others always 2 high: all agree
    # h, h: others (h, l) tie, skipped twice; l: others (h, h) say high, disagrees
    assert leave_one_out(_pair(2, "hhl").votes) == (1, 0, 2, 0)
    assert leave_one_out(_pair(3, "hl").votes) == (2, 0, 0, 0)  # each against the other: disagree
    # h, h: others (h, t): the tie abstains, high wins: agree; t: others (h, h): a tie never agrees
    assert leave_one_out(_pair(4, "hht").votes) == (3, 2, 0, 1)
    # h: others (t) tied (nothing for either side): skipped; t: others (h): disagrees
    assert leave_one_out(_pair(7, "ht").votes) == (1, 0, 1, 1)
    assert leave_one_out(_pair(8, "tt").votes) == (0, 0, 2, 0)  # every case skipped
    # l, l: others (l, h) tie, skipped; h: others (l, l) say low: disagrees
    assert leave_one_out(_pair(9, "llh").votes) == (1, 0, 2, 0)
    # an even split of 10: each h sees 4 h against 5 l, each l 5 h against 4 l: none agrees
    assert leave_one_out(_pair(10, "hhhhhlllll").votes) == (10, 0, 0, 0)


def test_agreement_ceiling_by_hand():
    pairs = [
        _pair(1, "hhh"),  # 3 cases, 3 agreed
        _pair(2, "hhl"),  # 1 case, 0 agreed, 2 skipped
        _pair(3, "hl"),  # 2 cases, 0 agreed
        _pair(4, "hht"),  # 3 cases, 2 agreed
        _pair(5, "h"),  # one vote: not compared
        _pair(6, "hhlh"),  # the model did not rate it (degenerate): not compared
        _pair(7, "ht"),  # 1 case, 0 agreed, 1 skipped
        _pair(8, "tt"),  # every case skipped: a test where all are tied
        _pair(10),  # no votes at all: counted with the one-vote tests
    ]
    outcomes = {p.id: "pass" for p in pairs}
    outcomes |= {pairs[1].id: "fail", pairs[2].id: "tie", pairs[5].id: "degenerate"}
    found = agreement_ceiling(pairs, outcomes, resamples=500, seed=1)
    assert found is not None
    # cases 3 + 1 + 2 + 3 + 1 = 10, agreed 3 + 0 + 0 + 2 + 0 = 5: the ceiling is 5 / 10
    assert (found.tests, found.cases, found.agreed, found.ceiling) == (5, 10, 5, 0.5)
    assert found.others_tied == 2 + 1 + 2  # tests 2, 7 and 8
    assert found.tie_cases == 2  # the tie votes of tests 4 and 7, both disagreeing
    assert (found.tests_all_tied, found.tests_one_vote, found.tests_not_rated) == (1, 2, 1)
    # the model on the same 5 tests (1, 2, 3, 4, 7): pass, fail, tie, pass, pass -> 3 / 5
    assert (found.model.n, found.model.passed, found.model.ties) == (5, 3, 1)
    assert found.model.pass_rate == pytest.approx(0.6)
    low, high = found.ci
    assert 0 <= low < 0.5 < high <= 1
    assert agreement_ceiling(pairs, outcomes, resamples=500, seed=1) == found  # seeded
    alone = [_pair(1, "h"), _pair(2)]
    assert agreement_ceiling(alone, dict.fromkeys((p.id for p in alone), "pass")) is None


def test_the_interval_resamples_tests_not_votes():
    # 20 tests of 10 raters: 16 unanimous (10 agreeing cases each), 4 split evenly (10
    # disagreeing cases each): 200 cases, 160 agreed.
    pairs = [_pair(i, "h" * 10) for i in range(16)]
    pairs += [_pair(16 + i, "hhhhhlllll") for i in range(4)]
    outcomes = dict.fromkeys((p.id for p in pairs), "pass")
    found = agreement_ceiling(pairs, outcomes, resamples=2000, seed=0)
    assert (found.cases, found.agreed, found.ceiling) == (200, 160, 0.8)
    # A resample of 20 tests draws K ~ Binomial(20, 4/20) split tests: share 1 - K / 20, so the
    # 95% interval is about [1 - 8/20, 1 - 1/20] (binomial quantiles 8 and 1), one step of 1/20
    # at most apart from the exact quantiles (percentiles interpolate between draws).
    assert found.ci == pytest.approx((0.6, 0.95), abs=0.05 + 1e-9)
    # far wider than a Wilson interval over the 200 cases taken as independent (about 0.74-0.85)
    wilson_low, wilson_high = wilson(160, 200)
    assert found.ci[1] - found.ci[0] > 2.5 * (wilson_high - wilson_low)
    # identical tests: every resample gives the same share
    same = [_pair(i, "hhl") for i in range(5)]
    collapsed = agreement_ceiling(same, dict.fromkeys((p.id for p in same), "pass"))
    assert collapsed.ci == pytest.approx((0.0, 0.0))


def test_rater_share_strata():
    # shares: 1 (x2), 2/3, 1/2, 1/3 (one vote high, two ties), none
    shares = {1: 1.0, 2: 2 / 3, 3: 1.0, 4: None, 5: 0.5, 6: 1 / 3}
    pairs = [_pair(n, margin=share) for n, share in shares.items()]
    outcome = {1: "pass", 2: "fail", 3: "degenerate", 4: "pass", 5: "pass", 6: "tie"}
    strata = margin_strata(pairs, lambda p: outcome[int(p.id, 16)], "rater_share")
    assert strata.kind == "rater_share" and "0.5 < majority < 1 = unanimous" in strata.rule
    bands = {b.label: b for b in strata.bands}
    assert list(bands) == ["half or fewer", "majority", "unanimous", NO_MARGIN]
    # unanimous: tests 1 (pass) and 3 (degenerate, counted apart from n)
    assert (bands["unanimous"].rate.n, bands["unanimous"].rate.degenerate) == (1, 1)
    assert (bands["majority"].rate.n, bands["majority"].rate.failed) == (1, 1)  # test 2
    # half or fewer: tests 5 (pass) and 6 (tie)
    assert (bands["half or fewer"].rate.n, bands["half or fewer"].rate.passed) == (2, 1)
    assert (bands["half or fewer"].low, bands["half or fewer"].high) == (pytest.approx(1 / 3), 0.5)
    assert bands[NO_MARGIN].rate.n == 1 and bands[NO_MARGIN].low is None
    assert margin_strata([_pair(1)], lambda p: "pass", "rater_share") is None


def test_score_gap_tertiles_keep_equal_margins_together():
    margins = [1, 2, 3, 4, 4, 5, 6, 7, 8, 9]
    pairs = [_pair(i, margin=m) for i, m in enumerate(margins)]
    # numpy's quantiles (linear): position 9 * 1/3 = 3 -> 4; 9 * 2/3 = 6 -> 6.
    # narrow <= 4: 1, 2, 3, 4, 4 (5 tests: both 4s); medium (4, 6]: 5, 6; clear > 6: 7, 8, 9
    strata = margin_strata(pairs, lambda p: "pass" if p.margin > 2 else "fail", "score_gap")
    assert "narrow <= 4 < medium <= 6 < clear" in strata.rule
    found = {b.label: (b.low, b.high, b.rate.n, b.rate.passed) for b in strata.bands}
    assert found == {"narrow": (1, 4, 5, 3), "medium": (5, 6, 2, 2), "clear": (7, 9, 3, 3)}
    # all margins equal: one band (the others are empty and left out)
    same = margin_strata([_pair(i, margin=2.0) for i in range(3)], lambda p: "pass", "confidence")
    assert [(b.label, b.rate.n) for b in same.bands] == [("narrow", 3)]


def test_margin_weights():
    assert margin_weight(0.5, "rater_share") == 0 and margin_weight(1.0, "rater_share") == 1
    assert margin_weight(0.75, "rater_share") == pytest.approx(0.5)
    # at most half the votes for the better candidate: no evidence for the label, weight 0
    assert margin_weight(1 / 3, "rater_share") == 0 and margin_weight(0.0, "rater_share") == 0
    assert margin_weight(2.5, "score_gap") == 2.5 and margin_weight(-1.0, "score_gap") == 0
    assert margin_weight(7.0, "confidence") is None and margin_weight(None, "score_gap") is None


def test_report_gives_margins_and_ceiling(quiz_design_suite, heuristic_report):
    # Quiz Design with votes given by hand: every third test unanimous (3 raters: 3 agreeing
    # cases), the others 2 to 1 (1 case, the dissenter, disagreeing; 2 cases skipped).
    pairs = [
        p.model_copy(
            update={
                "votes": _pair(0, "hhh" if i % 3 == 0 else "hhl").votes,
                "margin": 1.0 if i % 3 == 0 else 2 / 3,
            }
        )
        for i, p in enumerate(quiz_design_suite.pairs)
    ]
    manifest = quiz_design_suite.manifest.model_copy(update={"margin_kind": "rater_share"})
    suite = Suite(manifest, pairs, quiz_design_suite.candidates)
    report = heuristic_report([suite], "shorter-is-better", lambda text: -len(text))
    result = report.suites[suite.name]
    outcome = {o.pair_id: o.outcome for o in report.outcomes[suite.name]}
    rated = [(i, p) for i, p in enumerate(pairs) if outcome[p.id] in {"pass", "fail", "tie"}]
    unanimous = sum(i % 3 == 0 for i, _ in rated)
    ceiling = result.agreement_ceiling
    assert ceiling.tests == len(rated)
    assert (ceiling.cases, ceiling.agreed) == (
        3 * unanimous + len(rated) - unanimous,
        3 * unanimous,
    )
    assert ceiling.others_tied == 2 * (len(rated) - unanimous)
    assert ceiling.model.passed == sum(outcome[p.id] == "pass" for _, p in rated)
    assert ceiling.tests_not_rated == len(pairs) - len(rated)
    bands = {b.label: b.rate for b in result.by_margin.bands}
    assert bands["unanimous"].tests == sum(i % 3 == 0 for i in range(len(pairs)))
    assert bands["majority"].tests + bands["unanimous"].tests == len(pairs)

    text = markdown(report)
    assert (
        f"model {100 * ceiling.model.pass_rate:.1f}% vs raters' agreement "
        f"{100 * ceiling.ceiling:.1f}% [{100 * ceiling.ci[0]:.1f}, {100 * ceiling.ci[1]:.1f}] "
        f"on the same {ceiling.tests:,} tests"
    ) in text
    assert "| unanimous (1) |" in text and "| majority (0.6667) |" in text

    # reports written before margins still load, and render without these lines
    saved = json.loads(report.model_dump_json())
    for name in saved["suites"]:
        del saved["suites"][name]["by_margin"], saved["suites"][name]["agreement_ceiling"]
    old = EvaluationReport.model_validate(saved)
    assert old.suites[suite.name].agreement_ceiling is None
    assert "raters' agreement" not in markdown(old) and "By human margin" not in markdown(old)
    # a suite without votes or margins gets neither
    plain = heuristic_report([quiz_design_suite], "shorter", lambda text: -len(text))
    assert plain.suites[suite.name].by_margin is None
    assert plain.suites[suite.name].agreement_ceiling is None
