"""The system that produced the worse candidate: which systems' errors does a model catch?"""

from __future__ import annotations

from nnd_suites.records.judgments import named_systems
from nnd_suites.slices.base import (
    Slice,
    SliceInput,
    SliceMetadata,
    SliceSets,
    grouped,
    register_slice,
)


@register_slice("worse_system")
class WorseSystem(Slice):
    metadata = SliceMetadata(
        summary="the system that produced the worse candidate",
        description="One subset per annotated system, holding the tests whose worse candidate "
        "it produced; a candidate several systems produced word for word is in each of theirs. "
        "A worse candidate that names no system (pairwise preferences such as HH-RLHF record "
        "none) is in no subset: an 'unknown' subset would pool different systems.",
    )

    def sets(self, data: SliceInput) -> SliceSets:
        pairs = [(system, t.id) for t in data.tests for system in named_systems(t.low_systems)]
        return {"worse_system": grouped(pairs)} if pairs else {}
