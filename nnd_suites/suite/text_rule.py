"""Which text equivalence rule a suite was built under, and whether this release may judge it.

A suite's counts (degenerate tests), its empty texts and its systems' pooled human scores follow
from the rule that decides when two texts are the same (:mod:`nnd_suites.records.texts`), which
its manifest names (``text_equivalence``). This release applies :data:`TEXT_EQUIVALENCE` to every
suite. Suites built before it, under :data:`JOINERS_DROPPED` (or before any rule was named, and
validated under that one since), are judged alike by both rules unless they hold a text with a
zero-width joiner or non-joiner: such a suite loads while both rules agree on every test and
every group's candidates, and is refused, naming the test or group, where they do not (its counts
would change under this release): it is rebuilt.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from nnd_suites.records.pairs import Pair
from nnd_suites.records.texts import (
    JOINERS_DROPPED,
    TEXT_EQUIVALENCE,
    equivalence_key,
    has_joiner,
    joiners_dropped_key,
    same_text,
)
from nnd_suites.suite.candidates import SuiteCandidate

_REBUILD = (
    "; this nnd-suites tells texts with and without a zero-width non-joiner or joiner (U+200C, "
    f"U+200D) apart (rule {TEXT_EQUIVALENCE!r}), so its counts would change: rebuild the suite "
    "(nnd-suites build)"
)


def text_rule_problem(
    rule: str | None, pairs: Sequence[Pair], candidates: Sequence[SuiteCandidate]
) -> str | None:
    """Why this release cannot judge the texts of a suite built under ``rule`` (None when it
    can: the rule is this release's, or agrees with it on every test and candidate)."""
    if rule == TEXT_EQUIVALENCE:
        return None
    if rule not in (None, JOINERS_DROPPED):
        return (
            f"built under the text equivalence rule {rule!r}, which this nnd-suites does not know "
            f"(it applies {TEXT_EQUIVALENCE!r}); upgrade nnd-suites, or rebuild the suite"
        )
    built = (
        f"built under the text equivalence rule {rule!r}"
        if rule
        else f"built before suites named their text rule (validated under {JOINERS_DROPPED!r})"
    )
    for pair in pairs:
        high, low = pair.high.text, pair.low.text
        if (has_joiner(high) or has_joiner(low)) and (
            joiners_dropped_key(high) == joiners_dropped_key(low)
        ) != same_text(high, low):
            return f"pair {pair.id}: {built}, under which its two texts are one{_REBUILD}"
    # only a group holding a joined text can have two texts the older rule took for one
    joined = {c.group_id for c in candidates if has_joiner(c.text)}
    keys: dict[str, dict[str, set[str]]] = {group: defaultdict(set) for group in joined}
    for candidate in candidates:
        if candidate.group_id in keys:
            keys[candidate.group_id][joiners_dropped_key(candidate.text)].add(
                equivalence_key(candidate.text)
            )
    for group, by_older_key in keys.items():
        if any(len(now) > 1 for now in by_older_key.values()):
            one = "under which some of its candidates are one text"
            return f"group {group!r}: {built}, {one}{_REBUILD}"
    return None
