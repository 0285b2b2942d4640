"""The one paired statistic: two outcomes of each test (two models, or a test before and after a
transformation), compared test by test.

``compare`` (model A against model B) and ``robustness`` (transformed against untouched) both
count through :func:`paired_counts`, with the one outcome rule of
:mod:`nnd_suites.statistics.outcomes`: a test is compared only when it is rated on both sides; a
test degenerate on either side is counted as degenerate, one skipped on either side (and not
degenerate) as skipped, and neither enters a rate. A tie is not a pass.

Statistics: the exact McNemar test on the discordant tests, Newcombe's interval of the difference
of paired proportions, and Holm's step-down correction across categories.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import Field

from nnd_suites.infra.validation import StrictModel
from nnd_suites.statistics.outcomes import rated_in_all, wilson

CONFIDENCE = 0.95
MCNEMAR = (
    "exact McNemar test: two-sided binomial test of the tests only A passes among the discordant "
    "tests (only A or only B passes), p = 1/2 under no difference; p = 1 with no discordant test"
)


@dataclass(frozen=True)
class PairedCounts:
    """The 2x2 table of two runs on the same tests (A's rate minus B's is the difference)."""

    both: int = 0
    a_only: int = 0
    b_only: int = 0
    neither: int = 0
    ties_a: int = 0
    ties_b: int = 0
    degenerate: int = 0
    skipped: int = 0

    @property
    def n(self) -> int:
        """Tests compared: rated under both A and B."""
        return self.both + self.a_only + self.b_only + self.neither

    @property
    def passed_a(self) -> int:
        return self.both + self.a_only

    @property
    def passed_b(self) -> int:
        return self.both + self.b_only

    @property
    def difference(self) -> float | None:
        return (self.a_only - self.b_only) / self.n if self.n else None

    def p_value(self) -> float:
        return mcnemar_exact(self.a_only, self.b_only)

    def difference_ci(self, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
        if not self.n:
            return None
        return newcombe_difference_ci(self.both, self.a_only, self.b_only, self.neither, confidence)


def paired_counts(outcomes: Iterable[tuple[str, str]]) -> PairedCounts:
    """Count ``(outcome under A, outcome under B)`` of each test by the one outcome rule."""
    table = dict.fromkeys(PairedCounts.__dataclass_fields__, 0)
    for a, b in outcomes:
        if "degenerate" in (a, b):
            table["degenerate"] += 1
        elif not rated_in_all((a, b)):
            table["skipped"] += 1
        else:
            table["ties_a"] += a == "tie"
            table["ties_b"] += b == "tie"
            cell = {(True, True): "both", (True, False): "a_only", (False, True): "b_only"}
            table[cell.get((a == "pass", b == "pass"), "neither")] += 1
    return PairedCounts(**table)


class PairedResult(StrictModel):
    """Two runs A and B on the same tests, as ``compare`` (two models) and ``robustness``
    (A transformed, B untouched) report them. ``difference`` is A's pass rate minus B's."""

    n: int = Field(ge=0, description="tests compared: rated (pass, fail or tie) in both runs")
    degenerate: int = Field(ge=0, description="tests left out: both candidates the same text")
    skipped: int = Field(
        0,
        ge=0,
        description="tests left out: a candidate did not fit a model's window in either run",
    )
    passed_a: int = Field(ge=0)
    passed_b: int = Field(ge=0)
    ties_a: int | None = Field(
        ge=0,
        description="tests with equal scores under A (not passes); null: not recorded (a "
        "robustness report written before it counted ties)",
    )
    ties_b: int | None = Field(ge=0)
    pass_rate_a: float | None
    pass_rate_b: float | None
    difference: float | None = Field(description="pass_rate_a - pass_rate_b = (a_only - b_only)/n")
    difference_ci: tuple[float, float] | None = Field(
        None, description="Newcombe 95% interval of the paired difference"
    )
    both: int = Field(ge=0, description="tests both runs pass")
    a_only: int = Field(ge=0, description="discordant: A passes, B does not")
    b_only: int = Field(ge=0, description="discordant: B passes, A does not")
    neither: int = Field(ge=0)
    p_value: float | None = Field(
        description="exact McNemar p-value (two-sided); null: robustness compared no test"
    )
    p_holm: float | None = Field(
        None, description="p_value after Holm's correction across its family (null: not corrected)"
    )

    @classmethod
    def of(cls, counts: PairedCounts) -> PairedResult:
        n = counts.n
        return cls(
            n=n,
            degenerate=counts.degenerate,
            skipped=counts.skipped,
            passed_a=counts.passed_a,
            passed_b=counts.passed_b,
            ties_a=counts.ties_a,
            ties_b=counts.ties_b,
            pass_rate_a=counts.passed_a / n if n else None,
            pass_rate_b=counts.passed_b / n if n else None,
            difference=counts.difference,
            difference_ci=counts.difference_ci(),
            both=counts.both,
            a_only=counts.a_only,
            b_only=counts.b_only,
            neither=counts.neither,
            p_value=counts.p_value(),
        )


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: the discordant tests split 50/50 under no difference."""
    discordant = a_only + b_only
    if discordant == 0:
        return 1.0
    from scipy.stats import binomtest  # not imported for `nnd-suites list`

    return float(binomtest(a_only, discordant, 0.5).pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: the k-th smallest (k from 0) is multiplied by
    m - k, then made non-decreasing in that order and capped at 1."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for k, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - k) * p_values[index]))
        adjusted[index] = running
    return adjusted


def newcombe_difference_ci(
    both: int, a_only: int, b_only: int, neither: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Interval of (A - B) pass rate on paired tests: Newcombe (1998), method 10.

    The Wilson intervals of the two rates are combined with the phi correlation of the paired
    2x2 table (with Newcombe's continuity adjustment of phi, as in Altman et al., "Statistics
    with confidence", 2000); it stays within [-1, 1] and behaves at 0 and n discordant tests.
    """
    n = both + a_only + b_only + neither
    p_b, p_a = (both + b_only) / n, (both + a_only) / n
    low_b, high_b = wilson(both + b_only, n, confidence)  # n > 0: never None here
    low_a, high_a = wilson(both + a_only, n, confidence)
    margins = (both + b_only) * (a_only + neither) * (both + a_only) * (b_only + neither)
    agreement = both * neither - b_only * a_only
    adjusted = agreement - n / 2 if agreement > n / 2 else min(agreement, 0)
    phi = adjusted / math.sqrt(margins) if margins else 0.0
    delta = p_a - p_b
    below = math.sqrt(
        max(
            (p_a - low_a) ** 2 - 2 * phi * (p_a - low_a) * (high_b - p_b) + (high_b - p_b) ** 2,
            0.0,
        )
    )
    above = math.sqrt(
        max(
            (high_a - p_a) ** 2 - 2 * phi * (high_a - p_a) * (p_b - low_b) + (p_b - low_b) ** 2,
            0.0,
        )
    )
    return max(-1.0, delta - below), min(1.0, delta + above)
