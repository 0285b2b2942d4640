"""Each rater's judgment of a test (:class:`Vote`) and the test's human margin.

Votes from ratings: for every rater who rated both candidates of a test in the test's rating
(its aspect, or the rule's one rating), that rater's two ratings are compared: ``high`` when the
rater rated the high candidate higher, ``low`` when lower, ``tie`` when equal; ``strength`` is the
rater's gap, high minus low. A rater's ratings of one candidate are averaged first (a text that
pools several identical outputs may hold two ratings by one rater, see
:mod:`nnd_suites.records.pooled_ratings`). A map without a rating rule (labels) compares the raters'
ratings when the candidates share exactly one rated aspect (WMT MQM: each rater's MQM score);
candidates without raters give no votes. Votes from pairwise judgments are made by
:mod:`nnd_suites.builder.judged_pairs`.

The test's human margin, computed from its votes, is in :mod:`nnd_suites.records.margins`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.records.pooled_ratings import ratings_by_rater

if TYPE_CHECKING:
    from nnd_suites.records.groups import Candidate


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
