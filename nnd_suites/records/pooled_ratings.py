"""Pooling the ratings of identical texts (a numeric rule's ``identical_texts: pool``).

When several systems of one group output the same text (compared by
:func:`~nnd_suites.records.texts.equivalence_key`), their raters judged one text several times.
Pooled, those ratings are one candidate's ratings: the text gets one score from all of them, so it
can no longer conflict with itself, and every candidate with that text is judged on that score (the
map's ``pairs_per`` still decides whether each counts as its own test).

A rater who rated several of the identical candidates counts once, with the mean of their
ratings of it: a text is not weighed more because one rater happened to see it twice, and each
rater keeps one rating per aspect, so the pooled candidate's ``raters`` stay one per rating.
The pooled raters are the candidates' raters concatenated in order, each named once. When a
candidate names no raters (or the candidates were rated on different aspects, so that raters
and ratings cannot line up) the ratings are concatenated and the pooled candidate names none.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from nnd_suites.records.groups import Candidate
from nnd_suites.records.texts import equivalence_key


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


def pool(candidates: Sequence[Candidate]) -> Candidate:
    """One candidate holding the ratings of ``candidates`` (identical texts; see the module
    docstring): systems and raters concatenated, a rater's ratings of the text averaged."""
    first = candidates[0]
    systems = list(dict.fromkeys(s for c in candidates for s in c.systems))
    rated = [c for c in candidates if c.ratings]
    aspects = list(dict.fromkeys(a for c in rated for a in c.ratings or {}))
    aligned = all(c.raters is not None and set(c.ratings or {}) == set(aspects) for c in rated)
    if rated and aligned:
        by_aspect = {aspect: ratings_by_rater(rated, aspect) for aspect in aspects}
        raters = list(by_aspect[aspects[0]])
        ratings = {aspect: [by_aspect[aspect][r] for r in raters] for aspect in aspects}
    else:
        raters = None
        ratings = {a: [v for c in rated for v in (c.ratings or {}).get(a, [])] for a in aspects}
    return first.model_copy(
        update={
            "systems": systems,
            "ratings": ratings or None,
            "raters": raters,
            "where": " + ".join(c.where for c in candidates if c.where),
        }
    )


def pooled_by_text(candidates: Sequence[Candidate]) -> dict[str, Candidate]:
    """For each text that several ``candidates`` share (by equivalence key), their pooled
    candidate; texts given once are left out (they are their own pool)."""
    by_text: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_text.setdefault(equivalence_key(candidate.text), []).append(candidate)
    return {text: pool(same) for text, same in by_text.items() if len(same) > 1}
