"""Human margins, the agreement ceiling and margin-weighted verify on a real source: the SummEval
fixture (3 articles, 28 tests, each with the votes of the 3 experts), scored by the tiny models of
the shared fixtures. The human figures do not depend on the model; they are derived by hand below
from the experts' votes."""

from __future__ import annotations

import json
from collections import Counter

import jsonschema
import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.evaluation import evaluate
from nnd_suites.evaluation.verify import verify_suite

SOURCE = (
    get_adapter("summeval").folder() / "fixtures" / "model_annotations.aligned.paired.sample.jsonl"
)
# Per test, the 3 experts' votes sorted (h: high, l: low, t: tie) as the fixture gives them
# (adapters/summeval/README.md: 11 unanimous, 14 two of three, 3 one of three), and what leave one
# rater out makes of each: (cases, agreed, skipped because the others tie, tie votes among cases)
#   hhh: each h against (h, h): 3 cases, 3 agree
#   hht: each h against (h, t): high, agrees; t against (h, h): disagrees -> 3, 2, 0, 1
#   hhl: each h against (h, l): tied, skipped; l against (h, h): disagrees -> 1, 0, 2, 0
#   hlt: h against (l, t): low, disagrees; l against (h, t): disagrees; t against (h, l):
#        skipped -> 2, 0, 1, 0
#   htt: h against (t, t): skipped; each t against (h, t): high, disagrees -> 2, 0, 1, 2
PATTERNS = {"hhh": 11, "hht": 10, "hhl": 4, "hlt": 2, "htt": 1}
BY_HAND = {
    "hhh": (3, 3, 0, 0),
    "hht": (3, 2, 0, 1),
    "hhl": (1, 0, 2, 0),
    "hlt": (2, 0, 1, 0),
    "htt": (2, 0, 1, 2),
}


@pytest.fixture(scope="module")
def summeval():
    return build_suite("summeval", SOURCE)


def test_the_fixture_votes_are_as_counted(summeval):
    patterns = Counter("".join(sorted(v.prefers[0] for v in p.votes)) for p in summeval.pairs)
    assert patterns == PATTERNS
    assert summeval.manifest.margin_kind == "rater_share"


def test_report_on_summeval(summeval, tiny_causal_model, tmp_path):
    out = tmp_path / "run"
    report = evaluate(
        str(tiny_causal_model), summeval, out=out, progress=False, cache=False, device="cpu"
    )
    result = report.suites[summeval.name]
    assert result.degenerate == result.skipped == 0  # every one of the 28 tests is rated
    ceiling = result.agreement_ceiling
    cases, agreed, tied, ties = (
        sum(n * BY_HAND[p][k] for p, n in PATTERNS.items()) for k in range(4)
    )
    # 33 + 30 + 4 + 4 + 2 = 73 cases; 33 + 20 = 53 agree; 8 + 2 + 1 = 11 skipped; 10 + 2 ties
    assert (cases, agreed, tied, ties) == (73, 53, 11, 12)
    assert (ceiling.tests, ceiling.cases, ceiling.agreed) == (28, cases, agreed)
    assert (ceiling.others_tied, ceiling.tie_cases) == (tied, ties)
    assert ceiling.ceiling == pytest.approx(53 / 73)
    low, high = ceiling.ci
    assert low < 53 / 73 < high
    assert ceiling.model == result.overall  # the same 28 tests
    # margins: the share of the 3 experts preferring the high summary
    bands = {b.label: (b.low, b.high, b.rate.tests) for b in result.by_margin.bands}
    assert bands == {
        "half or fewer": (pytest.approx(1 / 3), pytest.approx(1 / 3), 3),
        "majority": (pytest.approx(2 / 3), pytest.approx(2 / 3), 14),
        "unanimous": (1.0, 1.0, 11),
    }
    written = json.loads((out / "report.json").read_text())
    jsonschema.validate(written, json.loads((out / "report.schema.json").read_text()))
    assert written["suites"][summeval.name]["agreement_ceiling"]["agreed"] == 53
    text = (out / "report.md").read_text()
    rate = 100 * result.pass_rate
    assert f"model {rate:.1f}% vs raters' agreement 72.6% [{100 * low:.1f}, " in text
    assert "on the same 28 tests" in text and "| unanimous (1) | 11 |" in text


def test_verify_weighs_summeval_tests_by_the_experts(
    summeval, tiny_causal_model, tiny_seq2seq_model
):
    systems = {"M0": tiny_causal_model, "M8": tiny_seq2seq_model}
    options = {"progress": False, "cache": False, "device": "cpu"}
    report = verify_suite(summeval, systems, resamples=30, **options)
    # weight max(0, 2 x share - 1): unanimous 1, two of three 1/3, one of three 0
    weight = {p.id: {1.0: 1.0, 2 / 3: 1 / 3, 1 / 3: 0.0}[p.margin] for p in summeval.pairs}
    weighted = report.overall.margin_weighted
    assert weighted.tests == 28 and "max(0, 2 x share - 1)" in report.margins
    for name, model in systems.items():
        outcomes = evaluate(str(model), summeval, **options).outcomes[summeval.name]
        passed = sum(weight[o.pair_id] for o in outcomes if o.outcome == "pass")
        assert weighted.pass_rates[name] == pytest.approx(passed / (11 + 14 / 3))
