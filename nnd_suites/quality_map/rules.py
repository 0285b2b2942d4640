"""Rating rules: how a candidate's ratings become a label (or a score), one typed model per kind.

A map's ``rating_rule`` is one of these models, chosen by its ``kind`` (a pydantic discriminated
union), so the loader names an unknown key of the rule and the map dispatches on the rule object.
A kind is one class here, a :class:`~nnd_suites.quality_map.rule_base.BaseRule` decorated with
``@rule_kind`` above the end of the module, where the union and :data:`RULE_KINDS` are built
from the decorated classes.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Collection, Sequence
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import (
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from nnd_suites.quality_map.rule_base import (
    Assessment,
    BaseRule,
    RatingFault,
    Ratings,
    close_rule_kinds,
    level_key,
    rule_kind,
)
from nnd_suites.records.groups import Candidate
from nnd_suites.records.pooled_ratings import (
    AGGREGATES,
    DEFAULT_IDENTICAL_TEXTS,
    pooled_by_text,
)


def _canonical_levels(values: Sequence[Any], what: str) -> list[str]:
    """Canonical levels, refusing one level written two ways ("1" and "1.0"): which would win?"""
    spelled: dict[str, Any] = {}
    for value in values:
        key = level_key(value)
        if key in spelled:
            raise ValueError(
                f"{what} {key} is written twice, as {spelled[key]!r} and {value!r}; keep one"
            )
        spelled[key] = value
    return list(spelled)


@rule_kind
class MajorityTopRule(BaseRule):
    """Likert: per aspect, high iff a strict majority of the annotators gave the top score."""

    kind: Literal["majority_top"]
    aspects: list[str] = Field(min_length=1, description="one independent view per aspect")
    top: float = Field(strict=True, allow_inf_nan=False)  # nan equals no rating: never high
    high_label: str
    low_label: str

    def views(self) -> list[str | None]:
        return list(self.aspects)

    def rating_key(self, view: str | None) -> str:
        assert view is not None
        return view

    rated: ClassVar[bool] = True

    def produces(self) -> list[str]:
        return [self.high_label, self.low_label]

    def rate(self, values: list[float], key: str) -> Assessment:
        tops = sum(1 for value in values if value == self.top)
        return Assessment(label=self.high_label if tops * 2 > len(values) else self.low_label)

    def measure_description(self, top_labels: Sequence[str]) -> str:
        return "mean rating over the aspects"

    def human_value(
        self,
        ratings: Ratings | None,
        assessment: Assessment,
        view: str | None,
        top_labels: Collection[str],
    ) -> float | None:
        # the annotators' mean score, not the majority label the pairs are built from
        values = (ratings or {}).get(self.rating_key(view))
        return statistics.fmean(values) if values else None


@rule_kind
class GradedRule(BaseRule):
    """Graded credit: which credit levels compare, and which are left out."""

    kind: Literal["graded"]
    rating: str
    levels: dict[str, str] = Field(
        description="credit level (as written, e.g. '1', '0.5') -> label; one spelling per level"
    )
    exclude: list[str | float] = Field(
        default_factory=list, description="credit levels that take no part"
    )

    @field_validator("levels", mode="before")
    @classmethod
    def _one_spelling_per_level(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        keys = _canonical_levels(list(value), "credit level")
        return dict(zip(keys, value.values(), strict=True))

    @field_validator("exclude")
    @classmethod
    def _canonical_exclude(cls, value: list[str | float]) -> list[str | float]:
        return list(_canonical_levels(value, "excluded credit level"))

    @model_validator(mode="after")
    def _compared_or_excluded(self) -> GradedRule:
        overlap = sorted(set(self.levels) & set(map(str, self.exclude)))
        if overlap:
            raise ValueError(
                f"contradiction: credit level(s) {overlap} are both compared and excluded; "
                "remove them from 'levels' or from 'exclude'"
            )
        return self

    def rating_key(self, view: str | None) -> str:
        return self.rating

    def produces(self) -> list[str]:
        return list(self.levels.values())

    def rate(self, values: list[float], key: str) -> Assessment:
        if len(values) != 1:
            raise RatingFault(f"has {len(values)} {key!r} values; graded needs one")
        level = level_key(values[0])
        if level in self.exclude:
            return Assessment(excluded=f"{key} {level} takes no part")
        if level not in self.levels:
            raise RatingFault(
                f"has {key} level {level!r}, which the map neither compares "
                f"{sorted(self.levels)} nor excludes; add it to 'levels' or 'exclude'",
                [level],
            )
        return Assessment(label=self.levels[level])


#: Means are floats (a mean of 70, 80 and 90 is not always exactly 80.0): a difference within this
#: of the bound counts as equal to it, so "at least 20" keeps 20 and "more than 20" drops it.
GAP_TOLERANCE = 1e-12


@rule_kind
class NumericRule(BaseRule):
    """Continuous or averaged ratings: a candidate beats another when its aggregated score is
    higher by at least ``minimum_gap`` or by more than ``minimum_gap_exclusive`` (one of the two).
    One ``rating``, or ``aspects`` (one independent view each)."""

    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [{"required": ["minimum_gap"]}, {"required": ["minimum_gap_exclusive"]}]
        }
    )

    kind: Literal["numeric"]
    rating: str | SkipJsonSchema[None] = Field(None, description="the one rating compared")
    aspects: Annotated[list[str], Field(min_length=1)] | SkipJsonSchema[None] = Field(
        None, description="ratings compared separately, one view (category) each"
    )
    aggregate: Literal["mean", "median", "min", "max", "sum"]
    minimum_gap: float | SkipJsonSchema[None] = Field(
        None,
        json_schema_extra={"exclusiveMinimum": GAP_TOLERANCE},
        description="better when the aggregates differ by AT LEAST this (a gap of exactly it "
        "counts); differences are compared with a tolerance of 1e-12 for floating-point means",
    )
    minimum_gap_exclusive: float | SkipJsonSchema[None] = Field(
        None,
        json_schema_extra={"minimum": 0},
        description="better when the aggregates differ by MORE THAN this (a gap of exactly it "
        "does not count); differences are compared with a tolerance of 1e-12 for floating-point "
        "means",
    )
    low_label: str = Field(description="label of every rated candidate; the low side's grade")
    high_label: str = Field(
        "better", description="how a pair's high (better) side reads in pairs.parquet"
    )
    identical_texts: Literal["pool", "separate"] = Field(
        DEFAULT_IDENTICAL_TEXTS,
        description="candidates of one group with the same text (identical outputs of several "
        "systems): pool (default): their ratings are one text's ratings, so the text gets one "
        "score from all of them and never conflicts with itself (named raters: a rater who "
        "rated it twice counts once, with the mean; unnamed raters, or a sum over different "
        "raters: the mean of the candidates' own aggregates, so a pooled sum stays on one "
        "candidate's scale); separate: each is scored on its own ratings, and identical "
        "texts given different scores are conflicts that conflicting_labels excludes or keeps",
    )

    @field_validator("minimum_gap", "minimum_gap_exclusive", mode="before")
    @classmethod
    def _a_gap(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return value
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise ValueError(f"must be a number, got {value!r}")
        if value < 0 or (value == 0 and info.field_name == "minimum_gap"):
            raise ValueError(f"must be {'> 0' if info.field_name == 'minimum_gap' else '>= 0'}")
        if info.field_name == "minimum_gap" and value <= GAP_TOLERANCE:
            # equal aggregates would then beat each other: two opposite tests of one tie
            raise ValueError(
                f"must be more than {GAP_TOLERANCE:g} (the tolerance of the comparison; a smaller "
                "gap makes two equal scores better than each other); for 'any higher score' "
                "write minimum_gap_exclusive: 0"
            )
        return value

    @model_validator(mode="after")
    def _one_bound(self) -> NumericRule:
        if (self.minimum_gap is None) == (self.minimum_gap_exclusive is None):
            raise ValueError(
                "give either 'minimum_gap' (better by at least) or 'minimum_gap_exclusive' "
                "(better by more than), not both"
            )
        return self

    scored: ClassVar[bool] = True
    rated: ClassVar[bool] = True

    def beats(self, high: float, low: float) -> bool:
        """Is aggregate ``high`` better than ``low`` by the rule's gap (see GAP_TOLERANCE)?"""
        if self.minimum_gap is not None:
            return high - low >= self.minimum_gap - GAP_TOLERANCE
        assert self.minimum_gap_exclusive is not None
        return high - low > self.minimum_gap_exclusive + GAP_TOLERANCE

    @model_validator(mode="after")
    def _rating_or_aspects(self) -> NumericRule:
        if (self.rating is None) == (self.aspects is None):
            raise ValueError("give either 'rating' (one score) or 'aspects' (a list), not both")
        return self

    def views(self) -> list[str | None]:
        return list(self.aspects) if self.aspects else [None]

    def rating_key(self, view: str | None) -> str:
        key = view if self.aspects else self.rating
        assert key is not None
        return key

    def produces(self) -> list[str]:
        return [self.low_label]

    def scored_labels(self) -> set[str]:
        return {self.low_label}

    def rate(self, values: list[float], key: str) -> Assessment:
        return Assessment(label=self.low_label, score=float(AGGREGATES[self.aggregate](values)))

    def pools_identical_texts(self) -> bool:
        return self.identical_texts == "pool"

    def pooled(self, candidates: Sequence[Candidate]) -> dict[str, Candidate]:
        if not self.pools_identical_texts():
            return {}
        # a sum grows with its raters: pooled over more raters it would leave the scale
        return pooled_by_text(
            candidates, AGGREGATES[self.aggregate], grows_with_raters=self.aggregate == "sum"
        )

    def pair_high_label(self) -> str | None:
        return self.high_label  # every candidate is graded low_label; the better reads so

    def better(
        self, high: Assessment, low: Assessment, label_beats: Callable[[str, str], bool]
    ) -> bool:
        assert high.score is not None and low.score is not None
        return self.beats(high.score, low.score)

    def measure_description(self, top_labels: Sequence[str]) -> str:
        if self.aspects:  # short: verify's tables head columns with it
            return f"{self.aggregate} over raters, averaged over aspects and candidates"
        return f"{self.aggregate} {self.rating!r} over raters, averaged over candidates"

    def human_value(
        self,
        ratings: Ratings | None,
        assessment: Assessment,
        view: str | None,
        top_labels: Collection[str],
    ) -> float | None:
        return assessment.score  # the rule's own aggregate over the raters


#: Every rule kind: the classes decorated with @rule_kind above, in their order.
RULE_KINDS: tuple[type[BaseRule], ...] = close_rule_kinds(__name__)
#: A map's ``rating_rule``: one of the kinds, chosen by its ``kind`` tag.
#: (Union[...] of a tuple: ``X | Y`` needs the classes written out, which is what this avoids.)
RatingRule = Annotated[Union[RULE_KINDS], Field(discriminator="kind")]  # noqa: UP007
