"""A test's human margin (``Pair.margin``), from its votes.

The margin is in one kind per suite (the manifest's ``margin_kind``):

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
from typing import Literal

from nnd_suites.records.pairs import Pair

MarginKind = Literal["rater_share", "score_gap", "confidence"]

#: what a test's ``margin`` holds, per kind, in words (dataset cards say it)
MARGIN_MEANINGS: dict[MarginKind, str] = {
    "rater_share": "`rater_share`, the share of raters' votes preferring the high candidate "
    "(ties count as not preferring)",
    "score_gap": "`score_gap`, high minus low aggregated score",
    "confidence": "`confidence`, the mean stated strength of the verdicts preferring high",
}


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
