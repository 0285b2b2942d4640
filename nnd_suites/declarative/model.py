"""``source.yaml`` as pydantic models: how one table becomes groups of rated candidates or judged
pairs. ``nnd_suites/schemas/declarative_source.schema.json`` is generated from them (a test fails
when it is out of date; regenerate it: ``nnd-suites schema --out nnd_suites/schemas``), like
the quality map's schema.
"""

from __future__ import annotations

import json
from pathlib import Path, PureWindowsPath
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import InitErrorDetails, PydanticCustomError

from nnd_suites.builder.adapter import AdapterMetadata
from nnd_suites.infra.atomic import atomic_write_text
from nnd_suites.infra.validation import NonBlank, StrictModel, once_each

SCHEMA_FILE = "declarative_source.schema.json"
SCHEMA_ID = "https://github.com/nnd-suites/nnd-suites/schemas/declarative_source.schema.json"
#: the file an adapter folder holds instead of a class
DECLARATION_FILE = "source.yaml"

Column = Annotated[str, Field(min_length=1, description="a column (JSON: a key, or a.b path)")]
Name = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
#: columns one per rater: a column listed twice would be read twice
RaterColumns = Annotated[
    list[Column], *once_each(": that rater's ratings would weigh twice in the mean")
]

#: a quality map beside the declaration is named by its file (else it is a shipped map's name)
MAP_SUFFIXES = (".yaml", ".yml", ".json")


def inside_folder(value: str, where: str, advice: str = "copy the file there") -> str:
    """``value``, a relative path that stays in ``where`` (no '..', not absolute): a file read
    from outside an adapter's folder is on its author's machine only, never in an install."""
    # Windows paths split on both separators: '..\\x' and 'C:x' are refused everywhere alike
    path = PureWindowsPath(value)
    if not value or path.anchor or ".." in path.parts:
        raise ValueError(
            f"{value!r} leaves {where}: give a path inside it (no '..', not absolute); {advice}"
        )
    return value


