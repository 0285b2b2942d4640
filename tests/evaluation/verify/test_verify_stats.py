"""Verification statistics against values computed by hand on four made-up systems.

Systems A-D have pass rates 0.40, 0.50, 0.60, 0.70 and human scores 0.30, 0.45, 0.40, 0.70.
"""

from __future__ import annotations

import math
from dataclasses import asdict

import pytest

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.verify.stats import (
    bootstrap_correlations,
    gap_correlation,
    pairwise_gaps,
    place_model,
    rank_correlation,
)

RATES = {"A": 0.40, "B": 0.50, "C": 0.60, "D": 0.70}
HUMAN = {"A": 0.30, "B": 0.45, "C": 0.40, "D": 0.70}


def test_kendall_tau_by_hand():
    # 6 pairs; only (B, C) is ordered differently by pass rate (B < C) and humans (B > C):
    # 5 concordant, 1 discordant, no ties -> (5 - 1) / 6
    assert rank_correlation(RATES, HUMAN) == pytest.approx(4 / 6)
    assert rank_correlation(RATES, {n: -v for n, v in HUMAN.items()}) == pytest.approx(-4 / 6)
    assert math.isnan(rank_correlation(dict.fromkeys(RATES, 0.5), HUMAN))
    # B and C tie on pass rate: 5 concordant pairs, 1 tied in x only; tau-b divides by
    # sqrt((6 - 1) * (6 - 0)), so 5 / sqrt(30) (tau-c would give 2 * 5 / (4² * 2/3) = 0.9375)
    tied = RATES | {"C": RATES["B"]}
    assert rank_correlation(tied, HUMAN) == pytest.approx(5 / math.sqrt(30))


def test_gap_correlation_by_hand():
    # pairs oriented by human score (D > B > C > A); gaps in hundredths:
    #   D-B, D-C, D-A, B-C, B-A, C-A: human 25 30 40 5 15 10; pass rate 20 10 30 -10 10 20
    gaps = pairwise_gaps(RATES, HUMAN)
    assert [(a, b) for a, b, _, _ in gaps] == [
        ("D", "B"),
        ("D", "C"),
        ("D", "A"),
        ("B", "C"),
        ("B", "A"),
        ("C", "A"),
    ]
    assert [round(100 * g[2]) for g in gaps] == [25, 30, 40, 5, 15, 10]
    assert [round(100 * g[3]) for g in gaps] == [20, 10, 30, -10, 10, 20]
    # Sxy = 2300 - 125*80/6 = 1900/3; Sxx = 3475 - 125²/6 = 5225/6; Syy = 2000 - 80²/6 = 2800/3
    # r = (1900/3) / sqrt(5225/6 * 2800/3) = 0.702500
    assert gap_correlation(RATES, HUMAN) == pytest.approx(0.702500, abs=1e-6)
    # the order the systems are given in does not matter
    assert gap_correlation(dict(reversed(RATES.items())), HUMAN) == pytest.approx(
        0.702500, abs=1e-6
    )
    assert math.isnan(gap_correlation({"A": 0.1, "B": 0.2}, {"A": 0.3, "B": 0.1}))


def test_mismatched_systems_are_named():
    with pytest.raises(NNDError, match=r"only pass rates for \['E'\]"):
        rank_correlation(RATES | {"E": 0.9}, HUMAN)
    with pytest.raises(NNDError, match="at least 2 systems"):
        gap_correlation({"A": 0.4}, {"A": 0.3})


def _passes(counts: dict[str, int], tests: int = 10) -> dict[str, list[bool]]:
    """System k passes the first counts[k] tests: nested sets, so every resample keeps the
    pass-rate order (up to ties)."""
    return {name: [i < count for i in range(tests)] for name, count in counts.items()}


def test_bootstrap_point_values_interval_and_seed():
    passes = _passes({"A": 4, "B": 5, "C": 6, "D": 7})  # the pass rates 0.4 ... 0.7 above
    result = bootstrap_correlations(passes, HUMAN, resamples=300, seed=7)
    assert (result.systems, result.tests, result.resamples) == (4, 10, 300)
    assert result.rank == pytest.approx(4 / 6)
    assert result.gap == pytest.approx(0.702500, abs=1e-6)
    assert result.rank_ci[0] <= result.rank <= result.rank_ci[1]
    assert -1 <= result.gap_ci[0] <= result.gap <= result.gap_ci[1] <= 1
    assert result == bootstrap_correlations(passes, HUMAN, resamples=300, seed=7)
    assert result != bootstrap_correlations(passes, HUMAN, resamples=300, seed=8)
    assert asdict(result)["rank_ci"] == result.rank_ci
    # humans agreeing with the pass-rate order, and nested passes: no resample can reverse two
    # systems, so tau is never negative, and it is 1 whenever no two rates tie
    agreeing = bootstrap_correlations(passes, RATES, resamples=300, seed=7)
    assert agreeing.rank == pytest.approx(1.0) and agreeing.gap == pytest.approx(1.0)
    assert agreeing.rank_ci[0] >= 0 and agreeing.rank_ci[1] == pytest.approx(1.0)


