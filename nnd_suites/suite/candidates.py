"""The annotated candidates a suite keeps beside its pairs (``candidates.parquet``).

Pairs alone cannot give a system's human score: a group whose candidates all share one quality
forms no pair, and a pair merges identical texts. So a suite keeps every candidate the adapter
read, one row each, with what its quality map needs to judge it again (label, ratings, error
category) and the systems that produced it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from nnd_suites.errors import SuiteValidationError
from nnd_suites.infra.validation import validated_rows
from nnd_suites.records.groups import Candidate, Group

CANDIDATES_FILE = "candidates.parquet"

CANDIDATES_SCHEMA = pa.schema(
    [
        ("group_id", pa.string()),
        ("text", pa.string()),
        ("systems", pa.list_(pa.string())),
        ("label", pa.string()),
        # a list of (aspect, values) structs, not an Arrow map: `datasets` has no map feature
        (
            "ratings",
            pa.list_(pa.struct([("aspect", pa.string()), ("values", pa.list_(pa.float64()))])),
        ),
        ("category", pa.string()),
        ("raters", pa.list_(pa.string())),
    ]
)


class SuiteCandidate(BaseModel):
    """One annotated candidate as the adapter gave it (before the quality map judged it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    group_id: str
    text: str
    systems: list[str] = Field(min_length=1)
    label: str | None = None
    ratings: dict[str, list[float]] | None = None
    category: str | None = Field(None, description="error or context category, as annotated")
    raters: list[str] | None = Field(None, description="who gave each rating (by position)")

    @classmethod
    def from_group(cls, group: Group) -> list[SuiteCandidate]:
        return [
            cls(
                group_id=group.id,
                text=c.text,
                systems=list(c.systems),
                label=c.label,
                ratings=c.ratings,
                category=c.category,
                raters=c.raters,
            )
            for c in group.candidates
        ]

    def as_candidate(self) -> Candidate:
        """The candidate a quality map assesses (messages name its group)."""
        return Candidate(
            text=self.text,
            systems=self.systems,
            label=self.label,
            ratings=self.ratings,
            category=self.category,
            raters=self.raters,
            where=f"group {self.group_id} {self.systems}",
        )


def candidates_to_table(candidates: Iterable[SuiteCandidate]) -> pa.Table:
    rows = [c.model_dump() for c in candidates]
    for row in rows:
        if row["ratings"] is not None:
            row["ratings"] = [{"aspect": k, "values": v} for k, v in row["ratings"].items()]
    return pa.Table.from_pylist(rows, schema=CANDIDATES_SCHEMA)


def candidates_from_rows(rows: list[dict[str, Any]], where: str) -> list[SuiteCandidate]:
    return validated_rows(
        SuiteCandidate,
        (
            row if row.get("ratings") is None else {**row, "ratings": _ratings(row["ratings"])}
            for row in rows
        ),
        lambda index, row, problems: SuiteValidationError(
            f"{where}: row {index}: invalid candidate: {problems}; rebuild the suite "
            "(nnd-suites build)"
        ),
    )


def _ratings(stored: Any) -> Any:
    """aspect -> values from the stored (aspect, values) structs; anything else is left for
    validation to refuse with the row named."""
    if isinstance(stored, list) and all(
        isinstance(item, dict) and set(item) == {"aspect", "values"} for item in stored
    ):
        return {item["aspect"]: item["values"] for item in stored}
    if isinstance(stored, list) and all(
        isinstance(item, tuple) and len(item) == 2 for item in stored
    ):  # an Arrow map column (how early 2.1 suites stored them) reads as (key, value) pairs
        return dict(stored)
    return stored
