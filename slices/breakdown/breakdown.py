"""Every breakdown field the suite's adapter declares, as a set of subsets."""

from __future__ import annotations

from nnd_suites.slices.base import (
    Slice,
    SliceInput,
    SliceMetadata,
    SliceSets,
    grouped,
    register_slice,
)

#: the subset of tests that have no value for a field
MISSING = "(none)"


@register_slice("breakdown")
class Breakdown(Slice):
    metadata = SliceMetadata(
        summary="every breakdown field of the suite (one set per field)",
        description="One set per breakdown field the suite's manifest declares (named "
        "breakdown.FIELD), one subset per value; tests without a value are in '(none)'.",
    )

    def sets(self, data: SliceInput) -> SliceSets:
        if not data.tests:
            return {}
        return {
            f"breakdown.{field}": grouped(
                [(t.breakdown.get(field) or MISSING, t.id) for t in data.tests]
            )
            for field in data.breakdown_fields
        }
