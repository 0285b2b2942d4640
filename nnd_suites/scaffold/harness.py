"""The per-adapter checks the test suite runs on every registered adapter (and a third-party
package can run on its own): build the adapter's fixture, validate the written suite files against
the JSON Schemas of the data model, compare its statistics with the expected ones, check the
README's sections and that no metadata still holds the scaffold's ``TODO``. (That every adapter
folder is a registered, documented package with its case is the check every plugin kind runs:
``nnd_suites.plugins.harness``.)

Contribution unit::

    adapters/<name>/
        __init__.py, adapter.py      # the Adapter subclass
        README.md                    # REQUIRED_SECTIONS
        fixtures/<source sample>     # a small file in the source's own format
        fixtures/expected_stats.json # ExpectedStats: which fixture, options, counts it must give
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from nnd_suites.builder.adapter import Adapter
from nnd_suites.builder.suites import build_suite
from nnd_suites.declarative.notes import guess_problems
from nnd_suites.errors import NNDError
from nnd_suites.infra.validation import StrictModel
from nnd_suites.quality_map import QualityMap
from nnd_suites.scaffold.samples import EXPECTED_STATS, FIXTURES
from nnd_suites.suite import MANIFEST_FILE, export_json_schemas, read_pair_rows
from nnd_suites.suite.manifest import placeholder_fields

README = "README.md"
#: Level-2 headings every adapter README needs (reviewers and the dataset card read them).
REQUIRED_SECTIONS = ("Source", "License", "Citation", "Quality rule", "Pairs")


class ExpectedStats(StrictModel):
    """``fixtures/expected_stats.json``: the counts building ``source`` must give."""

    source: str = Field(description="fixture file (or folder, for folder sources) in fixtures/")
    options: dict[str, Any] = Field(default_factory=dict, description="adapter options")
    pairs: int = Field(ge=1)
    groups: int = Field(ge=0)
    candidates: int = Field(ge=0)
    breakdowns: dict[str, dict[str, int]]
    skipped: dict[str, int] = Field(default_factory=dict, description="reason -> count")
    degenerate_pairs: int = Field(0, ge=0, description="pairs whose two texts are identical")


def expected_stats_path(cls: type[Adapter]) -> Path:
    return cls.folder() / FIXTURES / EXPECTED_STATS


def load_expected(cls: type[Adapter]) -> ExpectedStats:
    path = expected_stats_path(cls)
    if not path.is_file():
        raise NNDError(
            f"no {path}; every adapter ships a small fixture and its expected statistics "
            "(see CONTRIBUTING.md)"
        )
    try:
        return ExpectedStats.model_validate_json(path.read_text("utf-8"))
    except ValidationError as exc:
        raise NNDError(f"{path}: invalid expected statistics: {exc}") from exc


def actual_stats(stats: dict[str, Any]) -> dict[str, Any]:
    """The part of ``Suite.stats()`` an expected-stats file pins down."""
    return {
        name: stats[name]
        for name in ("pairs", "groups", "candidates", "breakdowns", "skipped", "degenerate_pairs")
    }


def stats_differences(expected: ExpectedStats, stats: dict[str, Any]) -> list[str]:
    """Human-readable differences between expected and actual statistics (empty if equal)."""
    want = expected.model_dump(exclude={"source", "options"})
    got = actual_stats(stats)
    problems = []
    for name, value in want.items():
        if got[name] != value:
            problems.append(
                f"{name}: expected {json.dumps(value, sort_keys=True)}, "
                f"got {json.dumps(got[name], sort_keys=True)}"
            )
    return problems


def validate_suite_files(folder: Path, schema_folder: Path) -> None:
    """Validate manifest.json and every pair row against the exported JSON Schemas."""
    import jsonschema  # 0.1 s to import: not for every CLI start (new-adapter imports this module)

    schema_folder.mkdir(parents=True, exist_ok=True)
    schemas = {
        path.name.split(".")[0]: json.loads(path.read_text("utf-8"))
        for path in export_json_schemas(schema_folder)
    }
    manifest = json.loads((folder / MANIFEST_FILE).read_text("utf-8"))
    jsonschema.validate(manifest, schemas["suite_manifest"], cls=jsonschema.Draft202012Validator)
    pair_validator = jsonschema.Draft202012Validator(schemas["pair"])
    for path, rows in read_pair_rows(folder):
        for index, row in enumerate(rows):
            error = next(iter(pair_validator.iter_errors(row)), None)
            if error is not None:
                raise jsonschema.ValidationError(f"{path} row {index}: {error.message}")


def check_fixture(cls: type[Adapter], workdir: Path) -> list[str]:
    """Build the adapter's fixture into ``workdir``, validate the files, compare the statistics."""
    try:
        expected = load_expected(cls)
    except NNDError as exc:  # no expected statistics yet, or invalid ones: what to write
        return [str(exc)]
    source = cls.folder() / FIXTURES / expected.source
    if not source.exists():  # a file, or a folder for folder sources
        return [f"fixture {source} named in {EXPECTED_STATS} does not exist"]
    out = workdir / f"{cls.name}_fixture"
    suite = build_suite(cls.name, source, out, **expected.options)
    validate_suite_files(out, workdir / "schemas")
    return stats_differences(expected, suite.stats())


def placeholder_problems(cls: type[Adapter]) -> list[str]:
    """The metadata fields (and the quality map's description) that still hold the scaffold's
    ``TODO``, read from the manifest of the fixture's build (the adapter's own metadata and map
    before it has a fixture): ``export`` and ``publish`` refuse such a suite, so the harness
    names them before a contribution lands."""
    expected = load_expected(cls) if expected_stats_path(cls).is_file() else None
    source = expected and cls.folder() / FIXTURES / expected.source
    if expected and source and source.exists():
        fields = build_suite(cls.name, source, **expected.options).manifest.placeholders()
    else:  # no fixture yet (check_fixture names it)
        fields = placeholder_fields(cls.metadata, QualityMap.load(cls.quality_map).description)
    # not in a manifest: read from the adapter
    fields += ["source_urls"] * any(re.search(r"\bTODO\b", u) for u in cls.metadata.source_urls)
    written = [
        f"adapter {cls.name}: {', '.join(fields)} still hold the scaffold's TODO; write them "
        "(metadata in adapter.py or source.yaml, the description in its quality map)"
    ]
    return written[: bool(fields)] + guess_problems(cls)


def readme_problems(folder: Path) -> list[str]:
    """What an adapter README lacks: the file, or a required ``## Section`` with some text that
    is no longer the scaffold's ``TODO`` placeholder."""
    path = folder / README
    if not path.is_file():
        return [f"{path} is missing"]
    text = path.read_text("utf-8")
    problems = []
    for section in REQUIRED_SECTIONS:
        match = re.search(
            rf"^##\s+{re.escape(section)}\s*$(.*?)(?=^##\s|\Z)",
            text,
            flags=re.MULTILINE | re.DOTALL | re.IGNORECASE,
        )
        if match is None:
            problems.append(f"{path}: no '## {section}' section")
        elif not match.group(1).strip():
            problems.append(f"{path}: section '## {section}' is empty")
        elif re.search(r"\bTODO\b", match.group(1)):
            problems.append(
                f"{path}: section '## {section}' still holds the scaffold's TODO; write it"
            )
    return problems
