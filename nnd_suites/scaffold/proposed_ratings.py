"""The ratings a ``new-adapter --declarative`` proposal reads from the sample: its rating columns
(one aspect of several raters' columns) and the scale they are on."""

from __future__ import annotations

import re
from typing import Any

NUMBER = re.compile(r"-?\d+(\.\d+)?")
#: a standardised score (z, zscore, z_score, fluency_z): not a rating on the raters' scale
Z_SCORE = re.compile(r"(^|[_.])z(_?score)?($|[_.])", re.IGNORECASE)


def is_number(value: Any) -> bool:
    """A JSON number, or a text written as one ('4', '-0.5'): a rating's cell."""
    return (isinstance(value, int | float) and not isinstance(value, bool)) or (
        isinstance(value, str) and NUMBER.fullmatch(value.strip()) is not None
    )


def field_name(column: str) -> str:
    """The name a column is given in the proposal (a context field, an aspect)."""
    return re.sub(r"[^a-z0-9_]", "_", column.lower()).strip("_") or "context"


def propose_ratings(numbers: list[str]) -> dict[str, Any]:
    """Aspect -> column; ``x_1``, ``x_2``, ... (one column per rater) -> one aspect ``x``."""
    raters: dict[str, list[str]] = {}
    for column in numbers:
        match = re.fullmatch(r"(.+?)_?(\d+)", column)
        if match and not Z_SCORE.search(column):
            raters.setdefault(match.group(1), []).append(column)
    ratings: dict[str, Any] = {field_name(a): cols for a, cols in raters.items() if len(cols) > 1}
    grouped = {c for cols in ratings.values() for c in cols}
    for column in numbers:
        if column in grouped or column.lower().endswith("id") or Z_SCORE.search(column):
            continue
        ratings[field_name(column.rsplit(".", 1)[-1])] = column
    return ratings or {"todo_aspect": "TODO_column"}


def propose_scale(rows: list[dict[str, Any]], ratings: dict[str, Any]) -> tuple[dict, list[str]]:
    """``low`` and ``high``: the sample's smallest and largest rating (a value off them, a typo
    as 44 on a 1-5 scale, is then a malformed row, not a rating read), or a note to write them
    when the sample holds one value alone."""
    columns = [c for cols in ratings.values() for c in ([cols] if isinstance(cols, str) else cols)]
    values = [float(row[c]) for row in rows for c in columns if is_number(row.get(c))]
    if not values:
        return {}, []
    low, high = (int(v) if v.is_integer() else v for v in (min(values), max(values)))
    if low < high:
        return {"low": low, "high": high}, []
    return {}, [
        f"every rating of the sample is {low}: write the scale's ends as candidates.low and high "
        "(without them any number is read as a rating, a typo as 44 on a 1-5 scale too)"
    ]
