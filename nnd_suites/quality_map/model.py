"""The quality-map file as pydantic models; its JSON Schema is generated from them.

``nnd_suites/schemas/quality_map.schema.json`` is that generated schema, checked in so editors and
the pre-commit hook validate ``quality_maps/*.yaml``; a test fails when it is out of date
(regenerate with ``nnd-suites schema --quality-map``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, SkipJsonSchema
from pydantic_core import core_schema

from nnd_suites.infra.output_file import write_schema_files
from nnd_suites.infra.validation import StrictModel, listed_once
from nnd_suites.quality_map.pairwise import PairwiseRule
from nnd_suites.quality_map.rule_base import kind_tag
from nnd_suites.quality_map.rules import RULE_KINDS, RatingRule

SCHEMA_FILE = "quality_map.schema.json"
SCHEMA_ID = "https://github.com/nnd-suites/nnd-suites/schemas/quality_map.schema.json"

Label = Annotated[str, Field(min_length=1)]


class Hierarchy(StrictModel):
    """How the error categories of low candidates roll up into top categories."""

    # the constraint sits on the str (on the union it would raise a TypeError for null)
    separator: Annotated[str, Field(min_length=1)] | SkipJsonSchema[None] = Field(
        None,
        description="Categories are paths joined by this separator (MQM: '/'); the first "
        "element is the top category.",
    )
    parents: dict[str, str] = Field(
        default_factory=dict, description="child -> parent; roots have no entry."
    )
    strict: bool = Field(
        True, description="A category absent from 'parents' (and not a root) is an error."
    )
    roots: list[str] = Field(
        default_factory=list, description="Top categories, when 'strict' needs to know them."
    )


class QualityMapDefinition(BaseModel):
    """Declares the partial order of quality over annotation labels (or how ratings become labels
    or a numeric order), and the hierarchy that rolls error labels up into categories."""

    model_config = ConfigDict(extra="forbid", title="nnd-suites quality map")

    schema_: str | SkipJsonSchema[None] = Field(None, alias="$schema")
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(
        min_length=1, description="The quality rule in words, as a dataset card shows it."
    )
    labels: list[Label] = Field(
        min_length=1,
        json_schema_extra={"uniqueItems": True},
        description="Every label a candidate may carry (after the rating rule, if any); each "
        "must take part in the order or be excluded.",
    )
    tiers: list[list[str]] = Field(
        default_factory=list,
        description="Best first. A label in an earlier tier beats every label in a later tier; "
        "labels in one tier are not compared.",
    )
    better_than: list[tuple[str, str]] = Field(
        default_factory=list,
        description="Explicit [better, worse] edges; the order is their transitive closure with "
        "the tiers. Labels with no path between them are incomparable and form no pair.",
    )
    exclude: list[str] = Field(
        default_factory=list,
        json_schema_extra={"uniqueItems": True},
        description="Labels that take no part in any pair; their candidates are counted as "
        "skipped.",
    )
    pairs_per: Literal["candidate", "text"] = Field(
        "candidate",
        description="candidate: one test per pair of annotated candidates (identical outputs "
        "annotated separately each count, as the published NND figures do); text: one test per "
        "pair of distinct texts (identical outputs merged).",
    )
    conflicting_labels: Literal["exclude", "keep"] = Field(
        "exclude",
        description="A text given different labels (or, for numeric rules, different scores) "
        "within a group: exclude its candidates (counted as skipped), or keep them (counted in "
        "the manifest); kept conflicts can give degenerate tests whose two texts are identical, "
        "which evaluators count apart from pass rates.",
    )
    hierarchy: Hierarchy = Field(default_factory=Hierarchy)
    rating_rule: RatingRule | SkipJsonSchema[None] = Field(
        None, description="How ratings become labels or scores; absent: candidates carry labels."
    )
    pairwise: PairwiseRule | SkipJsonSchema[None] = Field(
        None,
        description="For sources that judge pairs of responses (A better, B better, tie): what a "
        "judgment means. The adapter then emits judgments, not labelled candidates.",
    )

    @field_validator("tiers")
    @classmethod
    def _tiers_not_empty(cls, tiers: list[list[str]]) -> list[list[str]]:
        if any(not tier for tier in tiers):
            raise ValueError("a tier is empty; remove it or list its labels")
        return tiers

    @field_validator("labels", "exclude")
    @classmethod
    def _listed_once(cls, values: list[str], info: ValidationInfo) -> list[str]:
        return listed_once(values, f" in '{info.field_name}'")


#: the keys each object of a map takes, by its tag: "" (top level), "hierarchy" or a rule kind
ALLOWED_KEYS: dict[str, list[str]] = {
    "": [field.alias or name for name, field in QualityMapDefinition.model_fields.items()],
    "hierarchy": list(Hierarchy.model_fields),
    "pairwise": list(PairwiseRule.model_fields),
    **{kind_tag(rule): list(rule.model_fields) for rule in RULE_KINDS},
}


class _SchemaGenerator(GenerateJsonSchema):
    """Writes the rule union as if/then on ``kind`` rather than ``oneOf``: generic validators
    (check-jsonschema) then report "'foo' was unexpected" instead of "not valid under any of the
    given schemas", and ``discriminator`` (an OpenAPI keyword they ignore) is left out."""

    def tagged_union_schema(self, schema: core_schema.TaggedUnionSchema) -> JsonSchemaValue:
        generated = super().tagged_union_schema(schema)
        mapping = generated["discriminator"]["mapping"]
        key = generated["discriminator"]["propertyName"]
        return {
            "type": "object",
            "required": [key],
            "properties": {key: {"enum": list(mapping)}},
            "allOf": [
                {"if": {"properties": {key: {"const": tag}}}, "then": {"$ref": ref}}
                for tag, ref in mapping.items()
            ],
        }


def generate_schema() -> dict[str, Any]:
    """The quality-map JSON Schema, generated from :class:`QualityMapDefinition`."""
    schema = QualityMapDefinition.model_json_schema(
        by_alias=True, schema_generator=_SchemaGenerator
    )
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def write_schema(folder: str | Path) -> Path:
    """Write ``quality_map.schema.json`` into ``folder`` (checked in under nnd_suites/schemas)."""
    return write_schema_files(folder, {SCHEMA_FILE: generate_schema()})[0]
