"""The base of every typed result the evaluator writes (reports, leaderboards, comparisons,
verify and placement files, samples): a field it does not know is refused, so a file written by
a newer version, or a misspelt field, fails loudly instead of being read with the field dropped."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """A pydantic model that forbids unknown fields."""

    model_config = ConfigDict(extra="forbid")
