"""Suites: a validated set of pairs plus its manifest, stored as a folder.

Layout of a suite folder::

    manifest.json   # SuiteManifest (provenance, quality map, counts, skipped items, content hash)
    pairs.parquet   # one row per Pair

Written atomically (a temporary folder renamed into place) and validated again on load.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nnd_suites.errors import SuiteValidationError
from nnd_suites.format_version import FORMAT_VERSION, newer_format_hint, parse_manifest_text
from nnd_suites.io import atomic_directory, atomic_write_text
from nnd_suites.pairs import Pair, is_degenerate

MANIFEST_FILE = "manifest.json"
PAIRS_FILE = "pairs.parquet"


class SourceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="path or URL as given")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int = Field(ge=0)


class SkippedItems(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str
    count: int = Field(ge=1)
    examples: list[str] = Field(default_factory=list, description="file:line or item ids")


class AdapterInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    options: dict[str, Any] = Field(default_factory=dict)


class QualityMapInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    sha256: str
    description: str
    definition: dict[str, Any] = Field(description="the map itself, so the suite is self-contained")


class TransformationInfo(BaseModel):
    """Set on a child suite made by a transformation; its tests keep their parents' ids."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    params: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None
    parent_suite: str
    parent_content_hash: str
    changed: int = Field(ge=0, description="tests with at least one text changed")
    identical: int = Field(ge=0, description="tests left identical")
    degenerate: int = Field(
        ge=0, description="tests the transformation(s) made degenerate (identical candidates)"
    )


class SuiteCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pairs: int = Field(ge=0)
    groups: int = Field(ge=0)
    candidates: int = Field(ge=0)
    groups_without_pairs: int = Field(0, ge=0)
    pairs_repeating_texts: int = Field(
        0,
        ge=0,
        description="tests whose two texts repeat another test of the same group "
        "(identical outputs annotated separately, quality map pairs_per=candidate)",
    )
    degenerate_pairs: int = Field(
        0,
        ge=0,
        description="tests whose two texts are identical (kept conflicting labels, or made so "
        "by a transformation): evaluators count them apart from pass rates",
    )
    conflicting_texts: int = Field(
        0, ge=0, description="texts given conflicting labels that the quality map keeps"
    )
    breakdowns: dict[str, dict[str, int]] = Field(
        description="field -> value -> number of pairs; 'category' and 'label' always present"
    )


class SuiteManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format_version: str = FORMAT_VERSION
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str
    adapter: AdapterInfo
    quality_map: QualityMapInfo
    sources: list[SourceFile]
    context_fields: list[str] = Field(min_length=1)
    default_template: str
    templates: dict[str, str] = Field(default_factory=dict)
    breakdown_fields: list[str] = Field(default_factory=list)
    allow_empty_candidates: bool = Field(
        False, description="the source judged empty outputs as real answers; they are kept"
    )
    counts: SuiteCounts
    skipped: list[SkippedItems] = Field(default_factory=list)
    conflicts: list[SkippedItems] = Field(
        default_factory=list, description="texts given conflicting labels, kept by the map"
    )
    license: str
    citation: str
    languages: list[str] = Field(default_factory=list)
    task: str = ""
    transformation: TransformationInfo | None = None
    created_with: str = Field(description="nnd-suites version that wrote the suite")
    content_hash: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the pairs")