class FileSpec(StrictModel):
    """Which file, in which format, and where it comes from."""

    format: Literal["csv", "tsv", "json", "jsonl"] = Field(
        description="csv, tsv (with a header row), json (one list of objects), jsonl"
    )
    shipped: NonBlank | SkipJsonSchema[None] = Field(
        None, description="file in the adapter's data/ folder read when no --source is given"
    )
    member: NonBlank | SkipJsonSchema[None] = Field(
        None,
        description="the table's path inside a zip or tar archive (--source is then the "
        "archive, extracted safely into the cache); a .gz file needs no member",
    )
    encoding: Literal["utf-8", "utf-8-sig", "latin-1", "cp1252", "utf-16"] = Field(
        "utf-8", description="text encoding of a csv file (the other formats are UTF-8)"
    )
    delimiter: Annotated[str, Field(min_length=1, max_length=1)] = Field(
        ",",
        description="csv: the one character between fields (';' where a decimal comma is the "
        "custom; a tab-separated file is format tsv)",
    )
    quoting: Literal["csv", "none"] = Field(
        "csv",
        description="tsv: csv (a field in double quotes is unquoted, as spreadsheets write it) "
        'or none (every field read as written: "Hey" stays "Hey", as most NLP releases mean it)',
    )
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | SkipJsonSchema[None] = Field(
        None, description="sha256 of the published file: a shipped copy must match it"
    )

    @field_validator("shipped", "member")
    @classmethod
    def _inside(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        if info.field_name == "shipped":
            return inside_folder(value, "the adapter's data/ folder")
        return inside_folder(value, "the archive", "as its listing shows it")

    @model_validator(mode="after")
    def _options_of_the_format(self) -> FileSpec:
        if self.encoding != "utf-8" and self.format != "csv":
            raise ValueError(f"'encoding' is for csv files; {self.format} files are UTF-8")
        if self.quoting != "csv" and self.format != "tsv":
            raise ValueError(f"'quoting' is for tsv files, not {self.format}")
        if self.delimiter != "," and self.format != "csv":
            raise ValueError(f"'delimiter' is for csv files, not {self.format}")
        if self.delimiter in '"\r\n' or self.delimiter.isalnum():
            raise ValueError(
                f"delimiter {self.delimiter!r} cannot separate fields: give a punctuation mark "
                "such as ';' or '|'"
            )
        return self


class RowFilter(StrictModel):
    """Keep a row only when ``column`` equals / is not / is one of the given values (the rows
    left out are counted under ``reason``)."""

    column: Column
    equals: str | SkipJsonSchema[None] = None
    not_: str | SkipJsonSchema[None] = Field(None, alias="not")
    in_: Annotated[list[str], *once_each("")] | SkipJsonSchema[None] = Field(
        None, alias="in", min_length=1
    )
    reason: NonBlank | SkipJsonSchema[None] = Field(
        None, description="how the manifest counts them"
    )

    @model_validator(mode="after")
    def _one_test(self) -> RowFilter:
        given = [self.equals is not None, self.not_ is not None, self.in_ is not None]
        if sum(given) != 1:
            raise ValueError("a filter takes exactly one of 'equals', 'not' and 'in'")
        return self

    def keeps(self, value: str) -> bool:
        if self.equals is not None:
            return value == self.equals
        if self.not_ is not None:
            return value != self.not_
        return value in (self.in_ or [])

    def describe(self) -> str:
        if self.reason:
            return self.reason
        if self.equals is not None:
            return f"{self.column} is not {self.equals!r}"
        if self.not_ is not None:
            return f"{self.column} is {self.not_!r}"
        return f"{self.column} not in {self.in_}"


class Grouping(StrictModel):
    """One group per value of ``key`` (one or several columns; none: one group per context, the
    rows whose context cells are all equal)."""

    key: Annotated[list[Column], *once_each("")] = Field(default_factory=list)
    context: dict[Name, Column] = Field(
        min_length=1, description="context field name -> column (the template names the fields)"
    )
    may_be_empty: Annotated[list[Name], *once_each("")] = Field(
        default_factory=list,
        description="context fields an empty cell is a real value of (code at the file's start "
        "or end: an empty prefix or suffix); an empty cell of any other field skips its group, "
        "counted as 'empty context field(s)'",
    )
    single_candidate: Literal["error", "skip"] = Field(
        "error",
        description="a group with one candidate: error (the key is likely wrong) or skip "
        "(counted as 'group with one candidate')",
    )

    @model_validator(mode="after")
    def _known_fields(self) -> Grouping:
        unknown = sorted(set(self.may_be_empty) - set(self.context))
        if unknown:
            raise ValueError(
                f"may_be_empty names {unknown}, not context fields {sorted(self.context)}"
            )
        return self


class Fixed(StrictModel):
    """A value written in the declaration rather than read from a column."""

    value: NonBlank


class Candidates(StrictModel):
    """Ratings: one row per output (aspects as columns; one column per rater, or a JSON list
    column), or one row per (rater, output) gathered (``rater``), aspects as a column
    (``aspect_column`` + ``value``)."""

    model_config = ConfigDict(allow_inf_nan=False)  # a scale of nan or inf would check nothing

    text: Column
    system: Column | Fixed = Field(Fixed(value="unknown"), description="column, or {value: X}")
    ratings: dict[Name, Column | RaterColumns] | SkipJsonSchema[None] = Field(
        None, description="aspect -> its column, or its columns one per rater"
    )
    aspect_column: Column | SkipJsonSchema[None] = Field(
        None, description="aspects as a column: the aspect each row rates"
    )
    value: Column | SkipJsonSchema[None] = Field(None, description="with aspect_column: rating")
    rater: Column | SkipJsonSchema[None] = Field(
        None, description="one row per (rater, output): rows of one output are gathered"
    )
    low: float | SkipJsonSchema[None] = Field(None, description="lowest valid rating")
    high: float | SkipJsonSchema[None] = Field(None, description="highest valid rating")
    bounds: dict[Name, tuple[float, float]] = Field(
        default_factory=dict,
        description="aspect -> [low, high]: the scale of an aspect rated on another one than "
        "the others (low and high bound the aspects it does not name)",
    )
    better: Literal["higher", "lower"] = Field(
        "higher",
        description="which end of the scale is better: lower for error counts, ranks or "
        "distances (each rating is then negated once read, after the low/high check, so the "
        "map's 'higher by at least' means better; the suite shows -3 for 3)",
    )

    @field_validator("ratings")
    @classmethod
    def _one_aspect_a_column(
        cls, ratings: dict[str, str | list[str]] | None
    ) -> dict[str, str | list[str]] | None:
        """A column read by two aspects is one rating under two names: a map averaging the
        aspects weighs it twice, one judging each aspect apart makes each of its tests twice.
        Refused at the second aspect's key (a ValueError would name only 'ratings')."""
        read_by: dict[str, str] = {}
        for aspect, columns in (ratings or {}).items():
            for column in [columns] if isinstance(columns, str) else columns:
                first = read_by.setdefault(column, aspect)
                if first != aspect:
                    said = (
                        f"column {column!r} is read by aspects {first!r} and {aspect!r}: one "
                        "rating under two names would count twice; give each aspect its own column"
                    )
                    # the text as context: a column's own braces are no placeholders
                    error = PydanticCustomError("value_error", "{said}", {"said": said})
                    raise ValidationError.from_exception_data(
                        cls.__name__,
                        [InitErrorDetails(type=error, loc=(aspect,), input=columns)],
                    )
        return ratings

    @model_validator(mode="after")
    def _one_shape(self) -> Candidates:
        if (self.ratings is None) == (self.aspect_column is None):
            raise ValueError("give 'ratings' (aspects as columns) or 'aspect_column' and 'value'")
        if (self.aspect_column is None) != (self.value is None):
            raise ValueError("'aspect_column' and 'value' go together")
        for name, (low, high) in {"": (self.low, self.high), **self.bounds}.items():
            if low is not None and high is not None and low >= high:
                # every rating would then be out of range, each row its own error
                of = f" of {name!r}" if name else ""
                raise ValueError(f"low ({low:g}) must be below high ({high:g}){of}")
        aspects = sorted(self.ratings or {})  # an aspect column's aspects are known once read
        if unknown := sorted(set(self.bounds) - set(aspects)):  # a typo: its aspect unbounded
            raise ValueError(f"bounds names {unknown}, not aspects of 'ratings' {aspects}")
        return self

    def scale(self, aspect: str) -> tuple[float | None, float | None]:
        """(low, high) of ``aspect``'s ratings (None: unbounded)."""
        return self.bounds.get(aspect, (self.low, self.high))

    @property
    def gathered(self) -> bool:
        return self.rater is not None or self.aspect_column is not None


class Comparisons(StrictModel):
    """One judged pair per row: two texts, their systems, the winner and what its values mean."""

    text_a: Column
    text_b: Column
    system_a: Column | Fixed = Fixed(value="unknown")
    system_b: Column | Fixed = Fixed(value="unknown")
    winner: Column
    verdicts: dict[str, Literal["a", "b", "tie"]] = Field(
        min_length=1, description="each value of the winner column -> a, b or tie"
    )
    rater: Column | SkipJsonSchema[None] = None
    category: Column | SkipJsonSchema[None] = Field(
        None, description="the test's category (e.g. the aspect judged)"
    )


class SourceDeclaration(StrictModel):
    """An annotation source that is one table, declared: nnd-suites reads it with no Python."""

    model_config = ConfigDict(extra="forbid", title="nnd-suites declarative source")

    name: Name
    quality_map: NonBlank = Field(
        description="a shipped map's name, or a .yaml path beside this file"
    )
    metadata: AdapterMetadata
    file: FileSpec
    filters: list[RowFilter] = Field(default_factory=list)
    group: Grouping
    template: str = Field(min_length=1, description="how a model sees the context fields")
    templates: dict[str, str] = Field(default_factory=dict, description="by model family")
    candidates: Candidates | SkipJsonSchema[None] = None
    comparisons: Comparisons | SkipJsonSchema[None] = None

    @field_validator("quality_map")
    @classmethod
    def _map_beside(cls, value: str) -> str:
        if value.endswith(MAP_SUFFIXES):
            return inside_folder(value, "the folder of source.yaml")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> SourceDeclaration:
        if (self.candidates is None) == (self.comparisons is None):
            raise ValueError("give 'candidates' (ratings) or 'comparisons' (judged pairs)")
        return self


#: every key of each part, for "unknown key" advice
ALLOWED_KEYS: dict[str, list[str]] = {
    "": sorted(SourceDeclaration.model_fields),
    **{
        key: sorted(field.alias or name for name, field in model.model_fields.items())
        for key, model in {
            "file": FileSpec,
            "filters": RowFilter,
            "group": Grouping,
            "candidates": Candidates,
            "comparisons": Comparisons,
            "metadata": AdapterMetadata,
            "Fixed": Fixed,  # {value: X} of a union: pydantic's loc names the branch
        }.items()
    },
}


def generate_schema() -> dict[str, Any]:
    schema = SourceDeclaration.model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def schema_text() -> str:
    return json.dumps(generate_schema(), indent=2) + "\n"


def write_schema(folder: str | Path) -> Path:
    """Write the schema into ``folder`` (checked in under nnd_suites/schemas)."""
    path = Path(folder) / SCHEMA_FILE
    atomic_write_text(path, schema_text())
    return path
