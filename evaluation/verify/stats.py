"""The statistics of verification (paper 2.3) and placement (paper 5.1), as pure functions.

Systems are keyed by name; ``pass_rates`` are their NND pass rates and ``human`` their human
scores on the same scale for every system (a share or a mean rating). With the 3 to 7 systems a
human evaluation usually has, every correlation below rests on very few points: read the
bootstrap intervals, which are wide, before the point values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats

from nnd_suites.errors import NNDError
from nnd_suites.infra.formatting import count
from nnd_suites.statistics.bootstrap import bootstrap_draws, percentile_interval


def _aligned(pass_rates: Mapping[str, float], human: Mapping[str, float]) -> list[str]:
    if set(pass_rates) != set(human):
        raise NNDError(
            f"pass rates and human scores name different systems: only pass rates for "
            f"{sorted(set(pass_rates) - set(human))}, only human scores for "
            f"{sorted(set(human) - set(pass_rates))}; give both for the same systems"
        )
    if len(human) < 2:
        raise NNDError(f"a correlation needs at least 2 systems, got {sorted(human)}")
    return sorted(human)


def rank_correlation(pass_rates: Mapping[str, float], human: Mapping[str, float]) -> float:
    """Kendall's tau (tau-b, ties allowed) between pass rates and human scores; nan if either is
    constant."""
    names = _aligned(pass_rates, human)
    x, y = [pass_rates[n] for n in names], [human[n] for n in names]
    if len(set(x)) == 1 or len(set(y)) == 1:
        return math.nan  # undefined; said here rather than by a scipy warning per resample
    return float(stats.kendalltau(x, y).statistic)


def pairwise_gaps(
    pass_rates: Mapping[str, float], human: Mapping[str, float]
) -> list[tuple[str, str, float, float]]:
    """The n(n-1)/2 pairs ``(better, worse, human gap, pass-rate gap)``.

    Each pair is oriented so that its human gap is >= 0 (the system people preferred first, ties
    broken by name): a gap is a signed difference, and a fixed orientation keeps the correlation
    independent of the order the systems are listed in.
    """
    names = sorted(_aligned(pass_rates, human), key=lambda n: (-human[n], n))
    return [
        (a, b, human[a] - human[b], pass_rates[a] - pass_rates[b])
        for a, b in combinations(names, 2)
    ]


def gap_correlation(pass_rates: Mapping[str, float], human: Mapping[str, float]) -> float:
    """Pearson correlation between the pairwise gaps in pass rate and in human score (paper 2.3);
    nan with fewer than 3 systems or constant gaps."""
    gaps = pairwise_gaps(pass_rates, human)
    human_gaps = np.array([g[2] for g in gaps])
    rate_gaps = np.array([g[3] for g in gaps])
    if len(gaps) < 2 or np.ptp(human_gaps) == 0 or np.ptp(rate_gaps) == 0:
        return math.nan
    return float(stats.pearsonr(rate_gaps, human_gaps).statistic)


@dataclass(frozen=True)
class Bootstrap:
    """Both correlations with percentile intervals from resampling tests (human scores fixed)."""

    systems: int
    tests: int
    resamples: int
    seed: int
    confidence: float
    rank: float
    rank_ci: tuple[float, float] | None
    gap: float
    gap_ci: tuple[float, float] | None
    #: resamples where a correlation was undefined (all pass rates equal), left out of its interval
    rank_undefined: int
    gap_undefined: int


def bootstrap_correlations(
    passes: Mapping[str, Sequence[bool]],
    human: Mapping[str, float],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    weights: Sequence[float] | None = None,
) -> Bootstrap:
    """Resample tests with replacement, recompute every system's pass rate and both correlations.

    ``passes[system][i]`` says whether the system passed test ``i`` (a tie is not a pass): every
    system must be scored on the same tests in the same order. Intervals are percentile intervals.
    With ``weights`` (one per test, >= 0) a pass rate is the weighted share of tests passed
    (:func:`weighted_pass_rates`); a resample whose weights sum to 0 leaves both undefined.
    """
    names = _aligned(passes, human)
    lengths = {len(passes[n]) for n in names}
    if len(lengths) != 1 or 0 in lengths:
        raise NNDError(
            "every system needs outcomes on the same non-empty list of tests; got "
            + ", ".join(f"{n}: {count(len(passes[n]))}" for n in names)
        )
    matrix = np.array([np.asarray(passes[n], dtype=float) for n in names])
    tests = matrix.shape[1]
    weight = np.ones(tests) if weights is None else _checked_weights(weights, tests)

    def correlations(drawn: np.ndarray) -> tuple[float, float]:
        total = weight[drawn].sum()
        if total == 0:
            return math.nan, math.nan
        rates = matrix[:, drawn] @ weight[drawn] / total
        by_name = dict(zip(names, rates.tolist(), strict=True))
        return rank_correlation(by_name, human), gap_correlation(by_name, human)

    rank, gap = correlations(np.arange(tests))
    draws = bootstrap_draws(
        lambda rows: np.array([correlations(drawn) for drawn in rows]),
        tests,
        resamples=resamples,
        seed=seed,
    )

    return Bootstrap(
        systems=len(names),
        tests=tests,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        rank=rank,
        rank_ci=percentile_interval(draws[:, 0], confidence),
        gap=gap,
        gap_ci=percentile_interval(draws[:, 1], confidence),
        rank_undefined=int(np.isnan(draws[:, 0]).sum()),
        gap_undefined=int(np.isnan(draws[:, 1]).sum()),
    )


def _checked_weights(weights: Sequence[float], tests: int) -> np.ndarray:
    weight = np.asarray(weights, dtype=float)
    if weight.shape != (tests,) or not np.all(np.isfinite(weight)) or np.any(weight < 0):
        raise NNDError(f"weights must be {tests} finite numbers >= 0, one per test")
    return weight


def weighted_pass_rates(
    passes: Mapping[str, Sequence[bool]], weights: Sequence[float]
) -> dict[str, float]:
    """Each system's share of the tests' total weight that it passed: sum(w * pass) / sum(w)
    (the plain pass rate when every weight is equal)."""
    weight = _checked_weights(weights, len(weights))
    if any(len(passed) != len(weight) for passed in passes.values()):
        raise NNDError(f"every system needs an outcome for each of the {count(len(weight))} tests")
    if weight.sum() == 0:
        raise NNDError("every test weighs 0: no weighted pass rate")
    return {
        name: float(np.asarray(passed, dtype=float) @ weight / weight.sum())
        for name, passed in passes.items()
    }


@dataclass(frozen=True)
class Placement:
    """A new model's predicted human score from the least-squares fit over annotated systems."""

    pass_rate: float
    predicted: float
    interval: tuple[float, float] | None  # prediction interval; None with only 2 systems
    confidence: float
    slope: float
    intercept: float
    r_squared: float
    systems: int
    poor_fit: bool
    reason: str | None
    extrapolated: bool = False


