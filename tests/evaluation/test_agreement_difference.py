"""The paired difference model minus the raters' agreement ceiling, and the one percentile
bootstrap behind every resampled interval, on the SummEval fixture (28 tests, each with the votes
of 3 experts: a shipped source with per-rater votes) scored by a tiny local model, and on outcome
sets whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest
from agreement_votes import leave_one_out

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.evaluation import evaluate
from nnd_suites.evaluation.agreement_markdown import ceiling_summary
from nnd_suites.evaluation.report_markdown import markdown
from nnd_suites.human.agreement import agreement_ceiling, rater_agreement
from nnd_suites.statistics import bootstrap as bootstrap_module
from nnd_suites.statistics.bootstrap import bootstrap_draws, percentile_interval

SOURCE = (
    get_adapter("summeval").folder() / "fixtures" / "model_annotations.aligned.paired.sample.jsonl"
)
CEILING = 53 / 73  # derived by hand in test_agreement_summeval.py


@pytest.fixture(scope="module")
def summeval():
    return build_suite("summeval", SOURCE)


def _by_loop(pairs, verdicts, resamples=1000, seed=0, confidence=0.95):
    """The paired percentile interval written out plainly: one resample of tests at a time,
    both terms on the same drawn tests."""
    counts = np.array([leave_one_out(p.votes)[:2] for p in pairs], dtype=float)
    passed = np.array([v == "pass" for v in verdicts], dtype=float)
    rng = np.random.default_rng(seed)
    shares, differences = [], []
    for _ in range(resamples):
        drawn = rng.integers(0, len(pairs), len(pairs))
        share = counts[drawn, 1].sum() / counts[drawn, 0].sum()
        shares.append(share)
        differences.append(passed[drawn].mean() - share)
    tail = 100 * (1 - confidence) / 2
    return (
        tuple(np.percentile(shares, [tail, 100 - tail])),
        tuple(np.percentile(differences, [tail, 100 - tail])),
    )


def test_known_outcome_sets(summeval):
    pairs = summeval.pairs
    assert len(pairs) == 28
    every = agreement_ceiling(pairs, dict.fromkeys((p.id for p in pairs), "pass"))
    assert every.ceiling == pytest.approx(CEILING)
    low, high = every.ci
    # all pass: the model term is 1 in every resample, so the difference is 1 - ceiling and its
    # interval the ceiling's mirrored
    assert every.difference == pytest.approx(1 - CEILING)
    assert every.difference_ci == pytest.approx((1 - high, 1 - low))
    # all fail, or all ties (a tie is not a pass): the difference is minus the ceiling
    for verdict in ("fail", "tie"):
        none = agreement_ceiling(pairs, dict.fromkeys((p.id for p in pairs), verdict))
        assert none.model.pass_rate == 0
        assert none.difference == pytest.approx(-CEILING)
        assert none.difference_ci == pytest.approx((-high, -low))
        assert none.ci == every.ci  # the ceiling does not depend on the model
    # a degenerate test leaves both terms: the model and the raters on the same 27 tests
    outcomes = dict.fromkeys((p.id for p in pairs), "pass") | {pairs[0].id: "degenerate"}
    fewer = agreement_ceiling(pairs, outcomes)
    assert (fewer.tests, fewer.tests_not_rated, fewer.model.n) == (27, 1, 27)
    assert fewer.difference == pytest.approx(1 - fewer.ceiling)
    # one compared test: a difference, no interval
    single = agreement_ceiling(pairs[:1], {pairs[0].id: "fail"})
    assert single.tests == 1 and single.ci is None and single.difference_ci is None


def test_pairing_narrows_the_interval_when_the_terms_move_together(summeval):
    # the model passes exactly the 11 tests where the 3 experts agree: its pass rate and the
    # raters' agreement rise and fall together over resamples, and the paired interval is
    # narrower than the one from resampling the two terms independently
    pairs = summeval.pairs
    unanimous = {p.id for p in pairs if {v.prefers for v in p.votes} == {"high"}}
    assert len(unanimous) == 11
    outcomes = {p.id: "pass" if p.id in unanimous else "fail" for p in pairs}
    found = agreement_ceiling(pairs, outcomes)
    assert found.difference == pytest.approx(11 / 28 - CEILING)
    verdicts = [outcomes[p.id] for p in pairs]
    ceiling_ci, difference_ci = _by_loop(pairs, verdicts)
    assert found.ci == pytest.approx(ceiling_ci)
    assert found.difference_ci == pytest.approx(difference_ci)
    rng = np.random.default_rng(1)
    model_rate, share = [], []
    passed = np.array([v == "pass" for v in verdicts], dtype=float)
    counts = np.array([leave_one_out(p.votes)[:2] for p in pairs], dtype=float)
    for _ in range(1000):
        model_rate.append(passed[rng.integers(0, 28, 28)].mean())
        drawn = rng.integers(0, 28, 28)
        share.append(counts[drawn, 1].sum() / counts[drawn, 0].sum())
    unpaired = np.percentile(np.array(model_rate) - np.array(share), [2.5, 97.5])
    width = found.difference_ci[1] - found.difference_ci[0]
    assert width < 0.8 * (unpaired[1] - unpaired[0])


def test_a_tiny_models_report(summeval, tiny_causal_model, tmp_path):
    report = evaluate(
        str(tiny_causal_model), summeval, out=tmp_path / "run", progress=False, cache=False
    )
    result = report.suites[summeval.name]
    found = result.agreement_ceiling
    verdicts = {o.pair_id: o.outcome for o in report.outcomes[summeval.name]}
    assert found.tests == 28 and found.model == result.overall
    assert found.difference == pytest.approx(result.overall.pass_rate - CEILING)
    ceiling_ci, difference_ci = _by_loop(summeval.pairs, [verdicts[p.id] for p in summeval.pairs])
    assert found.ci == pytest.approx(ceiling_ci)
    assert found.difference_ci == pytest.approx(difference_ci)
    low, high = found.difference_ci
    assert low < found.difference < high
    text = (tmp_path / "run" / "report.md").read_text()
    assert text == markdown(report)
    gap = f"{100 * found.difference:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}] points"
    assert f"Model minus raters' agreement: {gap}" in text
    line = ceiling_summary(result)
    assert line.startswith("human agreement on 28 tests: model ") and gap in line


def test_rater_agreement_needs_no_model(summeval):
    found = rater_agreement([v.prefers for v in p.votes] for p in summeval.pairs)
    assert (found.tests, found.cases, found.agreed) == (28, 73, 53)
    every_test = dict.fromkeys((p.id for p in summeval.pairs), "fail")
    assert found.ci == agreement_ceiling(summeval.pairs, every_test).ci
    assert rater_agreement([["high"], [], ["tie", "tie"]]) is None


def test_drawing_in_chunks_is_drawing_row_by_row(monkeypatch):
    values = np.random.default_rng(7).random(53)

    def means(rows):
        return values[rows].mean(axis=1)

    whole = bootstrap_draws(means, 53, resamples=300, seed=4)
    monkeypatch.setattr(bootstrap_module, "_CHUNK_CELLS", 53 * 7)  # 7 rows at a time
    assert np.array_equal(bootstrap_draws(means, 53, resamples=300, seed=4), whole)
    rng = np.random.default_rng(4)
    by_row = [values[rng.integers(0, 53, 53)].mean() for _ in range(300)]
    assert np.array_equal(whole, by_row)
    with pytest.raises(ValueError, match="needs tests and resamples"):
        bootstrap_draws(means, 0, resamples=10, seed=0)


def test_percentile_interval_leaves_undefined_draws_out():
    draws = np.array([np.nan, *range(101), np.nan])
    assert percentile_interval(draws, 0.9) == pytest.approx((5.0, 95.0))
    assert percentile_interval(np.array([np.nan, np.nan]), 0.95) is None
