"""One config of an export folder: its manifest and parquet shards, checked against each other."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from nnd_suites.errors import SuiteValidationError
from nnd_suites.hub.layout import DATA_GLOB, data_files, suite_features
from nnd_suites.suite import (
    CANDIDATES_FILE,
    MANIFEST_FILE,
    Suite,
    SuiteManifest,
    pairs_from_rows,
    read_candidates,
)


@dataclass(frozen=True)
class ConfigInfo:
    """What the dataset card needs to know about one exported config."""

    name: str
    manifest: SuiteManifest
    num_examples: int
    num_bytes: int  # in-memory Arrow size of the split
    download_size: int  # parquet bytes on disk

    @property
    def features(self):  # datasets.Features
        return suite_features(self.manifest)


def read_manifest(config_dir: Path) -> SuiteManifest:
    path = config_dir / MANIFEST_FILE
    if not path.is_file():
        raise SuiteValidationError(
            f"{config_dir}: no {MANIFEST_FILE}; not an exported suite config"
        )
    manifest = SuiteManifest.from_directory(config_dir)
    if manifest.name != config_dir.name:
        raise SuiteValidationError(
            f"{path}: the folder of config {config_dir.name!r} holds suite "
            f"{manifest.name!r}; a config folder is named after its suite"
        )
    return manifest


def _shards(config_dir: Path) -> list[Path]:
    shards = data_files(config_dir)
    if not shards:
        raise SuiteValidationError(f"{config_dir}: no {DATA_GLOB} data file beside the manifest")
    return shards


def check_schema(shards: list[Path], manifest: SuiteManifest) -> None:
    """Every shard must have exactly the columns and types the manifest's fields declare."""
    expected = suite_features(manifest).arrow_schema
    for shard in shards:
        try:
            actual = pq.read_schema(shard)
        except (OSError, pa.ArrowException) as exc:
            raise SuiteValidationError(f"{shard}: unreadable parquet: {exc}") from exc
        if actual.equals(expected, check_metadata=False):
            continue
        wanted = {f.name: str(f.type) for f in expected}
        found = {f.name: str(f.type) for f in actual}
        differences = [
            f"{name}: {found.get(name, 'missing')} (expected {wanted.get(name, 'no such column')})"
            for name in dict.fromkeys([*wanted, *found])
            if found.get(name) != wanted.get(name)
        ]
        raise SuiteValidationError(
            f"{shard}: schema does not match the manifest of suite {manifest.name!r} (context "
            f"fields {manifest.context_fields}, breakdown fields {manifest.breakdown_fields}): "
            + ("; ".join(differences) or "column order differs")
            + "; export the suite again with `nnd-suites export`"
        )


def describe_config(config_dir: Path) -> ConfigInfo:
    """Manifest, schema and row count checked against each other, without reading the texts."""
    manifest = read_manifest(config_dir)
    shards = _shards(config_dir)
    check_schema(shards, manifest)
    metadata = [pq.read_metadata(shard) for shard in shards]
    rows = sum(m.num_rows for m in metadata)
    if rows != manifest.counts.pairs:
        raise SuiteValidationError(
            f"{config_dir}: {rows} rows in {DATA_GLOB}, the manifest counts "
            f"{manifest.counts.pairs} pairs; export the suite again"
        )
    num_bytes = sum(pq.read_table(shard).nbytes for shard in shards)
    return ConfigInfo(
        name=config_dir.name,
        manifest=manifest,
        num_examples=rows,
        num_bytes=num_bytes,
        download_size=sum(s.stat().st_size for s in shards),
    )


def read_config(config_dir: Path) -> Suite:
    """The typed suite of one exported config, validated (content hash included)."""
    manifest = read_manifest(config_dir)
    shards = _shards(config_dir)
    check_schema(shards, manifest)
    rows = [row for shard in shards for row in pq.read_table(shard).to_pylist()]
    suite = Suite(
        manifest,
        pairs_from_rows(rows, f"{config_dir}/{DATA_GLOB}"),
        read_candidates(config_dir / CANDIDATES_FILE, manifest.format_version),
    )
    suite.validate()
    return suite
