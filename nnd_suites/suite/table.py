"""Pairs as a parquet table: the arrow schema of a suite, rows to pairs and back."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from nnd_suites.errors import SuiteValidationError
from nnd_suites.infra.validation import validated_rows
from nnd_suites.records.pairs import Pair

#: Columns added after suites were first written: a file written before them lacks them (its
#: pairs take the fields' defaults, and the pairs' hash checks that nothing else was lost).
LATER_COLUMNS = ("votes", "margin")


def _candidate_type() -> pa.DataType:
    return pa.struct(
        [
            ("text", pa.string()),
            ("label", pa.string()),
            ("systems", pa.list_(pa.string())),
            ("score", pa.float64()),
        ]
    )


def pairs_arrow_schema(context_fields: Iterable[str], breakdown_fields: Iterable[str]) -> pa.Schema:
    """The parquet schema of a suite: context and breakdown are structs of that suite's fields."""
    strings = pa.string()
    breakdown_fields = list(breakdown_fields)
    # Parquet has no empty structs: a suite without breakdown fields has no breakdown column.
    breakdown = (
        [("breakdown", pa.struct([(name, strings) for name in breakdown_fields]))]
        if breakdown_fields
        else []
    )
    return pa.schema(
        [
            ("id", strings),
            ("group_id", strings),
            ("context", pa.struct([(name, strings) for name in context_fields])),
            ("high", _candidate_type()),
            ("low", _candidate_type()),
            ("label", strings),
            ("category", strings),
            ("category_path", pa.list_(strings)),
            ("aspect", strings),
            ("score_gap", pa.float64()),
            (
                "votes",
                pa.list_(
                    pa.struct(
                        [("rater", strings), ("prefers", strings), ("strength", pa.float64())]
                    )
                ),
            ),
            ("margin", pa.float64()),
            *breakdown,
            ("parent_id", strings),
        ]
    )


def pair_rows(pairs: Iterable[Pair]) -> list[dict[str, Any]]:
    rows = []
    for pair in pairs:
        row = pair.model_dump()
        if not row["breakdown"]:
            del row["breakdown"]
        rows.append(row)
    return rows


def pairs_from_rows(rows: list[dict[str, Any]], where: str) -> list[Pair]:
    return validated_rows(
        Pair,
        rows,
        lambda index, row, problems: SuiteValidationError(
            f"{where}: row {index} (test {row.get('id')!r}): invalid pair: {problems}; rebuild "
            "the suite (nnd-suites build)"
        ),
    )
