"""The suite manifest: provenance, quality map, counts, skipped items, templates, hashes.

One reader and one writer (``SuiteManifest.from_directory`` / ``write_to_directory``, the pattern
of ``datasets.info.DatasetInfo``) serve suite folders and exported Hub configs alike.

Integrity: ``section_hashes`` holds a sha256 per manifest field, one for the pairs and one for the
annotated candidates, and ``content_hash`` covers them all, so any edit (a template, a count, the
quality map, a pair, a candidate) makes validation fail with the name of what was edited.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nnd_suites.errors import NNDError, SuiteValidationError
from nnd_suites.infra.atomic import atomic_write_text
from nnd_suites.infra.output_file import write_schema_files
from nnd_suites.infra.output_kinds import JSON_SCHEMA_DIALECT, register_reader
from nnd_suites.infra.reading import MANIFEST_FILE_LIMIT, DataFileError, read_json_file
from nnd_suites.infra.validation import StrictModel, validation_problems
from nnd_suites.records.margins import MarginKind
from nnd_suites.records.pairs import Pair
from nnd_suites.suite.candidates import SuiteCandidate

#: 2.1: candidates.parquet beside the pairs; 2.2: text_equivalence; 2.3: per-rater votes and
#: margins of tests (margin_kind), raters of candidates; 2.4: texts differing by a zero-width
#: joiner or non-joiner are two texts (a reader of 2.3 would take them for one, so it refuses
#: these suites as newer instead of miscounting their degenerate tests)
FORMAT_VERSION = "2.4"
#: a suite name: also its folder and Hub config name, so no spaces, slashes or controls
SUITE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
# What a new suite may be named: its name is also its folder in an export and its config on the
# Hub, a folder name in `datasets`' cache and a value in the card's YAML: letters, digits, '_',
# '-' and inner dots only (none of the characters `datasets` rejects: <>:/\|?*). Suites saved
# under the looser SUITE_NAME_PATTERN still load; they are refused when exported.
_CONFIG_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_-]|\.(?=[A-Za-z0-9_-]))*$")
MAX_CONFIG_NAME = 96
#: README.md would collide with the card; "default" is the config `datasets` picks silently.
RESERVED_NAMES = frozenset({"readme.md", "default"})


def config_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a suite's folder and Hub config (None when it can)."""
    if not _CONFIG_NAME.fullmatch(name):  # fullmatch: `$` would take a final newline
        return (
            "use letters, digits, '_', '.' and '-' only, starting with a letter or digit, with "
            "inner dots only (no spaces, slashes or any of <>:/\\|?*)"
        )
    if len(name) > MAX_CONFIG_NAME:
        return f"at most {MAX_CONFIG_NAME} characters"
    if name.lower() in RESERVED_NAMES:
        return "README.md and default are reserved in a dataset repository"
    return None


def check_config_name(name: str, refusal: Callable[[str], str]) -> str:
    """Return ``name`` if it can name a suite's folder and Hub config, else raise an NNDError
    whose message ``refusal`` makes of the problem (each caller gives its own advice)."""
    problem = config_name_problem(name)
    if problem:
        raise NNDError(refusal(problem))
    return name


MANIFEST_FILE = "manifest.json"
#: Manifest fields that are not hashed: the hashes themselves.
UNHASHED = ("section_hashes", "content_hash")
#: Hashed on their own (an edit is named) but left out of the content hash, so that the same
#: suite rebuilt by another release keeps its content hash (and its children's parent links).
OUTSIDE_CONTENT = ("created_with",)
PAIRS_SECTION = "pairs"
CANDIDATES_SECTION = "candidates"


class SourceFile(StrictModel):
    path: str = Field(description="path or URL as given (credentials and queries removed)")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int = Field(ge=0)


class SkippedItems(StrictModel):
    reason: str
    count: int = Field(ge=1)
    examples: list[str] = Field(default_factory=list, description="file:line or item ids")


class AdapterInfo(StrictModel):
    name: str
    version: str
    options: dict[str, Any] = Field(default_factory=dict)


class QualityMapInfo(StrictModel):
    name: str
    sha256: str
    description: str
    definition: dict[str, Any] = Field(description="the map itself, so the suite is self-contained")


class TransformationInfo(StrictModel):
    """Set on a child suite made by a transformation; its tests keep their parents' ids."""

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


class BuildCounts(StrictModel):
    """What the pair builder counted while reading groups (the pairs themselves say the rest)."""

    groups: int = Field(ge=0)
    candidates: int = Field(
        ge=0,
        description="candidates read (a judgment's two responses, as judged), those left out "
        "of the tests included: skipped says why",
    )
    groups_without_pairs: int = Field(0, ge=0)
    pairs_repeating_texts: int = Field(
        0,
        ge=0,
        description="tests whose two texts repeat another test of the same group "
        "(identical outputs annotated separately, quality map pairs_per=candidate)",
    )
    conflicting_texts: int = Field(
        0, ge=0, description="texts given conflicting labels that the quality map keeps"
    )