def content_hash(pairs: Iterable[Pair]) -> str:
    digest = hashlib.sha256()
    for pair in pairs:
        digest.update(pair.model_dump_json().encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def breakdown_counts(pairs: list[Pair], fields: Iterable[str]) -> dict[str, dict[str, int]]:
    """Pairs per value of category, label, aspect (when present) and each adapter field."""
    result: dict[str, dict[str, int]] = {
        "category": dict(Counter(p.category for p in pairs).most_common()),
        "label": dict(Counter(p.label for p in pairs).most_common()),
    }
    if any(p.aspect for p in pairs):
        result["aspect"] = dict(Counter(p.aspect or "" for p in pairs).most_common())
    for name in fields:
        result[name] = dict(Counter(p.breakdown.get(name, "") for p in pairs).most_common())
    return result


class Suite:
    """Pairs plus manifest. ``Suite.load(folder)`` validates; ``suite.save(folder)`` is atomic."""

    def __init__(self, manifest: SuiteManifest, pairs: list[Pair]) -> None:
        self.manifest = manifest
        self.pairs = pairs

    @property
    def name(self) -> str:
        return self.manifest.name

    def __len__(self) -> int:
        return len(self.pairs)

    def __repr__(self) -> str:
        return f"Suite({self.name!r}, pairs={len(self.pairs)})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Suite)
            and self.manifest == other.manifest
            and self.pairs == other.pairs
        )

    @cached_property
    def by_id(self) -> dict[str, Pair]:
        return {pair.id: pair for pair in self.pairs}

    # --------------------------------------------------------------- validation
    def validate(self) -> None:
        """Check the invariants a suite must hold; raise SuiteValidationError naming the fault."""
        problems: list[str] = []
        ids = Counter(pair.id for pair in self.pairs)
        repeated = [i for i, n in ids.items() if n > 1]
        if repeated:
            problems.append(f"{len(repeated)} duplicate pair id(s), e.g. {repeated[:3]}")
        fields = set(self.manifest.context_fields)
        for pair in self.pairs:
            if set(pair.context) != fields:
                problems.append(
                    f"pair {pair.id}: context fields {sorted(pair.context)} != "
                    f"manifest context_fields {sorted(fields)}"
                )
                break
        # Identical texts only come from a transformation or from conflicts the map keeps.
        degenerate_allowed = (
            self.manifest.transformation is not None
            or self.manifest.quality_map.definition.get("conflicting_labels") == "keep"
        )
        for pair in self.pairs:
            empty = not pair.high.text.strip() or not pair.low.text.strip()
            if empty and not self.manifest.allow_empty_candidates:
                problems.append(f"pair {pair.id}: empty candidate text")
                break
            if is_degenerate(pair) and not degenerate_allowed:
                problems.append(f"pair {pair.id}: high and low candidates are identical")
                break
        counts = self.manifest.counts
        degenerate = sum(map(is_degenerate, self.pairs))
        if counts.degenerate_pairs != degenerate:
            problems.append(
                f"manifest counts {counts.degenerate_pairs} degenerate pairs, the data has "
                f"{degenerate}"
            )
        if counts.pairs != len(self.pairs):
            problems.append(f"manifest counts {counts.pairs} pairs, the data has {len(self.pairs)}")
        expected = breakdown_counts(self.pairs, self.manifest.breakdown_fields)
        if counts.breakdowns != expected:
            problems.append("manifest breakdown counts do not match the pairs")
        actual_hash = content_hash(self.pairs)
        if actual_hash != self.manifest.content_hash:
            problems.append(
                f"content hash mismatch: manifest {self.manifest.content_hash[:12]}..., "
                f"pairs {actual_hash[:12]}... (the pairs were edited or corrupted)"
            )
        if problems:
            raise SuiteValidationError(f"suite {self.name!r} is invalid: " + "; ".join(problems))

    # ---------------------------------------------------------------- storage
    def save(self, folder: str | Path) -> Path:
        self.validate()
        folder = Path(folder)
        with atomic_directory(folder) as tmp:
            pq.write_table(pairs_to_table(self.pairs, self.manifest), tmp / PAIRS_FILE)
            (tmp / MANIFEST_FILE).write_text(
                self.manifest.model_dump_json(indent=2) + "\n", encoding="utf-8"
            )
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> Suite:
        folder = Path(folder)
        manifest_path = folder / MANIFEST_FILE
        if not manifest_path.is_file():
            raise SuiteValidationError(
                f"{folder}: not a suite folder (no {MANIFEST_FILE}); build "
                "one with `nnd-suites build ADAPTER --out DIR`"
            )
        manifest = read_manifest(manifest_path)
        try:
            rows = pq.read_table(folder / PAIRS_FILE).to_pylist()
        except (OSError, pa.ArrowException) as exc:
            raise SuiteValidationError(f"{folder / PAIRS_FILE}: unreadable pairs: {exc}") from exc
        suite = cls(manifest, pairs_from_rows(rows, f"{folder / PAIRS_FILE}"))
        suite.validate()
        return suite

    # ------------------------------------------------------------------ stats
    def stats(self) -> dict[str, Any]:
        counts = self.manifest.counts
        return {
            "name": self.name,
            "adapter": self.manifest.adapter.name,
            "pairs": counts.pairs,
            "groups": counts.groups,
            "candidates": counts.candidates,
            "groups_without_pairs": counts.groups_without_pairs,
            "pairs_repeating_texts": counts.pairs_repeating_texts,
            "degenerate_pairs": counts.degenerate_pairs,
            "conflicting_texts": counts.conflicting_texts,
            "breakdowns": counts.breakdowns,
            "skipped": {s.reason: s.count for s in self.manifest.skipped},
            "transformation": (
                self.manifest.transformation.model_dump() if self.manifest.transformation else None
            ),
            "content_hash": self.manifest.content_hash,
        }


def read_manifest(path: Path) -> SuiteManifest:
    """Parse and check a manifest file (encoding, format version, schema), naming the file."""
    data = parse_manifest_text(path, SuiteManifest.model_fields)
    try:
        return SuiteManifest.model_validate(data)
    except ValidationError as exc:
        raise SuiteValidationError(
            f"{path}: invalid manifest: {exc}{newer_format_hint(data)}"
        ) from exc


# -------------------------------------------------------------- parquet rows
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


def pairs_to_table(pairs: list[Pair], manifest: SuiteManifest) -> pa.Table:
    schema = pairs_arrow_schema(manifest.context_fields, manifest.breakdown_fields)
    return pa.Table.from_pylist(pair_rows(pairs), schema=schema)


def pairs_from_rows(rows: list[dict[str, Any]], where: str) -> list[Pair]:
    pairs = []
    for index, row in enumerate(rows):
        try:
            pairs.append(Pair.model_validate(row))
        except ValidationError as exc:
            raise SuiteValidationError(f"{where}: row {index}: invalid pair: {exc}") from exc
    return pairs


def export_json_schemas(folder: str | Path) -> list[Path]:
    """Write the JSON Schemas of suite files (manifest, one pair row) into ``folder``."""
    folder = Path(folder)
    written = []
    for name, model in (("suite_manifest", SuiteManifest), ("pair", Pair)):
        path = folder / f"{name}.schema.json"
        schema = model.model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        atomic_write_text(path, json.dumps(schema, indent=2) + "\n")
        written.append(path)
    return written
