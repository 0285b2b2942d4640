"""The one outcome rule: what a test's outcome is, which tests a pass rate counts, and the rate.

Every view of a run (its report, a leaderboard, ``compare``, ``robustness``, ``place``, slices and
bias baselines) counts tests through this module, so the same outcomes give the same counts
everywhere:

- ``degenerate``: the two candidates are the same text; there is nothing to distinguish.
- ``skipped``: a candidate could not be scored (alone, it does not fit the model's window).
- otherwise the verdict of the two scores: ``pass`` iff the better candidate scored strictly
  higher, ``tie`` on equal scores (not a pass), ``fail`` else.

A pass rate is ``passed / n`` over the *rated* tests (pass, fail, tie); degenerate and skipped
tests are counted beside it, never as failures. A leaf module: it imports nothing of ours.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Literal, TypeVar

from pydantic import Field, model_validator

from nnd_suites.infra.validation import StrictModel
from nnd_suites.statistics.subsets import largest_first

Outcome = Literal["pass", "fail", "tie", "degenerate", "skipped"]
OUTCOMES: tuple[Outcome, ...] = ("pass", "fail", "tie", "degenerate", "skipped")
#: the outcomes a pass rate counts in its ``n``
RATED: frozenset[str] = frozenset({"pass", "fail", "tie"})

T = TypeVar("T")


def verdict(score_high: float, score_low: float) -> Outcome:
    """The verdict of two scores of one test: pass iff the better candidate scored higher."""
    if score_high > score_low:
        return "pass"
    return "tie" if score_high == score_low else "fail"


def test_outcome(
    score_high: float, score_low: float, *, degenerate: bool, skipped: bool
) -> Outcome:
    """A test's outcome: degenerate first, then skipped, then the verdict of its scores."""
    if degenerate:
        return "degenerate"
    if skipped:
        return "skipped"
    return verdict(score_high, score_low)


test_outcome.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


class Rate(StrictModel):
    """Pass rate of a set of tests; ``n`` counts the rated tests (pass, fail, tie) only."""

    n: int = Field(ge=0, description="tests rated: passed + failed + ties")
    passed: int = Field(ge=0)
    ties: int = Field(ge=0)
    failed: int = Field(ge=0)
    degenerate: int = Field(0, ge=0, description="tests whose two candidates are the same text")
    skipped: int = Field(
        0, ge=0, description="tests not scored: a candidate alone does not fit the model's window"
    )
    pass_rate: float | None = Field(description="passed / n; null when n is 0")
    ci: tuple[float, float] | None = Field(description="Wilson 95% interval of pass_rate")

    @model_validator(mode="after")
    def _counts_add_up(self) -> Rate:
        if self.passed + self.failed + self.ties != self.n:
            raise ValueError(
                f"passed {self.passed} + failed {self.failed} + ties {self.ties} != n {self.n}"
            )
        # an edited pass rate would be printed (place) as if the counts gave it
        share, given = (self.passed / self.n if self.n else None), self.pass_rate
        if given != share and (given is None or share is None or not math.isclose(given, share)):
            raise ValueError(
                f"pass_rate {given} is not passed {self.passed} / n {self.n} ({share}): the "
                "figures were edited after they were written; re-run what wrote them"
            )
        return self

    @property
    def tests(self) -> int:
        """Every test the rate was taken over, rated or not."""
        return self.n + self.degenerate + self.skipped


def wilson(passed: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of a pass rate (None when there is nothing to rate)."""
    if n == 0:
        return None
    from scipy.stats import binomtest  # scipy.stats takes 0.5 s to import: not for `list`

    interval = binomtest(passed, n).proportion_ci(confidence, method="wilson")
    return float(interval.low), float(interval.high)


def rate(outcomes: Iterable[str]) -> Rate:
    """The pass rate of some tests' outcomes (anything but the five outcomes is refused)."""
    counts = dict.fromkeys(OUTCOMES, 0)
    for outcome in outcomes:
        if outcome not in counts:
            raise ValueError(f"{outcome!r} is not a test outcome (one of {', '.join(OUTCOMES)})")
        counts[outcome] += 1
    n = counts["pass"] + counts["fail"] + counts["tie"]
    return Rate(
        n=n,
        passed=counts["pass"],
        ties=counts["tie"],
        failed=counts["fail"],
        degenerate=counts["degenerate"],
        skipped=counts["skipped"],
        pass_rate=counts["pass"] / n if n else None,
        ci=wilson(counts["pass"], n),
    )


def rates_by(
    items: Iterable[T], key: Callable[[T], str], outcome: Callable[[T], str]
) -> dict[str, Rate]:
    """The pass rate of each group of ``items`` (grouped by ``key``), largest group first."""
    groups = largest_first((key(item), outcome(item)) for item in items)
    return {name: rate(outcomes) for name, outcomes in groups.items()}


def rows_of(overall: T, by_category: Mapping[str, T], own: str = "overall") -> dict[str, T]:
    """The figure over every test as the row ``own``, then each category's row: a category named
    ``own`` (categories are data: sfhot's and topical_chat_usr's is ``overall``) is ``NAME
    (category)``, never taken for the figure over every test."""
    return {own: overall} | {
        f"{category} (category)" if category == own else category: figure
        for category, figure in by_category.items()
    }


class TestOutcome(StrictModel):
    """One test's scores and outcome (one row of the saved outcomes parquet)."""

    __test__ = False  # not a pytest class

    pair_id: str
    parent_id: str | None = None
    group_id: str
    category: str
    label: str
    ll_high: float = Field(
        description="the run's scorer's value for the high candidate: under the default scorer "
        "`mean`, the mean log-probability per target token (NaN when skipped)"
    )
    ll_low: float
    n_high: int = Field(description="targets scored for the high candidate (tokens + EOS)")
    n_low: int
    truncated: bool = Field(description="the context was cut from the left to fit the window")
    outcome: Outcome


def outcome_map(outcomes: Iterable[TestOutcome]) -> dict[str, Outcome]:
    """A run's outcomes keyed by test id, as :func:`rated_by_all` reads them."""
    return {o.pair_id: o.outcome for o in outcomes}


def rated_by_all(*runs: Mapping[str, str]) -> list[str]:
    """The ids of the tests that every run rated (pass, fail or tie), in the first run's order.

    The one place that decides which tests two figures are compared on: a model beside its bias
    baselines, a new model placed on the annotated systems' fit, systems correlated with human
    scores. A test one run skipped (a candidate too long for its model), found degenerate or
    lacks is left out of every figure compared, so no figure counts tests another does not.
    Each run maps test id -> outcome (:func:`outcome_map`)."""
    if not runs:
        return []
    first, *others = runs
    return [
        pair_id
        for pair_id, outcome in first.items()
        if rated_in_all([outcome, *(run.get(pair_id) for run in others)])
    ]


def rated_in_all(outcomes: Iterable[str | None]) -> bool:
    """Whether one test was rated in every run (its outcome in each; None: a run lacks it):
    the rule of :func:`rated_by_all`, for counts taken test by test (``compare``)."""
    return all(outcome in RATED for outcome in outcomes)
