"""One config of an export folder: a suite folder named after its suite, described for the card."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import datasets

from nnd_suites.errors import SuiteValidationError
from nnd_suites.hub.card_agreement import config_agreement
from nnd_suites.human.agreement import RaterAgreement
from nnd_suites.infra.formatting import count
from nnd_suites.suite import DATA_GLOB, MANIFEST_FILE, Suite, SuiteManifest
from nnd_suites.suite.storage import data_files, has_manifest, read_pairs_table


@dataclass(frozen=True)
class ConfigInfo:
    """What the dataset card needs to know about one exported config."""

    name: str
    manifest: SuiteManifest
    num_examples: int
    num_bytes: int  # in-memory Arrow size of the split
    download_size: int  # parquet bytes on disk
    features: datasets.Features  # as the data files hold them (older files lack later columns)
    #: raters' leave-one-out agreement over the tests with >= 2 votes (None: no such test)
    agreement: RaterAgreement | None = None


def read_manifest(config_dir: Path) -> SuiteManifest:
    if not has_manifest(config_dir):
        raise SuiteValidationError(
            f"{config_dir}: no {MANIFEST_FILE}; not an exported suite config"
        )
    manifest = SuiteManifest.from_directory(config_dir)
    _check_named_after_its_suite(config_dir, manifest)
    return manifest


def republish(location: str) -> str:
    """What to do about a fault of a config downloaded from the Hub (``location``:
    ``hub:ORG/NAME[@REVISION]``): its files are as published, and the copy in the Hugging Face
    cache is not the user's to edit."""
    repo = location.removeprefix("hub:").partition("@")[0]
    return (
        f"{location} was published so (never edit its copy in the Hugging Face cache): tell the "
        f"dataset's owner (https://huggingface.co/datasets/{repo}), or, as its owner, publish "
        f"its suites again from folders that validate (`nnd-suites publish SUITE... --repo "
        f"{repo}` rewrites their configs and the card)"
    )


def _check_named_after_its_suite(
    config_dir: Path, manifest: SuiteManifest, published: str | None = None
) -> None:
    """``published``: the config was downloaded from there (:func:`republish`)."""
    name, folder = manifest.name, config_dir.parent
    if name == config_dir.name:
        return
    fix = f"name the folder {name!r} or export the suite again"
    try:  # the folder named so holds this folder's suite: two folders renamed by hand
        if SuiteManifest.from_directory(folder / name).name == config_dir.name:
            fix = f"{name}/ holds suite {config_dir.name!r}: swap the two folders' names back"
    except SuiteValidationError:
        pass  # no suite there (or a damaged one): naming this folder so is the fix
    raise SuiteValidationError(
        f"{config_dir / MANIFEST_FILE}: the folder of config {config_dir.name!r} holds suite "
        f"{name!r}; a config folder is named after its suite, whose files "
        "`datasets.load_dataset` reads under that name: "
        + (republish(published) if published else f"{fix}, then run `nnd-suites validate {folder}`")
    )


def describe_config(config_dir: Path) -> ConfigInfo:
    """Manifest, schema and row count checked against each other; each data file read once."""
    manifest = read_manifest(config_dir)
    shards = data_files(config_dir)
    if not shards:
        raise SuiteValidationError(f"{config_dir}: no {DATA_GLOB} data file beside the manifest")
    tables = [read_pairs_table(shard, manifest) for shard in shards]
    rows = sum(table.num_rows for table in tables)
    if rows != manifest.counts.pairs:
        raise SuiteValidationError(
            f"{config_dir}: {count(rows)} rows in {DATA_GLOB}, the manifest counts "
            f"{count(manifest.counts.pairs)} pairs; export the suite again"
        )
    return ConfigInfo(
        name=config_dir.name,
        manifest=manifest,
        num_examples=rows,
        num_bytes=sum(table.nbytes for table in tables),
        download_size=sum(s.stat().st_size for s in shards),
        features=datasets.Features.from_arrow_schema(tables[0].schema),
        agreement=config_agreement(tables),
    )


def read_config(config_dir: Path, published: str | None = None) -> Suite:
    """The validated suite of one exported config (content hash included), which must be
    named after the folder that holds it; ``published``: downloaded from there (hub:ORG/NAME)."""
    suite = Suite.load(config_dir)
    _check_named_after_its_suite(config_dir, suite.manifest, published)
    return suite