class PairCounts(StrictModel):
    """Counts that follow from the pairs alone (recomputed by validation)."""

    pairs: int = Field(ge=0)
    degenerate_pairs: int = Field(
        0,
        ge=0,
        description="tests whose two texts are identical (kept conflicting labels, or made so "
        "by a transformation): evaluators count them apart from pass rates",
    )
    breakdowns: dict[str, dict[str, int]] = Field(
        description="field -> value -> number of pairs; 'category' and 'label' always present"
    )


class SuiteCounts(PairCounts, BuildCounts):
    model_config = ConfigDict(extra="forbid")


#: the scaffold's placeholder (nnd_suites/scaffold): every unknown it writes starts so
_PLACEHOLDER = re.compile(r"\bTODO\b")
#: how :meth:`SuiteManifest.placeholders` names the quality map's description
MAP_PLACEHOLDER = "quality map description"


def placeholder_fields(metadata: Any, map_description: str) -> list[str]:
    """Which of ``metadata``'s description, license, citation and task (an adapter's metadata,
    or a manifest's copy of it) and the quality map's description still hold the ``TODO``."""
    fields = {
        "description": metadata.description,
        "license": metadata.license,
        "citation": metadata.citation,
        "task": metadata.task,
        MAP_PLACEHOLDER: map_description,
    }
    return [name for name, value in fields.items() if _PLACEHOLDER.search(value)]


class SuiteManifest(StrictModel):
    format_version: str = FORMAT_VERSION
    name: str = Field(pattern=SUITE_NAME_PATTERN)
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
    optional_context_fields: list[str] = Field(
        default_factory=list,
        description="context fields that may be empty (an empty suffix: the cursor at the end "
        "of the file); the build left out groups with any other context field empty",
    )
    text_equivalence: str | None = Field(
        None,
        description="the rule deciding when two texts are the same (conflicts, degenerate "
        "tests) and a text is empty (nnd_suites.records.texts.TEXT_EQUIVALENCE); "
        "nfc+drop-cf-cc+collapse-whitespace in suites built before zero-width joiners were kept, "
        "which load while the two rules agree on their texts (nnd_suites.suite.text_rule); "
        "absent from suites built before format 2.2, which compared texts as exact strings",
    )
    margin_kind: MarginKind | None = Field(
        None,
        description="what each test's margin holds (nnd_suites.records.margins): rater_share, the "
        "share of its raters' votes preferring the better candidate (ties count as not preferring "
        "it); score_gap, the numeric rule's gap of aggregated scores; confidence, the mean "
        "stated strength of the verdicts preferring it. Null: no test has a margin (and in "
        "suites built before format 2.3)",
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
    section_hashes: dict[str, str] = Field(
        default_factory=dict,
        description="sha256 of each manifest field and of the pairs: names what was edited",
    )
    content_hash: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="sha256 over section_hashes: the whole suite"
    )

    def placeholders(self) -> list[str]:
        """The fields that still hold the ``TODO`` that ``nnd-suites new-adapter`` writes where
        only the contributor knows the answer (license, citation, ...): a dataset folder is
        published as it is, so ``export`` and ``publish`` refuse such a suite."""
        return placeholder_fields(self, self.quality_map.description)

    # ------------------------------------------------------------------ files
    @classmethod
    def from_directory(cls, folder: str | Path) -> SuiteManifest:
        """Read and check ``folder/manifest.json`` (schema and format version), naming the file."""
        path = Path(folder) / MANIFEST_FILE
        try:  # a regular file, bounded in size, nesting and digits
            raw = read_json_file(path, "suite manifest", MANIFEST_FILE_LIMIT, unique_keys=True)
        except DataFileError as exc:
            raise SuiteValidationError(f"{exc}; not a readable suite manifest") from None
        if not isinstance(raw, dict):
            raise SuiteValidationError(f"{path}: a manifest is a JSON object")
        check_format_version(raw.get("format_version"), path)
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise SuiteValidationError(
                f"{path}: invalid manifest: {validation_problems(exc, raw)}; correct the field, or "
                "rebuild the suite (nnd-suites build)"
            ) from None

    def write_to_directory(self, folder: str | Path) -> Path:
        path = Path(folder) / MANIFEST_FILE
        atomic_write_text(path, self.model_dump_json(indent=2) + "\n")
        return path

    # ----------------------------------------------------------------- hashes
    def sealed(self, pairs: Iterable[Pair], candidates: Iterable[SuiteCandidate]) -> SuiteManifest:
        """A copy whose section hashes and content hash cover this manifest, ``pairs`` and
        ``candidates``."""
        sections = compute_section_hashes(self, pairs, candidates)
        return self.model_copy(
            update={"section_hashes": sections, "content_hash": combine(sections)}
        )

    def edited_sections(
        self, pairs: Iterable[Pair], candidates: Iterable[SuiteCandidate]
    ) -> list[str]:
        """Names of the manifest fields (or ``pairs``, ``candidates``) that no longer match their
        hashes."""
        actual = compute_section_hashes(self, pairs, candidates)
        edited = [
            name
            for name in dict.fromkeys([*actual, *self.section_hashes])
            if actual.get(name) != self.section_hashes.get(name)
        ]
        if not edited and combine(self.section_hashes) != self.content_hash:
            edited = ["content_hash"]
        return edited


