"""What a numeric map's ``identical_texts: pool`` merged in a suite, counted from what every
suite holds (its annotated candidates and its map's definition), so suites built before the count
existed show it too.

Pooling changes the data: the candidates of one group that share a text (by
:func:`~nnd_suites.records.texts.equivalence_key`, the builder's rule) are judged on one score
from all their ratings (:mod:`nnd_suites.records.pooled_ratings`). Where their own scores
differed, a ``separate`` rule would have reported the text as a conflict; pooled, it is in no
``skipped`` or ``conflicts`` entry, so ``build`` and ``stats`` say how much was pooled.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, TypedDict

from nnd_suites.records.pooled_ratings import AGGREGATES, DEFAULT_IDENTICAL_TEXTS, Aggregate
from nnd_suites.records.texts import equivalence_key, is_blank
from nnd_suites.suite.candidates import SuiteCandidate
from nnd_suites.suite.manifest import SuiteManifest

#: the suite format that brought ``identical_texts``: a numeric map's suite built before it
#: scored identical texts separately (those given different scores excluded as conflicts)
POOLING_FORMAT = (2, 3)


class PooledTexts(TypedDict):
    """The texts pooling merged: ``texts`` that several candidates of one group share, those
    ``candidates``, and the texts ``scored_differently`` by their candidates' own ratings in
    some view (the conflicts a ``separate`` rule would report)."""

    candidates: int
    texts: int
    scored_differently: int


def pooling_rule(manifest: SuiteManifest) -> dict[str, Any] | None:
    """The suite map's rating rule (its definition) when the build pooled identical texts."""
    rule = manifest.quality_map.definition.get("rating_rule")
    if not isinstance(rule, dict) or rule.get("kind") != "numeric":
        return None  # only a numeric rule pools
    if rule.get("identical_texts", DEFAULT_IDENTICAL_TEXTS) != "pool":
        return None
    built_in = tuple(int(part) for part in manifest.format_version.split("."))
    return rule if built_in >= POOLING_FORMAT else None


def takes_part(candidate: SuiteCandidate, manifest: SuiteManifest) -> bool:
    """Whether the build judged ``candidate`` (and so may have pooled it): an empty text is left
    out unless the suite keeps empty candidates."""
    return manifest.allow_empty_candidates or not is_blank(candidate.text)


def pooled_texts(
    manifest: SuiteManifest, candidates: Sequence[SuiteCandidate]
) -> PooledTexts | None:
    """What pooling merged among a suite's ``candidates``; None when its map does not pool."""
    rule = pooling_rule(manifest)
    if rule is None:
        return None
    by_text: dict[tuple[str, str], list[SuiteCandidate]] = defaultdict(list)
    for candidate in candidates:
        if takes_part(candidate, manifest):
            by_text[candidate.group_id, equivalence_key(candidate.text)].append(candidate)
    shared = [same for same in by_text.values() if len(same) > 1]
    keys: list[str] = rule.get("aspects") or [rule["rating"]]
    aggregate = AGGREGATES[rule["aggregate"]]
    return {
        "candidates": sum(map(len, shared)),
        "texts": len(shared),
        "scored_differently": sum(_scored_differently(same, keys, aggregate) for same in shared),
    }


def _scored_differently(
    same: Sequence[SuiteCandidate], keys: Sequence[str], aggregate: Aggregate
) -> bool:
    """Whether the candidates of one text, each scored on its own ratings (the rule's aggregate,
    as a ``separate`` rule scores them), differ in a view; a candidate without the rating takes
    no part in it."""
    for key in keys:
        scores = {aggregate(values) for c in same if (values := (c.ratings or {}).get(key))}
        if len(scores) > 1:
            return True
    return False
