"""Scorer sensitivity: the same tests under several scorers, and which verdicts flip between them.

For each further scorer, against the run's first (its *primary* scorer, the one its pass rates
use): the pass rate overall and per category, the tests whose verdict flips (passed under one,
not under the other; counted by the one paired statistic, with an exact McNemar test), and a
length-controlled view: the pass rate where the better candidate is the shorter one and where it
is the longer one (in characters), so a reader sees whether a scorer just prefers length.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import Field

from nnd_suites.infra.validation import StrictModel
from nnd_suites.records.pairs import Pair
from nnd_suites.statistics.outcomes import Rate, TestOutcome, rate, rates_by
from nnd_suites.statistics.paired import paired_counts

LENGTHS = ("better shorter", "same length", "better longer")


class Flips(StrictModel):
    """Verdicts of one scorer against the primary scorer's, on the tests both rated."""

    n: int = Field(description="tests rated under both scorers")
    flipped: int = Field(description="tests passed under exactly one of the two")
    share: float | None = Field(description="flipped / n")
    only_primary: int = Field(description="passed under the primary scorer only")
    only_this: int = Field(description="passed under this scorer only")
    p_value: float = Field(description="exact McNemar test on the flipped tests")


class ScorerResult(StrictModel):
    overall: Rate
    by_category: dict[str, Rate]
    by_length: dict[str, Rate] = Field(
        description="length-controlled view: pass rate where the better candidate is shorter, "
        "as long as, or longer than the worse one (characters)"
    )
    flips: Flips | None = Field(description="against the primary scorer (null for itself)")


class Sensitivity(StrictModel):
    """One suite under several scorers (``scorers[primary]`` is the report's own figures)."""

    primary: str
    scorers: dict[str, ScorerResult]


def _length(pair: Pair) -> str:
    high, low = len(pair.high.text), len(pair.low.text)
    return LENGTHS[0] if high < low else LENGTHS[1] if high == low else LENGTHS[2]


def sensitivity(
    pairs: Sequence[Pair], outcomes: Mapping[str, Sequence[TestOutcome]]
) -> Sensitivity:
    """``outcomes``: scorer spec -> the suite's per-test outcomes under it (first: primary)."""
    primary = next(iter(outcomes))
    lengths = {pair.id: _length(pair) for pair in pairs}
    results = {}
    for spec, rows in outcomes.items():
        by_length = rates_by(rows, lambda o: lengths[o.pair_id], lambda o: o.outcome)
        results[spec] = ScorerResult(
            overall=rate(o.outcome for o in rows),
            by_category=rates_by(rows, lambda o: o.category, lambda o: o.outcome),
            by_length={name: by_length[name] for name in LENGTHS if name in by_length},
            flips=None if spec == primary else _flips(outcomes[primary], rows),
        )
    return Sensitivity(primary=primary, scorers=results)


def _flips(primary: Sequence[TestOutcome], other: Sequence[TestOutcome]) -> Flips:
    counts = paired_counts((a.outcome, b.outcome) for a, b in zip(primary, other, strict=True))
    flipped = counts.a_only + counts.b_only
    return Flips(
        n=counts.n,
        flipped=flipped,
        share=flipped / counts.n if counts.n else None,
        only_primary=counts.a_only,
        only_this=counts.b_only,
        p_value=counts.p_value(),
    )