def check_format_version(value: object, path: Path) -> None:
    """``MAJOR.MINOR``; another major is unreadable, a newer minor needs a newer nnd-suites."""
    if not isinstance(value, str) or not _is_version(value):
        raise SuiteValidationError(
            f"{path}: invalid format_version {value!r}: expected MAJOR.MINOR such as "
            f"{FORMAT_VERSION!r}"
        )
    major, minor = map(int, value.split("."))
    ours_major, ours_minor = map(int, FORMAT_VERSION.split("."))
    if major != ours_major:
        raise SuiteValidationError(
            f"{path}: suite format {value} is not readable by this nnd-suites (format "
            f"{FORMAT_VERSION}); rebuild the suite with this version, or use the nnd-suites "
            "version that wrote it"
        )
    if minor > ours_minor:
        raise SuiteValidationError(
            f"{path}: written by a newer nnd-suites (format {value}, this one reads up to "
            f"{FORMAT_VERSION}); upgrade nnd-suites"
        )


def _is_version(value: str) -> bool:
    parts = value.split(".")
    return len(parts) == 2 and all(p.isdigit() and p.isascii() for p in parts)


def compute_section_hashes(
    manifest: SuiteManifest, pairs: Iterable[Pair], candidates: Iterable[SuiteCandidate]
) -> dict[str, str]:
    data = manifest.model_dump(mode="json", exclude=set(UNHASHED))
    for later in ("text_equivalence", "margin_kind"):  # suites built before them keep hashes
        if data.get(later) is None:
            data.pop(later, None)
    sections = {name: _sha256(json.dumps(value, sort_keys=True)) for name, value in data.items()}
    sections[PAIRS_SECTION] = rows_hash(pairs)
    sections[CANDIDATES_SECTION] = rows_hash(candidates)
    return sections


#: Row fields added in format 2.3 (a pair's votes and margin, a candidate's raters) with the
#: value a row written before them holds: left out of the row's hash while they hold it, so
#: suites written before them keep their hashes and load.
LATER_ROW_FIELDS: dict[str, object] = {"votes": [], "margin": None, "raters": None}


def rows_hash(rows: Iterable[BaseModel]) -> str:
    """sha256 over each row's JSON, one line each: the hash of pairs and of candidates, which
    does not depend on how a table stores them."""
    digest = hashlib.sha256()
    for row in rows:
        unset = {name for name, value in _later_fields(type(row)) if getattr(row, name) == value}
        digest.update(row.model_dump_json(exclude=unset).encode("utf-8", "surrogatepass"))
        digest.update(b"\n")
    return digest.hexdigest()


@functools.cache
def _later_fields(model: type[BaseModel]) -> tuple[tuple[str, object], ...]:
    """The :data:`LATER_ROW_FIELDS` a row model has, with their old value (looked up once per
    model: a suite hashes each of its rows)."""
    return tuple((n, v) for n, v in LATER_ROW_FIELDS.items() if n in model.model_fields)


def combine(sections: dict[str, str]) -> str:
    content = {k: v for k, v in sections.items() if k not in OUTSIDE_CONTENT}
    return _sha256(json.dumps(content, sort_keys=True))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def suite_schemas() -> dict[str, dict]:
    """File name -> JSON Schema of each suite file (manifest, one pair row, one candidate row)."""
    models = (("suite_manifest", SuiteManifest), ("pair", Pair), ("candidate", SuiteCandidate))
    return {
        f"{name}.schema.json": model.model_json_schema() | {"$schema": JSON_SCHEMA_DIALECT}
        for name, model in models
    }


def export_json_schemas(folder: str | Path) -> list[Path]:
    """Write the JSON Schemas of suite files into ``folder`` (a file of the user's of the same
    name is refused, never replaced)."""
    return write_schema_files(folder, suite_schemas())


for _kind in ("suite", "export-config"):  # unmarked folders: the manifest's own reader
    register_reader(_kind, SuiteManifest.from_directory)
