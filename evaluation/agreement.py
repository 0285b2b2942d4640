"""How clearly the humans preferred each test's better candidate, and how often they agree.

Two views of a suite whose tests carry human margins (``Pair.margin``, read in the suite's
``margin_kind``) and per-rater votes (``Pair.votes``); both count tests through the one outcome
rule (:mod:`nnd_suites.evaluation.outcomes`):

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

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.evaluation.outcomes import RATED, Rate, rate
from nnd_suites.pairs import Pair
from nnd_suites.votes import MarginKind, Vote

NO_MARGIN = "no margin"
#: a share within this of 1 is unanimous (shares are ratios of small counts, stored as floats)
_UNANIMOUS = 1e-9


class MarginBand(BaseModel):
    """The pass rate of the tests whose human margin lies in one band."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(
        description="unanimous, majority, half or fewer (rater shares); narrow, medium, clear "
        "(tertiles); or 'no margin'"
    )
    low: float | None = Field(description="the smallest margin in the band (null: no margin)")
    high: float | None = Field(description="the largest margin in the band (null: no margin)")
    rate: Rate


class MarginStrata(BaseModel):
    """Pass rates stratified by how clearly the humans preferred the better candidate."""

    model_config = ConfigDict(extra="forbid")

    kind: MarginKind | None = Field(
        description="the suite's margin_kind (rater_share, score_gap, confidence); null: the "
        "suite does not say"
    )
    rule: str = Field(description="how the bands were cut")
    bands: list[MarginBand] = Field(description="in order of margin, 'no margin' last")


class AgreementCeiling(BaseModel):
    """How often one rater agrees with the majority of the others, beside the model's pass rate
    on the same tests (see the module's docstring for the rule)."""

    model_config = ConfigDict(extra="forbid")

    tests: int = Field(description="tests compared: rated by the model, >= 2 votes, >= 1 case")
    cases: int = Field(description="(vote, test) cases compared with the others' majority")
    agreed: int = Field(description="cases whose vote prefers the side the others' majority does")
    others_tied: int = Field(description="cases skipped: the other votes were tied")
    tie_cases: int = Field(
        0, description="cases whose own vote is a tie (never agreeing; common on Likert ratings)"
    )
    tests_all_tied: int = Field(description="tests with >= 2 votes whose every case was skipped")
    tests_one_vote: int = Field(description="rated tests with fewer than 2 votes: not compared")
    tests_not_rated: int = Field(
        description="tests with >= 2 votes the model did not rate (degenerate, skipped)"
    )
    ceiling: float = Field(description="agreed / cases")
    ci: tuple[float, float] | None = Field(
        description="percentile bootstrap interval over tests (null: a single test)"
    )
    resamples: int
    seed: int
    confidence: float
    model: Rate = Field(
        description="the model's pass rate on the same tests (against the suite's label: the "
        "combined judgment of all raters)"
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


def leave_one_out(votes: Sequence[Vote]) -> tuple[int, int, int, int]:
    """``(cases, agreed, others_tied, tie_cases)`` of one test: each vote against the others'
    majority (``tie_cases``: cases whose own vote is a tie, none of them agreeing)."""
    high = sum(v.prefers == "high" for v in votes)
    low = sum(v.prefers == "low" for v in votes)
    cases = agreed = tied = tie_cases = 0
    for vote in votes:
        others_high = high - (vote.prefers == "high")
        others_low = low - (vote.prefers == "low")
        if others_high == others_low:
            tied += 1
            continue
        cases += 1
        tie_cases += vote.prefers == "tie"
        agreed += vote.prefers == ("high" if others_high > others_low else "low")
    return cases, agreed, tied, tie_cases


def agreement_ceiling(
    pairs: Sequence[Pair],
    outcomes: Mapping[str, str],
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> AgreementCeiling | None:
    """The leave-one-rater-out agreement of ``pairs``' votes on the tests the model rated
    (``outcomes``: pair id -> outcome), with a bootstrap-over-tests interval and the model's
    pass rate on the same tests; None when no test has two votes or no case could be compared."""
    per_test: list[tuple[int, int]] = []
    compared: list[str] = []
    tied = tie_cases = all_tied = one_vote = not_rated = 0
    for pair in pairs:
        rated = outcomes[pair.id] in RATED
        if len(pair.votes) < 2:
            one_vote += rated
            continue
        if not rated:
            not_rated += 1
            continue
        cases, agreed, skipped, ties = leave_one_out(pair.votes)
        tied += skipped
        tie_cases += ties
        if not cases:
            all_tied += 1
            continue
        per_test.append((cases, agreed))
        compared.append(pair.id)
    if not per_test:
        return None
    counts = np.array(per_test, dtype=float)
    total_cases, total_agreed = (int(x) for x in counts.sum(axis=0))
    return AgreementCeiling(
        tests=len(per_test),
        cases=total_cases,
        agreed=total_agreed,
        others_tied=tied,
        tie_cases=tie_cases,
        tests_all_tied=all_tied,
        tests_one_vote=one_vote,
        tests_not_rated=not_rated,
        ceiling=total_agreed / total_cases,
        ci=bootstrap_share(counts, resamples=resamples, seed=seed, confidence=confidence),
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        model=rate(outcomes[pair_id] for pair_id in compared),
    )


def bootstrap_share(
    counts: np.ndarray, *, resamples: int, seed: int, confidence: float
) -> tuple[float, float] | None:
    """Percentile interval of ``sum(agreed) / sum(cases)`` when whole tests (rows of ``counts``:
    cases, agreed) are resampled with replacement; None with a single test."""
    tests = len(counts)
    if tests < 2:
        return None
    rng = np.random.default_rng(seed)
    shares = []
    chunk = max(1, 2_000_000 // tests)  # bounded memory on suites of many thousand tests
    for start in range(0, resamples, chunk):
        drawn = rng.integers(0, tests, (min(chunk, resamples - start), tests))
        sums = counts[drawn].sum(axis=1)
        shares.append(sums[:, 1] / sums[:, 0])
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(np.concatenate(shares), [tail, 100 - tail])
    return float(low), float(high)


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
