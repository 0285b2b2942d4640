"""verify with human margins (issue 22 §2): margin-weighted pass rates beside the plain ones, by
hand on made-up systems, then end to end on Quiz Design given rater shares, with the two tiny
models of the shared fixtures standing in for two annotated systems."""

from __future__ import annotations

import json
import math

import pytest

from nnd_suites.errors import NNDError
from nnd_suites.evaluation import evaluate
from nnd_suites.evaluation.verify import verify_suite
from nnd_suites.evaluation.verify.models import VerifyReport
from nnd_suites.evaluation.verify.render import verify_markdown
from nnd_suites.evaluation.verify.run import margin_weights
from nnd_suites.evaluation.verify.stats import bootstrap_correlations, weighted_pass_rates
from nnd_suites.records.votes import Vote
from nnd_suites.suite import Suite

HUMAN = {"A": 3.0, "B": 2.0, "C": 1.0}
# four tests; test 3 was a 50/50 vote (weight 0), test 4 a 3-to-1 vote (weight 2 x 3/4 - 1)
PASSES = {"A": [1, 1, 0, 0], "B": [1, 0, 1, 1], "C": [0, 0, 1, 1]}
WEIGHTS = [1.0, 1.0, 0.0, 0.5]


def test_weighting_changes_the_verdict_by_hand():
    # plain pass rates: A 2/4, B 3/4, C 2/4; weighted (total weight 2.5):
    # A (1 + 1) / 2.5 = 0.8, B (1 + 0.5) / 2.5 = 0.6, C 0.5 / 2.5 = 0.2
    assert weighted_pass_rates(PASSES, WEIGHTS) == pytest.approx({"A": 0.8, "B": 0.6, "C": 0.2})
    assert weighted_pass_rates(PASSES, [1, 1, 1, 1]) == pytest.approx(
        {"A": 0.5, "B": 0.75, "C": 0.5}
    )
    plain = bootstrap_correlations(PASSES, HUMAN, resamples=20)
    weighted = bootstrap_correlations(PASSES, HUMAN, resamples=20, weights=WEIGHTS)
    # plain: (A, B) discordant, (B, C) concordant, (A, C) tied in pass rate:
    # tau-b = (1 - 1) / sqrt((3 - 1) * 3) = 0. Weighted: A > B > C as people ranked them: tau 1
    assert plain.rank == pytest.approx(0.0) and weighted.rank == pytest.approx(1.0)
    # gaps oriented by human score, (A-B, A-C, B-C): human 1, 2, 1; plain pass-rate gaps -0.25,
    # 0, 0.25 (Sxy = 0: r = 0); weighted 0.2, 0.6, 0.4: Sxy = 0.2, Sxx = 2/3, Syy = 0.08,
    # r = 0.2 / sqrt(2/3 * 0.08) = sqrt(3) / 2
    assert plain.gap == pytest.approx(0.0, abs=1e-12)
    assert weighted.gap == pytest.approx(math.sqrt(3) / 2)
    # resamples that drew only test 3 weigh 0: undefined, counted, never a number
    lone = bootstrap_correlations(
        {"A": [1, 0], "B": [0, 1]}, {"A": 1.0, "B": 0.0}, resamples=200, weights=[0.0, 1.0]
    )
    assert lone.rank == -1.0 and lone.rank_undefined > 0
    with pytest.raises(NNDError, match="finite numbers >= 0"):
        bootstrap_correlations(PASSES, HUMAN, weights=[1, -1, 1, 1])
    with pytest.raises(NNDError, match="every test weighs 0"):
        weighted_pass_rates(PASSES, [0, 0, 0, 0])


def _with_shares(suite: Suite, kind: str | None = "rater_share") -> Suite:
    """``suite`` with 3 votes per test: every third test unanimous (share 1, weight 1), the
    others 2 to 1 (share 2/3, weight 1/3); every fifth test has no margin."""
    pairs = []
    for i, pair in enumerate(suite.pairs):
        votes = ["high", "high", "high" if i % 3 == 0 else "low"]
        pairs.append(
            pair.model_copy(
                update={
                    "votes": [Vote(rater=f"r{k}", prefers=v) for k, v in enumerate(votes)],
                    "margin": None if i % 5 == 4 else (1.0 if i % 3 == 0 else 2 / 3),
                }
            )
        )
    # the kind as the builder would set it for these shares (or another, to see it refused)
    return Suite(suite.manifest.model_copy(update={"margin_kind": kind}), pairs, suite.candidates)


def test_which_margins_give_weights(quiz_design_suite):
    weights, how = margin_weights(_with_shares(quiz_design_suite))
    assert weights[quiz_design_suite.pairs[0].id] == pytest.approx(1.0)
    assert weights[quiz_design_suite.pairs[1].id] == pytest.approx(1 / 3)
    assert quiz_design_suite.pairs[4].id not in weights
    assert "max(0, 2 x share - 1)" in how and "Left out of the weighted figures: " in how
    for kind in ("confidence", None):
        weights, how = margin_weights(_with_shares(quiz_design_suite, kind))
        assert weights is None and how.startswith("not used: margins of kind")
    assert margin_weights(quiz_design_suite) == (
        None,
        "not used: no test of the suite has a human margin",
    )


def test_verify_weighs_tests_by_margin(quiz_design_suite, tiny_causal_model, tiny_seq2seq_model):
    suite = _with_shares(quiz_design_suite)
    systems = {"mixqg": tiny_causal_model, "gpt2b_sup": tiny_seq2seq_model}
    options = {"limit": 4, "progress": False, "cache": False, "device": "cpu"}
    report = verify_suite(suite, systems, resamples=30, **options)
    weight = {p.id: 1.0 if i % 3 == 0 else 1 / 3 for i, p in enumerate(suite.pairs) if i % 5 != 4}
    weighted = report.overall.margin_weighted
    assert weighted is not None and "max(0, 2 x share - 1)" in report.margins
    for name, model in systems.items():
        outcomes = evaluate(str(model), suite, **options).outcomes[suite.name]
        rated = [o for o in outcomes if o.outcome in {"pass", "fail", "tie"}]
        assert report.overall.tests == len(rated)  # one model per system: each rated every test
        kept = [o for o in rated if o.pair_id in weight]
        assert weighted.tests == len(kept)
        expected = sum(weight[o.pair_id] * (o.outcome == "pass") for o in kept) / sum(
            weight[o.pair_id] for o in kept
        )
        assert weighted.pass_rates[name] == pytest.approx(expected)
    text = verify_markdown(report)
    assert "Human margins: Each test weighs max(0, 2 x share - 1)" in text
    assert "| margin-weighted, tests of |" in text
    # the same verify on the suite without margins says so, and has no weighted figures
    plain = verify_suite(quiz_design_suite, systems, resamples=30, **options)
    assert plain.overall.margin_weighted is None
    assert plain.margins == "not used: no test of the suite has a human margin"
    assert plain.overall.pass_rates == report.overall.pass_rates
    # a verify.json written before margins still loads, and renders without them
    saved = json.loads(report.model_dump_json())
    del saved["margins"], saved["overall"]["margin_weighted"]
    for category in saved["by_category"].values():
        del category["margin_weighted"]
    old = VerifyReport.model_validate(saved)
    assert old.margins is None and old.overall.margin_weighted is None
    old_text = verify_markdown(old)
    assert "Human margins" not in old_text and "margin-weighted" not in old_text
