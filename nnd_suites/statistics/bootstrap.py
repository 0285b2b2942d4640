"""The one percentile bootstrap over tests, used by every resampled interval of the project.

A resample draws as many tests as there are, with replacement (numpy's ``default_rng(seed)``,
one row of test indices per resample, in order); a statistic is computed on each resample and
the interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles of the
defined values (numpy's linear interpolation between draws). Tests, not votes or cases, are
resampled because what belongs to one test (its raters' votes, a model's verdict on it, the same
test scored by several systems) is not independent.

Users: the raters' agreement ceiling and its paired difference with a model
(:mod:`nnd_suites.human.agreement`), and verify's correlations
(:mod:`nnd_suites.evaluation.verify.stats`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: index cells drawn at once: bounded memory on suites of many thousand tests
_CHUNK_CELLS = 2_000_000


def bootstrap_draws(
    statistic: Callable[[np.ndarray], np.ndarray], tests: int, *, resamples: int, seed: int
) -> np.ndarray:
    """``statistic`` of ``resamples`` resamples of ``tests`` tests, stacked in draw order.

    ``statistic`` gets a 2-D array of test indices (a row per resample) and returns one value per
    row (or a row of values per row). Rows are drawn in chunks; the random stream, and so every
    figure, is the same as drawing one row at a time."""
    if tests < 1 or resamples < 1:
        raise ValueError(f"a bootstrap needs tests and resamples, got {tests} and {resamples}")
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // tests)
    found = [
        np.asarray(statistic(rng.integers(0, tests, (min(chunk, resamples - start), tests))))
        for start in range(0, resamples, chunk)
    ]
    return np.concatenate(found)


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float] | None:
    """The percentile interval of the draws that are defined (NaN draws left out; None when no
    draw is)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if not len(values):
        return None
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)