def place_model(
    pass_rates: Mapping[str, float],
    human: Mapping[str, float],
    new_pass_rate: float,
    *,
    confidence: float = 0.95,
    min_systems: int = 4,
    min_r_squared: float = 0.5,
) -> Placement:
    """Fit human score = slope * pass rate + intercept over the annotated systems; predict the
    new model's human score with a prediction interval (t distribution, n - 2 degrees of freedom).

    The fit is flagged ``poor_fit`` when r² < ``min_r_squared`` or fewer than ``min_systems``
    systems were annotated: its prediction says little then. ``extrapolated``: the new pass rate
    lies outside the systems' range, where a straight line is an assumption, not an observation.
    """
    names = _aligned(pass_rates, human)
    x = np.array([pass_rates[n] for n in names], dtype=float)
    y = np.array([human[n] for n in names], dtype=float)
    if np.ptp(x) == 0:
        raise NNDError(
            f"every annotated system has the same pass rate ({x[0]:.4f}): no fit can place a "
            "new model"
        )
    fit = stats.linregress(x, y)
    n = len(names)
    predicted = float(fit.intercept + fit.slope * new_pass_rate)
    interval = None
    if n > 2:
        residuals = y - (fit.intercept + fit.slope * x)
        s = math.sqrt(float(residuals @ residuals) / (n - 2))
        spread = math.sqrt(
            1 + 1 / n + (new_pass_rate - x.mean()) ** 2 / float(((x - x.mean()) ** 2).sum())
        )
        half = float(stats.t.ppf((1 + confidence) / 2, n - 2)) * s * spread
        interval = (predicted - half, predicted + half)
    r_squared = float(fit.rvalue**2)
    reasons = []
    if n < min_systems:
        reasons.append(f"only {n} annotated systems (fewer than {min_systems})")
    if r_squared < min_r_squared:
        reasons.append(f"r² = {r_squared:.2f} < {min_r_squared}")
    return Placement(
        pass_rate=new_pass_rate,
        predicted=predicted,
        interval=interval,
        confidence=confidence,
        slope=float(fit.slope),
        intercept=float(fit.intercept),
        r_squared=r_squared,
        systems=n,
        poor_fit=bool(reasons),
        reason="; ".join(reasons) or None,
        extrapolated=not x.min() <= new_pass_rate <= x.max(),
    )
