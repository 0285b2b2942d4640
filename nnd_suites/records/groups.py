"""What adapters emit: annotated candidates grouped by the context they answer (paper step 1)."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator, Field, model_validator

from nnd_suites.errors import NNDError
from nnd_suites.infra.formatting import clip
from nnd_suites.infra.reading import MAX_NUMBER
from nnd_suites.infra.validation import StrictModel

if TYPE_CHECKING:
    from nnd_suites.records.judgments import JudgedGroup


def _a_rating(value: float) -> float:
    if not abs(value) <= MAX_NUMBER:  # nan too
        raise ValueError(f"{value!r} is no rating (a finite number of magnitude <= {MAX_NUMBER:g})")
    return value


#: A rating as every rule aggregates it: sums, means and gaps of such numbers stay finite.
Rating = Annotated[float, AfterValidator(_a_rating)]


def _a_system_name(name: str) -> str:
    if not name.strip():  # would be a system called "" in human scores and slices
        raise ValueError("a system name is empty; name the system, or 'unknown' when none is")
    if name != name.strip():  # 'mixqg ' beside 'mixqg': a system apart, its own human score
        raise ValueError(
            f"system name {clip(repr(name))} has spaces around it: read as written, it names a "
            f"system apart from {clip(repr(name.strip()))}; correct it in the source"
        )
    return name


SystemName = Annotated[str, AfterValidator(_a_system_name)]


def _a_group_id(group_id: str) -> str:
    if not group_id.strip():  # every blank row of a source would join one group
        raise ValueError("a group id is empty; every group of a source needs an id of its own")
    return group_id


class Candidate(StrictModel):
    """One system output with its human judgment.

    Quality comes from ``label`` (a label of the quality map) or from ``ratings`` (raw scores the
    map's rating rule turns into labels or a numeric order). ``category`` is a finer error category
    that the map's hierarchy rolls up (MQM's worst error path, Challenge 300's question category);
    without it the label itself is the category.
    """

    text: str
    systems: list[SystemName] = Field(min_length=1, description="system(s) that produced this text")
    label: str | None = None
    ratings: dict[str, list[Rating]] | None = None
    raters: list[str] | None = Field(
        None,
        description="who gave each rating: raters[i] gave ratings[aspect][i] in every aspect "
        "(None: raters unknown or unnamed)",
    )
    category: str | None = None
    breakdown: dict[str, str] = Field(default_factory=dict)
    where: str = Field("", description="file:line (or item id) for messages")

    @model_validator(mode="after")
    def _one_rater_per_rating(self) -> Candidate:
        if self.raters is None:
            return self
        if self.ratings is None:
            raise ValueError("raters are given but no ratings: name raters only with ratings")
        if len(set(self.raters)) != len(self.raters):
            raise ValueError(f"a rater is named twice in {self.raters}: one rating each")
        for aspect, values in self.ratings.items():
            if len(values) != len(self.raters):
                raise ValueError(
                    f"aspect {aspect!r} has {len(values)} rating(s) for {len(self.raters)} "
                    "rater(s): raters[i] must have given ratings[aspect][i] in every aspect"
                )
        return self


class Group(StrictModel):
    """All candidates for one input context; the context is kept as named fields."""

    id: Annotated[str, AfterValidator(_a_group_id)]
    context: dict[str, str]
    candidates: list[Candidate]
    breakdown: dict[str, str] = Field(default_factory=dict)
    where: str = ""


def first_spelling(
    spellings: dict[str, tuple[str, str]], what: str, value: str, where: str
) -> tuple[str, str] | None:
    """(the first spelling, where it was) when ``value``, an aspect or a category (``what``),
    is written another way than before ('Fluency' or 'fluency ' beside 'fluency': read as
    written, two of them), else None; ``spellings``: canonical -> (first, where), as seen."""
    canonical = " ".join(unicodedata.normalize("NFKC", value).casefold().split())
    first = spellings.setdefault(f"{what}:{canonical}", (value, where))
    return None if first[0] == value else first


def group_location(group: Group | JudgedGroup) -> str:
    """Where a group is, for messages: its file:line, else ``group ID`` (a long id clipped)."""
    return group.where or f"group {clip(group.id)}"


def breakdown_values(
    fields: tuple[str, ...], group: Mapping[str, str], item: Mapping[str, str], where: str
) -> dict[str, str]:
    """A test's breakdown values: its item's (the low candidate, or the judgment), else its
    group's; every field the adapter declares must be set."""
    values = {**group, **item}
    missing = [name for name in fields if name not in values]
    if missing:
        raise NNDError(
            f"{where}: breakdown field(s) {missing} missing; "
            "the adapter must set every field it declares in breakdown_fields"
        )
    return {name: values[name] for name in fields}
