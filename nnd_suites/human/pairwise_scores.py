"""Each named system's win rate in a pairwise suite: its human score.

A pairwise suite keeps both responses of every judgment (``candidates.parquet``, see
:func:`nnd_suites.builder.judged_pairs.judged_candidates`): two rows in a row, in the judgment's
order, the preferred one labelled with the rule's ``high_label``, the other ``low_label``, and both
unlabelled for a tie. A system's win rate is the share of the comparisons it took part in that it
won, **a tie counting as half a win** (so that ties neither reward nor punish either side, and the
rates of two systems that only tied each other stay at 50%).

A comparison of a system with itself (its name on both sides) says nothing of how it fares
against others: it is in no system's rate and counted apart. A response that names no system
(:data:`~nnd_suites.records.judgments.UNKNOWN_SYSTEM`) is in no rate and counted as
unattributed; its opponent's comparison still counts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from nnd_suites.errors import NoSystemsError, SuiteValidationError
from nnd_suites.infra.formatting import count
from nnd_suites.quality_map.pairwise import PairwiseRule
from nnd_suites.records.judgments import named_systems
from nnd_suites.suite import Suite, SuiteCandidate

#: what a pairwise suite's human score is, in words (``systems`` prints it above the table)
WIN_RATE_MEASURE = (
    "share of the comparisons the system took part in that people judged it won (a tie "
    "counts as half a win; column 'candidates': its responses compared)"
)

#: the value of a comparison's outcome to the side that got it
_CREDIT = {"high": 1.0, "tie": 0.5, "low": 0.0}


@dataclass
class WinRates:
    """Wins (ties as halves) and comparisons per named system, and what is in no rate."""

    wins: Counter[str] = field(default_factory=Counter)
    comparisons: Counter[str] = field(default_factory=Counter)
    unattributed: int = 0  # responses naming no system
    self_comparisons: int = 0  # comparisons with one system on both sides

    def rate(self, system: str) -> float:
        return self.wins[system] / self.comparisons[system]


def _outcomes(suite: Suite, rule: PairwiseRule, a: SuiteCandidate, b: SuiteCandidate) -> tuple:
    """(outcome of a, outcome of b) of one judgment's two rows; anything else is a damaged
    suite, named."""
    meaning = {rule.high_label: "high", rule.low_label: "low", None: "tie"}
    outcome_a, outcome_b = meaning.get(a.label, "?"), meaning.get(b.label, "?")
    if a.group_id != b.group_id or {outcome_a, outcome_b} not in ({"high", "low"}, {"tie"}):
        raise SuiteValidationError(
            f"suite {suite.name}: candidates of group {a.group_id} {a.systems} and group "
            f"{b.group_id} {b.systems} are not the two responses of one judgment (labels "
            f"{a.label!r} and {b.label!r}); a pairwise suite keeps each judgment as two rows in a "
            "row: rebuild it with `nnd-suites build`"
        )
    return outcome_a, outcome_b


def win_rates(suite: Suite, rule: PairwiseRule) -> WinRates:
    """Every named system's wins and comparisons in the pairwise ``suite`` judged by ``rule``
    (see the module docstring); a suite whose only named systems meet themselves is a
    NoSystemsError."""
    rows = suite.candidates
    if len(rows) % 2:
        raise SuiteValidationError(
            f"suite {suite.name}: {count(len(rows))} candidates, an odd number, cannot be the two "
            "responses of each judgment; rebuild it with `nnd-suites build`"
        )
    rates = WinRates()
    for a, b in zip(rows[::2], rows[1::2], strict=True):
        outcomes = _outcomes(suite, rule, a, b)
        sides = [named_systems(a.systems), named_systems(b.systems)]
        rates.unattributed += sum(not side for side in sides)
        if set(sides[0]) & set(sides[1]):
            rates.self_comparisons += 1
            continue
        for side, outcome in zip(sides, outcomes, strict=True):
            for system in side:
                rates.comparisons[system] += 1
                rates.wins[system] += _CREDIT[outcome]
    if not rates.comparisons:  # the caller refuses a suite naming no system before this
        raise NoSystemsError(
            f"suite {suite.name}: every one of its {len(rows) // 2} comparisons with a named "
            "system sets it against itself, so no system has a win rate over others to score "
            "or verify"
        )
    return rates
