"""Length relation of the two candidates: is the better one shorter, the same, or longer?

In characters (from the texts) and in model tokens (from a scored run's target counts, which
include the end-of-sequence token on both sides, so the relation is the tokens' own).
"""

from __future__ import annotations

from nnd_suites.slices.base import Slice, SliceInput, SliceMetadata, SliceSets, register_slice

SUBSETS = ("better shorter", "same length", "better longer")


def relation(high: int, low: int) -> str:
    return SUBSETS[0] if high < low else SUBSETS[1] if high == low else SUBSETS[2]


def _ordered(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    subsets: dict[str, list[str]] = {name: [] for name in SUBSETS}
    for subset, test_id in pairs:
        subsets[subset].append(test_id)
    return {name: ids for name, ids in subsets.items() if ids}


@register_slice("length_chars")
class LengthChars(Slice):
    metadata = SliceMetadata(
        summary="better candidate shorter / same / longer, in characters",
        description="The length relation of the better candidate to the worse one, counted "
        "in characters: a suite where the better candidate is mostly shorter rewards a model "
        "that prefers short text.",
    )

    def sets(self, data: SliceInput) -> SliceSets:
        pairs = [(relation(len(t.high), len(t.low)), t.id) for t in data.tests]
        return {"length_chars": _ordered(pairs)} if pairs else {}


@register_slice("length_tokens")
class LengthTokens(Slice):
    metadata = SliceMetadata(
        summary="better candidate shorter / same / longer, in model tokens",
        description="The length relation of the better candidate to the worse one, counted in "
        "the model's tokens (the scored targets of each candidate); only in a model's report.",
        needs_scores=True,
    )

    def sets(self, data: SliceInput) -> SliceSets:
        if not data.scored:
            return {}
        # a test the model skipped has no count: in no subset, as it is in no pass rate
        pairs = [(relation(t.n_high, t.n_low), t.id) for t in data.tests if t.counted]
        return {"length_tokens": _ordered(pairs)}
