"""How clearly the humans preferred each test's better candidate, and how often they agree.

Two views of a suite whose tests carry human margins (``Pair.margin``, read in the suite's
``margin_kind``) and per-rater votes (``Pair.votes``); both count tests through the one outcome
rule (:mod:`nnd_suites.statistics.outcomes`):

- **Margin strata** (:func:`margin_strata`): pass rates by how decisive the humans were.
  ``rater_share`` margins (the share of raters' votes that prefer the better candidate; a tie
  vote counts as not preferring it) are cut into *unanimous* (every rater), *majority* (more
  than half, not all) and *half or fewer* (ties or opposite votes weigh as much as the
  preferring ones: the humans did not clearly prefer the suite's better candidate). Score
  gaps, stated confidences and margins of an unstated kind live on scales that differ from
  source to source (0-100 ratings, 1-5 Likert means, MQM penalties, confidence scales), so no
  fixed cut point fits them all: they are cut at the
  tertiles of the suite's own margins, into *narrow*, *medium* and *clear* bands of about a
  third of the tests each (each band gets a usable interval). A band holds every test whose
  margin is at most its upper cut point, so tests with equal margins stay in one band (and a
  band may be larger than a third, or empty and left out); each band gives the smallest and
  largest margin in it. Tests without a margin are the band ``no margin``, never dropped.
- **Agreement ceiling** (:func:`agreement_ceiling`), leave one rater out: on every test with at
  least two votes, each vote is compared with the majority of the *other* votes on that test
  (``high`` votes against ``low`` votes; a ``tie`` vote among the others abstains). When the
  others are tied (as many ``high`` as ``low``, or only ties) the case is skipped and counted.
  A vote agrees when it prefers the side the others' majority prefers; a ``tie`` vote never
  agrees, as a model's tie is never a pass. The ceiling is the share of agreeing (vote, test)
  cases. Cases of one test share its texts and its other raters, so they are not independent:
  the interval is a percentile bootstrap that resamples *tests* (numpy, seeded), not cases;
  a Wilson interval over cases would be too narrow.

What the ceiling compares with: on the same tests, the model's pass rate says how often the model
prefers the side of the suite's label, which all the raters' judgments set together (their
majority, or their mean rating). One rater against the majority of the others is the nearest
human counterpart; it is a slightly harder target than the model's (the rater's own vote is not
in the majority it is compared with), so a model at the ceiling agrees with the human consensus
as often as a typical rater does, and a model above it is not "better than humans".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import Field

from nnd_suites.infra.validation import StrictModel
from nnd_suites.records.margins import MarginKind
from nnd_suites.records.pairs import Pair
from nnd_suites.statistics.bootstrap import bootstrap_draws, percentile_interval
from nnd_suites.statistics.outcomes import Rate, rate, rated_by_all

NO_MARGIN = "no margin"
#: a share within this of 1 is unanimous (shares are ratios of small counts, stored as floats)
_UNANIMOUS = 1e-9


class MarginBand(StrictModel):
    """The pass rate of the tests whose human margin lies in one band."""

    label: str = Field(
        description="unanimous, majority, half or fewer (rater shares); narrow, medium, clear "
        "(tertiles); or 'no margin'"
    )
    low: float | None = Field(description="the smallest margin in the band (null: no margin)")
    high: float | None = Field(description="the largest margin in the band (null: no margin)")
    rate: Rate


class MarginStrata(StrictModel):
    """Pass rates stratified by how clearly the humans preferred the better candidate."""

    kind: MarginKind | None = Field(
        description="the suite's margin_kind (rater_share, score_gap, confidence); null: the "
        "suite does not say"
    )
    rule: str = Field(description="how the bands were cut")
    bands: list[MarginBand] = Field(description="in order of margin, 'no margin' last")


class RaterAgreement(StrictModel):
    """How often one rater agrees with the majority of the others on a set of tests (see the
    module's docstring for the rule); needs no model (a dataset card shows it)."""

    tests: int = Field(
        description="tests compared: >= 2 votes, >= 1 case (in a report: rated by the model too)"
    )
    cases: int = Field(description="(vote, test) cases compared with the others' majority")
    agreed: int = Field(description="cases whose vote prefers the side the others' majority does")
    others_tied: int = Field(description="cases skipped: the other votes were tied")
    tie_cases: int = Field(
        0, description="cases whose own vote is a tie (never agreeing; common on Likert ratings)"
    )
    tests_all_tied: int = Field(description="tests with >= 2 votes whose every case was skipped")
    tests_one_vote: int = Field(
        description="tests with fewer than 2 votes, not compared (in a report: the rated ones)"
    )
    ceiling: float = Field(description="agreed / cases")
    ci: tuple[float, float] | None = Field(
        description="percentile bootstrap interval over tests (null: a single test)"
    )
    resamples: int
    seed: int
    confidence: float


class AgreementCeiling(RaterAgreement):
    """The raters' agreement on the tests a model rated, beside the model's pass rate on the
    same tests and the paired difference of the two."""

    tests_not_rated: int = Field(
        description="tests with >= 2 votes the model did not rate (degenerate, skipped)"
    )
    model: Rate = Field(
        description="the model's pass rate on the same tests (against the suite's label: the "
        "combined judgment of all raters)"
    )
    difference: float | None = Field(
        None,
        description="model pass rate minus the ceiling, on the same tests (null: the report "
        "predates it)",
    )
    difference_ci: tuple[float, float] | None = Field(
        None,
        description="paired percentile bootstrap interval of the difference: each resample "
        "draws tests and recomputes both terms on them (same resamples and seed as ci; null: "
        "a single test, or the report predates it)",
    )


def margin_strata(
    pairs: Sequence[Pair], outcome: Callable[[Pair], str], kind: MarginKind | None
) -> MarginStrata | None:
    """Pass rates by human margin band (None when no test has a margin)."""
    margins = np.array([p.margin for p in pairs if p.margin is not None], dtype=float)
    if not len(margins):
        return None
    if kind == "rater_share":
        rule = (
            "share of raters' votes preferring the better candidate: half or fewer <= 0.5 < "
            "majority < 1 = unanimous"
        )
        cuts = [(0.5, "half or fewer"), (1 - _UNANIMOUS, "majority"), (np.inf, "unanimous")]
    else:
        first, second = np.quantile(margins, [1 / 3, 2 / 3])
        rule = (
            f"tertiles of the suite's margins: narrow <= {first:.4g} < medium <= {second:.4g} "
            "< clear (equal margins share a band)"
        )
        cuts = [(first, "narrow"), (second, "medium"), (np.inf, "clear")]
    members: dict[str, list[Pair]] = {label: [] for _, label in cuts}
    unknown = []
    for pair in pairs:
        if pair.margin is None:
            unknown.append(pair)
            continue
        label = next(label for cut, label in cuts if pair.margin <= cut)
        members[label].append(pair)
    bands = [
        MarginBand(
            label=label,
            low=min(p.margin for p in found),  # type: ignore[type-var]
            high=max(p.margin for p in found),  # type: ignore[type-var]
            rate=rate(outcome(p) for p in found),
        )
        for label, found in members.items()
        if found
    ]
    if unknown:
        bands.append(
            MarginBand(label=NO_MARGIN, low=None, high=None, rate=rate(map(outcome, unknown)))
        )
    return MarginStrata(kind=kind, rule=rule, bands=bands)


def leave_one_rater_out(prefers: Sequence[str]) -> tuple[int, int, int, int]:
    """``(cases, agreed, others_tied, tie_cases)`` of one test from each vote's ``prefers``: each
    vote against the others' majority (``tie_cases``: cases whose own vote is a tie, none of
    them agreeing)."""
    high, low = prefers.count("high"), prefers.count("low")
    cases = agreed = tied = tie_cases = 0
    for vote in prefers:
        others_high = high - (vote == "high")
        others_low = low - (vote == "low")
        if others_high == others_low:
            tied += 1
            continue
        cases += 1
        tie_cases += vote == "tie"
        agreed += vote == ("high" if others_high > others_low else "low")
    return cases, agreed, tied, tie_cases


@dataclass
class _Tally:
    """Leave-one-rater-out counts over tests; ``counts`` has a row (cases, agreed) per compared
    test, ``compared`` their positions in the input."""

    counts: list[tuple[int, int]] = field(default_factory=list)
    compared: list[int] = field(default_factory=list)
    others_tied: int = 0
    tie_cases: int = 0
    all_tied: int = 0
    one_vote: int = 0
    not_rated: int = 0

    def figures(self) -> dict[str, Any]:
        cases, agreed = (sum(column) for column in zip(*self.counts, strict=True))
        return {
            "tests": len(self.counts),
            "cases": cases,
            "agreed": agreed,
            "others_tied": self.others_tied,
            "tie_cases": self.tie_cases,
            "tests_all_tied": self.all_tied,
            "tests_one_vote": self.one_vote,
            "ceiling": agreed / cases,
        }


def _tally(tests: Iterable[tuple[Sequence[str], bool]]) -> _Tally:
    """Leave one rater out over ``(each vote's prefers, rated by the model)`` of each test."""
    tally = _Tally()
    for position, (prefers, rated) in enumerate(tests):
        if len(prefers) < 2:
            tally.one_vote += rated
            continue
        if not rated:
            tally.not_rated += 1
            continue
        cases, agreed, skipped, ties = leave_one_rater_out(prefers)
        tally.others_tied += skipped
        tally.tie_cases += ties
        if not cases:
            tally.all_tied += 1
            continue
        tally.counts.append((cases, agreed))
        tally.compared.append(position)
    return tally


def rater_agreement(
    votes: Iterable[Sequence[str]],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> RaterAgreement | None:
    """The leave-one-rater-out agreement over every test, no model involved (``votes``: each
    test's votes as their ``prefers``: high, low or tie); None when no case could be compared."""
    tally = _tally((prefers, True) for prefers in votes)
    if not tally.counts:
        return None
    counts = np.array(tally.counts, dtype=float)
    return RaterAgreement(
        **tally.figures(),
        ci=bootstrap_share(counts, resamples=resamples, seed=seed, confidence=confidence),
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )


def agreement_ceiling(
    pairs: Sequence[Pair],
    outcomes: Mapping[str, str],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> AgreementCeiling | None:
    """The leave-one-rater-out agreement of ``pairs``' votes on the tests the model rated
    (``outcomes``: pair id -> outcome), with a bootstrap-over-tests interval, the model's pass
    rate on the same tests and the paired difference model minus ceiling; None when no test has
    two votes or no case could be compared."""
    rated = set(rated_by_all(outcomes))  # the tests both figures count
    tally = _tally(([v.prefers for v in p.votes], p.id in rated) for p in pairs)
    if not tally.counts:
        return None
    verdicts = [outcomes[pairs[position].id] for position in tally.compared]
    model = rate(verdicts)
    counts = np.array(tally.counts, dtype=float)
    passed = np.array([v == "pass" for v in verdicts], dtype=float)
    ci = difference_ci = None
    if len(counts) >= 2:
        ci, difference_ci = _paired_bootstrap(counts, passed, resamples, seed, confidence)
    figures = tally.figures()
    return AgreementCeiling(
        **figures,
        tests_not_rated=tally.not_rated,
        ci=ci,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        model=model,
        difference=model.pass_rate - figures["ceiling"],  # type: ignore[operator]
        difference_ci=difference_ci,
    )


def _paired_bootstrap(
    counts: np.ndarray, passed: np.ndarray, resamples: int, seed: int, confidence: float
) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """Intervals of the ceiling and of model minus ceiling from the same resamples of tests
    (the ceiling's draws are those of :func:`bootstrap_share` with the same seed)."""

    def both(rows: np.ndarray) -> np.ndarray:
        sums = counts[rows].sum(axis=1)
        share = sums[:, 1] / sums[:, 0]
        return np.column_stack([share, passed[rows].mean(axis=1) - share])

    draws = bootstrap_draws(both, len(counts), resamples=resamples, seed=seed)
    return percentile_interval(draws[:, 0], confidence), percentile_interval(
        draws[:, 1], confidence
    )


def bootstrap_share(
    counts: np.ndarray, *, resamples: int, seed: int, confidence: float
) -> tuple[float, float] | None:
    """Percentile interval of ``sum(agreed) / sum(cases)`` when whole tests (rows of ``counts``:
    cases, agreed) are resampled with replacement; None with a single test."""
    if len(counts) < 2:
        return None

    def share(rows: np.ndarray) -> np.ndarray:
        sums = counts[rows].sum(axis=1)
        return sums[:, 1] / sums[:, 0]

    draws = bootstrap_draws(share, len(counts), resamples=resamples, seed=seed)
    return percentile_interval(draws, confidence)


def margin_weight(margin: float | None, kind: MarginKind | None) -> float | None:
    """How decisive the humans were on a test, as a weight for ``verify`` (None: no weight).

    ``rater_share``: ``max(0, 2 * share - 1)``, the majority's lead (1 when unanimous, 1/3 for
    2 of 3 votes, 0 when at most half the votes prefer the better candidate: such a test is no
    evidence for its own label, and a test most raters decided the other way must not weigh as
    a decisive one). ``score_gap``: the gap itself, 0 if not positive (a weighted mean does not
    depend on the scale's unit). A stated confidence has no common zero across sources (a 1-9
    scale's 1 is not "no preference"), and a margin of an unstated kind is unreadable: neither
    gets a weight."""
    if margin is None:
        return None
    if kind == "rater_share":
        return max(0.0, 2 * margin - 1)
    if kind == "score_gap":
        return max(0.0, margin)
    return None
