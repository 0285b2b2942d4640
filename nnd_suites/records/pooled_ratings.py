"""Pooling the ratings of identical texts (a numeric rule's ``identical_texts: pool``).

When several systems of one group output the same text (compared by
:func:`~nnd_suites.records.texts.equivalence_key`), their raters judged one text several times.
Pooled, those ratings are one candidate's ratings: the text gets one score from all of them, so it
can no longer conflict with itself, and every candidate with that text is judged on that score (the
map's ``pairs_per`` still decides whether each counts as its own test).

The pooled score must mean what one candidate's score means (its rule's aggregate over its
raters), so it is formed in one of two ways:

- **rater by rater**, when every candidate names its raters: a rater who rated several of the
  identical candidates counts once, with the mean of their ratings of it (a text is not weighed
  more because one rater happened to see it twice), and the rule aggregates over those raters.
  The pooled raters are the candidates' raters concatenated in order, each named once. An
  aggregate that grows with the number of raters (a sum) is pooled so only when the candidates
  share one set of raters: over a larger set of raters it would grow past any one candidate's;
- **candidate by candidate** otherwise (unnamed raters, candidates rated on different aspects,
  or a sum over different raters): the text's rating is the mean of each candidate's own
  aggregate, and the pooled candidate names no raters. Concatenating unnamed ratings instead
  would let two summaries rated 3 by three workers sum to 18 and beat one rated 5 by three (15).

Pair builders and human scores both judge a pooled text through :func:`pooled_by_text`, so a
test and its systems' human scores come from the same pooled ratings.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from nnd_suites.records.groups import Candidate
from nnd_suites.records.texts import equivalence_key

#: a rule's aggregate over one candidate's raters (mean, median, min, max, sum)
Aggregate = Callable[[Sequence[float]], float]

#: each aggregate a numeric rule may name, by its name in the map (``aggregate``)
AGGREGATES: dict[str, Aggregate] = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "min": min,
    "max": max,
    "sum": sum,
}

#: a numeric rule's ``identical_texts`` when its map does not say: the texts are pooled
DEFAULT_IDENTICAL_TEXTS = "pool"


def ratings_by_rater(candidates: Sequence[Candidate], key: str) -> dict[str, float]:
    """Each named rater's mean rating in ``key`` over ``candidates``, in order of first mention
    (candidates without raters add nothing)."""
    given: dict[str, list[float]] = {}
    for candidate in candidates:
        values = (candidate.ratings or {}).get(key)
        if candidate.raters is None or values is None:
            continue
        for rater, value in zip(candidate.raters, values, strict=True):
            given.setdefault(rater, []).append(value)
    return {rater: statistics.fmean(values) for rater, values in given.items()}


def _by_rater(rated: Sequence[Candidate], aspects: list[str], grows_with_raters: bool) -> bool:
    """Whether ``rated`` can be pooled rater by rater (see the module docstring)."""
    aligned = all(c.raters is not None and set(c.ratings or {}) == set(aspects) for c in rated)
    if not aligned or not grows_with_raters:
        return aligned
    return len({frozenset(c.raters or ()) for c in rated}) == 1


def pool(
    candidates: Sequence[Candidate], aggregate: Aggregate, grows_with_raters: bool = False
) -> Candidate:
    """One candidate holding the pooled ratings of ``candidates`` (identical texts), rater by
    rater or candidate by candidate (see the module docstring); ``aggregate`` is the rule's and
    ``grows_with_raters`` says that it grows with the number of raters (a sum)."""
    first = candidates[0]
    systems = list(dict.fromkeys(s for c in candidates for s in c.systems))
    rated = [c for c in candidates if c.ratings]
    aspects = list(dict.fromkeys(a for c in rated for a in c.ratings or {}))
    raters: list[str] | None = None
    if rated and _by_rater(rated, aspects, grows_with_raters):
        by_aspect = {aspect: ratings_by_rater(rated, aspect) for aspect in aspects}
        raters = list(by_aspect[aspects[0]])
        ratings = {aspect: [by_aspect[aspect][r] for r in raters] for aspect in aspects}
    else:
        # one value per aspect: every aggregate of one value is that value, so the rule scores
        # the text with the mean of its candidates' scores
        ratings = {}
        for aspect in aspects:
            scores = [aggregate(v) for c in rated if (v := _values(c, aspect))]
            if scores:
                ratings[aspect] = [statistics.fmean(scores)]
    return first.model_copy(
        update={
            "systems": systems,
            "ratings": ratings or None,
            "raters": raters,
            "where": " + ".join(c.where for c in candidates if c.where),
        }
    )


def _values(candidate: Candidate, aspect: str) -> list[float]:
    return list((candidate.ratings or {}).get(aspect, []))


def pooled_by_text(
    candidates: Sequence[Candidate], aggregate: Aggregate, grows_with_raters: bool = False
) -> dict[str, Candidate]:
    """For each text that several ``candidates`` share (by equivalence key), their pooled
    candidate (:func:`pool`); texts given once are left out (they are their own pool)."""
    by_text: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_text.setdefault(equivalence_key(candidate.text), []).append(candidate)
    return {
        text: pool(same, aggregate, grows_with_raters)
        for text, same in by_text.items()
        if len(same) > 1
    }
