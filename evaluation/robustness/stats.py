"""Paired statistics of a transformed suite against its parent, on the same tests.

Everything here is a pure function of per-test outcomes. A test is compared with itself: its
parent outcome against its transformed outcome (GEM's Transformation-Parent set), so the
difference of pass rates gets a paired interval (Newcombe's hybrid score interval for paired
proportions) and a paired test (exact McNemar on the discordant tests). Degenerate tests (the
transformation made both candidates the same text) are excluded from every rate and counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field
from scipy.stats import binomtest, norm

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.report import wilson
from nnd_suites.pairs import is_degenerate
from nnd_suites.suite import Suite

CONFIDENCE = 0.95


@dataclass(frozen=True)
class PairedTest:
    """One test seen twice: untouched (parent) and transformed."""

    test_id: str
    category: str
    parent_passed: bool
    passed: bool
    degenerate: bool
    changed: bool


class PairedComparison(BaseModel):
    """Pass rates of the same ``n`` tests before and after a transformation."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(ge=0, description="tests compared (degenerate tests excluded)")
    degenerate: int = Field(ge=0, description="tests made degenerate, excluded from the rates")
    parent_passed: int = Field(ge=0)
    passed: int = Field(ge=0)
    parent_pass_rate: float | None
    pass_rate: float | None
    delta: float | None = Field(description="pass_rate - parent_pass_rate")
    delta_ci: tuple[float, float] | None = Field(description="95% interval of delta")
    lost: int = Field(ge=0, description="tests passed untouched, not passed transformed")
    gained: int = Field(ge=0, description="tests not passed untouched, passed transformed")
    p_value: float | None = Field(description="exact McNemar test on the lost/gained tests")


def compare(tests: Iterable[PairedTest], confidence: float = CONFIDENCE) -> PairedComparison:
    """Paired comparison over ``tests``; degenerate ones are counted, not compared."""
    tests = list(tests)
    kept = [t for t in tests if not t.degenerate]
    n = len(kept)
    both = sum(t.parent_passed and t.passed for t in kept)
    lost = sum(t.parent_passed and not t.passed for t in kept)
    gained = sum(t.passed and not t.parent_passed for t in kept)
    parent_passed, passed = both + lost, both + gained
    rates = (parent_passed / n, passed / n) if n else (None, None)
    return PairedComparison(
        n=n,
        degenerate=len(tests) - n,
        parent_passed=parent_passed,
        passed=passed,
        parent_pass_rate=rates[0],
        pass_rate=rates[1],
        delta=(passed - parent_passed) / n if n else None,
        delta_ci=paired_difference_ci(both, lost, gained, n - both - lost - gained, confidence)
        if n
        else None,
        lost=lost,
        gained=gained,
        p_value=mcnemar_exact(lost, gained) if n else None,
    )


def mcnemar_exact(lost: int, gained: int) -> float:
    """Two-sided exact McNemar test: the discordant tests split 50/50 under no effect."""
    if lost + gained == 0:
        return 1.0
    return float(binomtest(gained, lost + gained, 0.5).pvalue)


def paired_difference_ci(
    both: int, lost: int, gained: int, neither: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Interval of (transformed - parent) pass rate on paired tests: Newcombe (1998), method 10.

    The Wilson intervals of the two rates are combined with the phi correlation of the paired
    2x2 table (with Newcombe's continuity adjustment of phi, as in Altman et al., "Statistics
    with confidence", 2000); it stays within [-1, 1] and behaves at 0 and n discordant tests.
    """
    n = both + lost + gained + neither
    p_parent, p_child = (both + lost) / n, (both + gained) / n
    low_parent, high_parent = wilson(both + lost, n, confidence)  # n > 0: never None here
    low_child, high_child = wilson(both + gained, n, confidence)
    margins = (both + lost) * (gained + neither) * (both + gained) * (lost + neither)
    agreement = both * neither - lost * gained
    adjusted = agreement - n / 2 if agreement > n / 2 else min(agreement, 0)
    phi = adjusted / math.sqrt(margins) if margins else 0.0
    delta = p_child - p_parent
    below = math.sqrt(
        max(
            (p_child - low_child) ** 2
            - 2 * phi * (p_child - low_child) * (high_parent - p_parent)
            + (high_parent - p_parent) ** 2,
            0.0,
        )
    )
    above = math.sqrt(
        max(
            (high_child - p_child) ** 2
            - 2 * phi * (high_child - p_child) * (p_parent - low_parent)
            + (p_parent - low_parent) ** 2,
            0.0,
        )
    )
    return max(-1.0, delta - below), min(1.0, delta + above)


def wald_paired_difference_ci(
    lost: int, gained: int, n: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The textbook large-sample interval, for comparison (too narrow for few discordant tests)."""
    z = norm.ppf(0.5 + confidence / 2)
    delta = (gained - lost) / n
    spread = z * math.sqrt(max((lost + gained) / n - delta**2, 0.0) / n)
    return delta - spread, delta + spread


# ------------------------------------------------------------------ matching outcomes to tests
def did_pass(outcome: object) -> bool:
    """An evaluator outcome as a pass: ``"pass"`` (or True); ties and failures are not passes."""
    if isinstance(outcome, bool):
        return outcome
    return str(outcome) == "pass"


def paired_tests(
    parent: Suite,
    child: Suite,
    parent_outcomes: Mapping[str, object],
    child_outcomes: Mapping[str, object],
) -> list[PairedTest]:
    """Join a child suite's tests with their parents through ``parent_id``.

    Outcomes map a test id to its outcome in that suite's evaluation. A degenerate child test
    needs no outcome (an evaluator may leave it out); every other test needs both.
    """
    parents = parent.by_id
    tests = []
    for pair in child.pairs:
        source = parents.get(pair.parent_id or pair.id)
        if source is None:
            raise NNDError(
                f"suite {child.name}: test {pair.id} has parent {pair.parent_id}, which suite "
                f"{parent.name} does not hold; transform that suite, not another one"
            )
        degenerate = is_degenerate(pair) or is_degenerate(source)
        if source.id not in parent_outcomes or (not degenerate and pair.id not in child_outcomes):
            missing = parent.name if source.id not in parent_outcomes else child.name
            raise NNDError(f"no outcome for test {pair.id} in the evaluation of suite {missing}")
        # a test that could not be scored on either side is left out like a degenerate one
        skipped = "skipped" in (parent_outcomes[source.id], child_outcomes.get(pair.id))
        degenerate = degenerate or skipped
        tests.append(
            PairedTest(
                test_id=source.id,
                category=source.category,
                parent_passed=did_pass(parent_outcomes[source.id]),
                passed=did_pass(child_outcomes.get(pair.id, False)),
                degenerate=degenerate,
                changed=(pair.context, pair.high.text, pair.low.text)
                != (source.context, source.high.text, source.low.text),
            )
        )
    return tests