def test_bootstrap_counts_undefined_resamples():
    # two systems differing on one test of ten: most resamples miss it and tie them
    passes = _passes({"A": 1, "B": 0})
    result = bootstrap_correlations(passes, {"A": 0.9, "B": 0.1}, resamples=200, seed=0)
    assert result.rank == pytest.approx(1.0)
    # P(test 0 never drawn in 10 draws) = 0.9**10 = 0.349: about 70 of 200 resamples undefined
    assert 40 < result.rank_undefined < 100
    assert result.gap_undefined == 200  # one gap: no correlation at all
    assert result.gap_ci is None and math.isnan(result.gap)
    with pytest.raises(NNDError, match="same non-empty list of tests"):
        bootstrap_correlations({"A": [True], "B": [True, False]}, {"A": 1.0, "B": 0.0})


def test_placement_by_hand():
    # x = .4 .5 .6 .7 (mean .55), y = .30 .45 .40 .70 (mean .4625)
    # Sxx = .05, Sxy = .024375 + .000625 - .003125 + .035625 = .0575
    # slope = 1.15, intercept = .4625 - 1.15 * .55 = -.17
    # fitted .29 .405 .52 .635; residuals .01 .045 -.12 .065; SSE = .02075, s² = SSE / 2
    # SST = .086875; r² = 1 - .02075 / .086875 = .761151
    # new model at .8: predicted 1.15 * .8 - .17 = .75
    # half width = t(.975, 2) * s * sqrt(1 + 1/4 + (.8 - .55)² / .05)
    #            = 4.302653 * .1018577 * sqrt(2.5) = .692947
    placed = place_model(RATES, HUMAN, 0.8)
    assert placed.slope == pytest.approx(1.15)
    assert placed.intercept == pytest.approx(-0.17)
    assert placed.r_squared == pytest.approx(0.761151, abs=1e-6)
    assert placed.predicted == pytest.approx(0.75)
    assert placed.interval == pytest.approx((0.75 - 0.692947, 0.75 + 0.692947), abs=1e-6)
    assert (placed.systems, placed.poor_fit, placed.reason) == (4, False, None)
    assert placed.extrapolated  # 0.8 is beyond the systems' 0.4-0.7
    assert not place_model(RATES, HUMAN, 0.55).extrapolated


def test_placement_flags_poor_fits():
    few = place_model({"A": 0.4, "B": 0.5, "C": 0.6}, {"A": 0.3, "B": 0.45, "C": 0.4}, 0.5)
    assert few.poor_fit and "only 3 annotated systems" in few.reason
    flat = place_model(RATES, {"A": 0.5, "B": 0.1, "C": 0.1, "D": 0.5}, 0.5)
    assert flat.poor_fit and flat.r_squared == pytest.approx(0.0) and "r² = 0.00" in flat.reason
    two = place_model({"A": 0.4, "B": 0.6}, {"A": 0.2, "B": 0.6}, 0.5)
    assert two.interval is None and two.predicted == pytest.approx(0.4)
    with pytest.raises(NNDError, match="same pass rate"):
        place_model(dict.fromkeys(RATES, 0.5), HUMAN, 0.5)


def test_placement_is_cut_to_the_range_a_human_score_can_take():
    from nnd_suites.evaluation.verify.place import _place

    fit = (RATES, HUMAN)  # the systems' pass rates and human scores
    free = _place(*fit, 0.8, 0.95)  # the hand-computed fit: 0.75 ± 0.692947
    assert free.prediction_interval == pytest.approx((0.057053, 1.442947), abs=1e-6)
    assert not free.clipped
    cut = _place(*fit, 0.8, 0.95, (0.0, 1.0))
    assert cut.predicted_human_score == pytest.approx(0.75)
    assert cut.prediction_interval == pytest.approx((0.057053, 1.0), abs=1e-6) and cut.clipped
    above = _place(*fit, 1.0, 0.95, (0.0, 0.9))  # 1.15 - 0.17 = 0.98, cut to 0.9
    assert above.predicted_human_score == 0.9 and above.clipped
