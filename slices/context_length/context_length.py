"""Context length quantiles (quartiles by default): do longer inputs make the distinction harder?"""

from __future__ import annotations

import bisect
import statistics

from pydantic import Field

from nnd_suites.plugins.params import PluginParams
from nnd_suites.slices.base import Slice, SliceInput, SliceMetadata, SliceSets, register_slice


class ContextLengthParams(PluginParams):
    bins: int = Field(4, ge=2, le=100, description="how many quantiles (4: quartiles)")


@register_slice("context_length")
class ContextLength(Slice):
    metadata = SliceMetadata(
        summary="quartiles of the context's length in characters",
        description="Quartiles (or `bins` quantiles) of the context's length (every context "
        "field, in characters) over the suite's tests; a subset is named by its quantile and "
        "the lengths it holds.",
    )
    Params = ContextLengthParams

    def sets(self, data: SliceInput) -> SliceSets:
        if not data.tests:
            return {}
        lengths = [len(t.context_text) for t in data.tests]
        # inclusive quantiles of the observed lengths; a length equal to a cut point goes below
        bins = self.params.bins
        cuts = statistics.quantiles(lengths, n=bins, method="inclusive") if len(lengths) > 1 else []
        members: dict[int, list[tuple[int, str]]] = {}
        for test, length in zip(data.tests, lengths, strict=True):
            members.setdefault(bisect.bisect_left(cuts, length), []).append((length, test.id))
        subsets = {}
        for quartile in sorted(members):
            found = members[quartile]
            low, high = min(n for n, _ in found), max(n for n, _ in found)
            label = f"Q{quartile + 1}" if bins == 4 else f"{quartile + 1}/{bins}"
            subsets[f"{label}: {low}-{high} chars"] = [test_id for _, test_id in found]
        return {"context_length": subsets}
