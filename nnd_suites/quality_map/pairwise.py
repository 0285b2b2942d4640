"""What a pairwise judgment means: the ``pairwise`` section of a quality map.

A pairwise source judges two responses to one context (A better, B better, or a tie, perhaps with
a strength, perhaps by several raters). The rule says which verdicts make a test, how ties and
weak preferences are treated, and how several verdicts on the same two texts combine.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from nnd_suites.infra.validation import StrictModel

Combine = Literal["majority", "unanimous", "each"]


class PairwiseRule(StrictModel):
    """How judgments of (context, response A, response B) become tests."""

    high_label: str = Field(description="label of the preferred response (best tier)")
    low_label: str = Field(
        description="label of the other response: the test's label and, unless the judgment "
        "names a finer category, its category"
    )
    combine: Combine = Field(
        "majority",
        description="several verdicts on the same two texts: majority (a test when a strict "
        "majority of the verdicts prefer one side), unanimous (a test when every verdict does), "
        "each (every preference verdict is its own test)",
    )
    ties: Literal["abstain", "vote"] = Field(
        "abstain",
        description="a tie makes no test; abstain: it takes no part in the combination; vote: it "
        "counts as a verdict for neither side (it can deny a majority or unanimity)",
    )
    minimum_strength: float | SkipJsonSchema[None] = Field(
        None,
        description="a preference whose strength (confidence) is below this is weak and treated "
        "as a tie; judgments without a strength are then skipped (counted)",
    )
