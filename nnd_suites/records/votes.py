"""Each rater's judgment of a test (:class:`Vote`) and the test's human margin.

Votes from ratings: for every rater who rated both candidates of a test in the test's rating
(its aspect, or the rule's one rating), that rater's two ratings are compared: ``high`` when the
rater rated the high candidate higher, ``low`` when lower, ``tie`` when equal; ``strength`` is the
rater's gap, high minus low. A rater's ratings of one candidate are averaged first (a text that
pools several identical outputs may hold two ratings by one rater, see
:mod:`nnd_suites.records.pooled_ratings`). A map without a rating rule (labels) compares the raters'
ratings when the candidates share exactly one rated aspect (WMT MQM: each rater's MQM score);
candidates without raters give no votes. Votes from pairwise judgments are made by
:mod:`nnd_suites.build.judged_pairs`.

The human margin (``Pair.margin``), in one kind per suite (the manifest's ``margin_kind``):

- ``rater_share``: on a test with votes from at least two raters, the share of the votes that
  prefer the high candidate. Ties stay in the denominator: a rater who rated both candidates
  alike did not prefer the better one, so 1.0 means every rater preferred it (a 2-of-3 vote with
  one tie is 0.67, not 1.0).
- ``score_gap``: under a numeric rule, the test's score gap (aggregate of high minus low).
- ``confidence``: from pairwise judgments, the mean stated strength of the verdicts that prefer
  the high candidate.

The kind is the first of these, in this order, that is defined on at least half of the suite's
tests; failing that, the one defined on the most tests. Tests where it is not defined have no
margin (``None``); a suite where none is defined has ``margin_kind`` ``None``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.records.pooled_ratings import ratings_by_rater

if TYPE_CHECKING:
    from nnd_suites.records.groups import Candidate
    from nnd_suites.records.pairs import Pair

MarginKind = Literal["rater_share", "score_gap", "confidence"]

#: what a test's ``margin`` holds, per kind, in words (dataset cards say it)
MARGIN_MEANINGS: dict[MarginKind, str] = {
    "rater_share": "`rater_share`, the share of raters' votes preferring the high candidate "
    "(ties count as not preferring)",
    "score_gap": "`score_gap`, high minus low aggregated score",
    "confidence": "`confidence`, the mean stated strength of the verdicts preferring high",
}


class Vote(BaseModel):
    """One rater's judgment of a test's two candidates, kept so a report can weigh the test.

    From a comparative source: the rater's verdict on these two texts (``strength``: the stated
    strength or confidence). From ratings: the same rater's two ratings compared (``strength``:
    that rater's score gap, high minus low).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    rater: str | None = Field(None, description="rater id as the source names it; None: unnamed")
    prefers: Literal["high", "low", "tie"]
    strength: float | None = Field(None, allow_inf_nan=False)


def rating_key(high: Sequence[Candidate], low: Sequence[Candidate], key: str | None) -> str | None:
    """The rating votes compare: the rule's ``key``, else the one aspect both sides were rated on
    (a labelled source whose adapter gives each rater's score), else none."""
    if key is not None:
        return key
    shared = {a for c in high for a in c.ratings or {}} & {a for c in low for a in c.ratings or {}}
    return shared.pop() if len(shared) == 1 else None


def votes_from_ratings(
    high: Sequence[Candidate], low: Sequence[Candidate], key: str | None
) -> list[Vote]:
    """One vote per rater who rated both sides in ``key`` (see the module docstring), in the
    order the high side names its raters."""
    key = rating_key(high, low, key)
    if key is None:
        return []
    high_by_rater, low_by_rater = ratings_by_rater(high, key), ratings_by_rater(low, key)
    votes = []
    for rater, high_value in high_by_rater.items():
        if rater not in low_by_rater:
            continue
        gap = high_value - low_by_rater[rater]
        prefers = "high" if gap > 0 else "low" if gap < 0 else "tie"
        votes.append(Vote(rater=rater, prefers=prefers, strength=gap))
    return votes


def rater_share(pair: Pair) -> float | None:
    """Share of the votes that prefer high, ties counted (None: fewer than two votes)."""
    if len(pair.votes) < 2:
        return None
    return sum(vote.prefers == "high" for vote in pair.votes) / len(pair.votes)


def stated_confidence(pair: Pair) -> float | None:
    """Mean stated strength of the votes preferring high (None: none states one)."""
    stated = [v.strength for v in pair.votes if v.prefers == "high" and v.strength is not None]
    return statistics.fmean(stated) if stated else None


MARGINS: dict[MarginKind, Callable[[Pair], float | None]] = {
    "rater_share": rater_share,
    "score_gap": lambda pair: pair.score_gap,
    "confidence": stated_confidence,
}


def with_margins(pairs: list[Pair], kinds: Sequence[MarginKind]) -> MarginKind | None:
    """Choose the suite's margin kind among ``kinds`` (those the builder can define, in order of
    preference; see the module docstring) and set every test's margin in it, in place."""
    defined = {kind: [MARGINS[kind](pair) for pair in pairs] for kind in kinds}
    covered = {kind: sum(m is not None for m in margins) for kind, margins in defined.items()}
    chosen = next((kind for kind in kinds if pairs and covered[kind] * 2 >= len(pairs)), None)
    if chosen is None and any(covered.values()):
        chosen = max(kinds, key=lambda kind: covered[kind])  # the first of equals
    for index, pair in enumerate(pairs):
        pair.margin = defined[chosen][index] if chosen else None
    return chosen
