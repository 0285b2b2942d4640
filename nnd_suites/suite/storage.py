"""The one on-disk layout of a suite and its one reader.

``nnd-suites build`` writes it, and an export folder holds one such folder per suite (named
after the suite) beside a generated card, so a built suite *is* an exported config::

    manifest.json                  # SuiteManifest (provenance, counts, skipped items, hashes)
    test-00000-of-00001.parquet    # the pairs (split "test"), the `datasets` Features embedded
    candidates.parquet             # every annotated candidate, paired or not

``datasets.load_dataset(FOLDER, split="test")`` reads the pairs of any suite folder, and nothing
else: a file there that `datasets` would read as split data (a ``test.parquet`` copy, a
``backup/test-00000-of-00001.parquet``) is refused by the reader, as `datasets` resolves them.
Every file is opened as a regular file only (:func:`nnd_suites.infra.reading.open_regular_file`).
Suites written before this layout hold the same pair rows in ``pairs.parquet`` (no Features);
they load as they are, with the same content hash: no hash depends on a file name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from nnd_suites.errors import SuiteValidationError
from nnd_suites.infra.parquet import ParquetTooLargeError, parquet_buffer, read_bounded_table
from nnd_suites.infra.reading import DataFileError, check_regular_file
from nnd_suites.suite.candidates import (
    CANDIDATES_FILE,
    SuiteCandidate,
    candidates_from_rows,
    candidates_to_table,
)
from nnd_suites.suite.manifest import (
    CANDIDATES_SECTION,
    MANIFEST_FILE,
    PAIRS_SECTION,
    SuiteManifest,
    compute_section_hashes,
)
from nnd_suites.suite.table import LATER_COLUMNS, pair_rows, pairs_arrow_schema, pairs_from_rows

if TYPE_CHECKING:
    import datasets

    from nnd_suites.records.pairs import Pair

SPLIT = "test"
DATA_FILE = f"{SPLIT}-00000-of-00001.parquet"
DATA_GLOB = f"{SPLIT}-*.parquet"
#: Where suites written before the one layout keep their pairs (read, never written).
LEGACY_PAIRS_FILE = "pairs.parquet"

T = TypeVar("T")


def suite_features(manifest: SuiteManifest) -> datasets.Features:
    """The explicit `datasets` Features of a suite, derived from the suite's parquet schema."""
    import datasets  # 1 s to import: only where a suite is written or described

    schema = pairs_arrow_schema(manifest.context_fields, manifest.breakdown_fields)
    return datasets.Features.from_arrow_schema(schema)


def write_suite_files(
    folder: Path, manifest: SuiteManifest, pairs: list[Pair], candidates: list[SuiteCandidate]
) -> None:
    """Fill ``folder`` (a temporary folder the caller swaps into place) with the suite's files."""
    schema = suite_features(manifest).arrow_schema  # carries the Features as metadata
    pq.write_table(pa.Table.from_pylist(pair_rows(pairs), schema=schema), folder / DATA_FILE)
    pq.write_table(candidates_to_table(candidates), folder / CANDIDATES_FILE)
    manifest.write_to_directory(folder)


def _present(path: Path) -> bool:
    """Whether anything is at ``path``, of any kind: a fifo or a folder in a file's place is
    there, and named by the reader as what it is, never taken for a missing file."""
    return os.path.lexists(path)


def has_manifest(folder: Path) -> bool:
    """Whether ``folder`` holds a ``manifest.json`` entry (a suite, or a damaged one)."""
    return _present(folder / MANIFEST_FILE)


#: what to do about a suite file that does not read or does not match its manifest
WRITE_AGAIN = "write the suite again (`nnd-suites build`, or `nnd-suites export`)"


def read_parquet(path: Path, what: str, read: Callable[[pa.BufferReader], T] | None = None) -> T:
    """``read`` (``pq.read_schema``, ``read_metadata``; by default the table, read within the
    bounds of :func:`nnd_suites.infra.parquet.read_bounded_table`) of the parquet file of the
    suite's ``what`` at ``path``, handed its bytes: the file opened without blocking, checked on
    its descriptor, so a fifo (which pyarrow would wait on forever), a device or a folder in its
    place is an error at once, even one swapped in after a check; any error names the file.
    pyarrow reads it from memory: handed a Python file object, its threads go on calling it
    after ``read`` returns, and a process that ends just then aborts (exit status 134)."""
    try:
        buffer = parquet_buffer(path, f"{what} parquet file")
        return read(buffer) if read else read_bounded_table(buffer, path)
    except ParquetTooLargeError as exc:
        raise SuiteValidationError(str(exc)) from None
    except DataFileError as exc:
        raise SuiteValidationError(f"{exc}; rebuild the suite with `nnd-suites build`") from None
    except (OSError, pa.ArrowException, UnicodeDecodeError) as exc:
        fault = str(exc).rstrip(". ")  # pyarrow's sentences end in a period, before a ';'
        raise SuiteValidationError(f"{path}: unreadable {what}: {fault}; {WRITE_AGAIN}") from exc


def data_files(folder: Path) -> list[Path]:
    """The ``test-*.parquet`` shards of a suite folder, in order."""
    return sorted(folder.glob(DATA_GLOB))


def pairs_files(folder: Path) -> list[Path]:
    """The parquet files holding a suite's pairs: its shards, or an older suite's
    ``pairs.parquet``; an error names the folder when there are none, or both kinds."""
    shards, legacy = data_files(folder), folder / LEGACY_PAIRS_FILE
    if shards and _present(legacy):
        raise SuiteValidationError(
            f"{folder}: holds both {shards[0].name} and {LEGACY_PAIRS_FILE}, so which pairs "
            "are the suite's is unclear; rebuild the suite into a new folder"
        )
    if shards:
        return shards
    if _present(legacy):
        return [legacy]
    raise SuiteValidationError(
        f"{folder}: no pairs beside {MANIFEST_FILE} (expected {DATA_FILE}, or "
        f"{LEGACY_PAIRS_FILE} in a suite written by an older nnd-suites); rebuild the suite with "
        "`nnd-suites build`"
    )


def read_pairs_table(path: Path, manifest: SuiteManifest) -> pa.Table:
    """The pairs file at ``path`` read once: its schema checked against ``manifest``, then its
    table (bounded)."""
    return read_parquet(path, "pairs", lambda buffer: _checked_pairs(buffer, path, manifest))


def _checked_pairs(buffer: pa.BufferReader, path: Path, manifest: SuiteManifest) -> pa.Table:
    """The table of the pairs file at ``path`` (its bytes in ``buffer``), its schema checked
    against ``manifest`` first, a mismatch that an edit of the manifest explains named as that
    edit. Schema and rows come from the same bytes, so no file swapped in between the two can
    pass the check with the rows of another."""
    try:
        check_pairs_schema(path, manifest, pq.read_schema(buffer))
    except SuiteValidationError as exc:
        _name_edited_fields(manifest, path.parent, exc)
        raise
    buffer.seek(0)
    return read_bounded_table(buffer, path)


def check_pairs_schema(path: Path, manifest: SuiteManifest, actual: pa.Schema) -> None:
    """The file at ``path``, whose schema is ``actual``, must have the columns and types the
    manifest's fields declare, in order; only columns added since suites were first written
    (:data:`LATER_COLUMNS`) may be missing."""
    expected = pairs_arrow_schema(manifest.context_fields, manifest.breakdown_fields)
    wanted = [f for f in expected if f.name in actual.names or f.name not in LATER_COLUMNS]
    if [f.name for f in wanted] == actual.names and all(
        f.type.equals(actual.field(f.name).type) for f in wanted
    ):
        return
    found = {f.name: f.type for f in actual}
    types = {f.name: f.type for f in wanted}
    differences = [
        f"{name}: {found.get(name, 'missing')} (expected {types.get(name, 'no such column')})"
        for name in dict.fromkeys([*types, *found])
        if name not in found or name not in types or not found[name].equals(types[name])
    ]
    raise SuiteValidationError(
        f"{path}: schema does not match the manifest of suite {manifest.name!r} (context "
        f"fields {manifest.context_fields}, breakdown fields {manifest.breakdown_fields}): "
        + ("; ".join(differences) or "column order differs")
        + f"; {WRITE_AGAIN}"
    )


def read_suite_files(
    folder: Path,
) -> tuple[SuiteManifest, list[Pair], list[SuiteCandidate]]:
    """Manifest, pairs and candidates of a suite folder in either layout, each file's schema
    checked and any error naming the file (the caller validates the suite as a whole)."""
    if not has_manifest(folder):
        raise SuiteValidationError(
            f"{folder}: not a suite folder (no {MANIFEST_FILE}); build one with "
            "`nnd-suites build ADAPTER --out DIR`"
        )
    manifest = SuiteManifest.from_directory(folder)
    check_no_stray_data_files(folder)
    pairs: list[Pair] = []
    for path, rows in read_pair_rows(folder, manifest):
        pairs += pairs_from_rows(rows, str(path))
    return manifest, pairs, read_candidates(folder / CANDIDATES_FILE, manifest.format_version)


def read_pair_rows(
    folder: Path, manifest: SuiteManifest | None = None
) -> Iterator[tuple[Path, list[dict[str, Any]]]]:
    """Each file of a suite's pairs with its rows as stored; with ``manifest``, the file's schema
    is checked against it first, in the same read (as :func:`read_pairs_table` does)."""
    for path in pairs_files(folder):
        yield path, _rows(path, "pairs") if manifest is None else _pair_rows(path, manifest)


def _pair_rows(path: Path, manifest: SuiteManifest) -> list[dict[str, Any]]:
    # to_pylist within read_parquet: a text that is no UTF-8 is named there
    return read_parquet(
        path, "pairs", lambda buffer: _checked_pairs(buffer, path, manifest).to_pylist()
    )


def _name_edited_fields(manifest: SuiteManifest, folder: Path, cause: Exception) -> None:
    """A file that no longer matches its manifest because the manifest was edited (its
    context fields, say) is reported as that edit, which is what a user has to undo."""
    actual = compute_section_hashes(manifest, [], [])
    edited = [
        name
        for name, recorded in manifest.section_hashes.items()
        if name not in (PAIRS_SECTION, CANDIDATES_SECTION) and actual.get(name) != recorded
    ]
    if edited:
        raise SuiteValidationError(
            f"{folder / MANIFEST_FILE}: suite {manifest.name!r} edited after it was written: "
            f"{no_longer_matching(edited)} ({cause}); rebuild the suite instead of editing it"
        ) from cause


def no_longer_matching(sections: list[str]) -> str:
    """The edited ``sections`` (of :meth:`SuiteManifest.edited_sections`) in a sentence whose
    verb agrees with them: "the pairs no longer match", "manifest field 'name' no longer
    matches"."""
    data_sections = (PAIRS_SECTION, CANDIDATES_SECTION)
    named = [
        f"the {name}" if name in data_sections else f"manifest field {name!r}" for name in sections
    ]
    plural = len(sections) > 1 or sections[0] in data_sections
    return f"{', '.join(named)} no longer {'match' if plural else 'matches'} the recorded hashes"


def read_candidates(path: Path, format_version: str) -> list[SuiteCandidate]:
    """The annotated candidates of a suite folder, named in any error."""
    if not _present(path):
        raise SuiteValidationError(
            f"{path.parent}: no {CANDIDATES_FILE} (suite format {format_version}; suites keep "
            "their annotated candidates since format 2.1); rebuild the suite with "
            "`nnd-suites build`"
        )
    return candidates_from_rows(_rows(path, "candidates"), str(path))


def _rows(path: Path, what: str) -> list[dict[str, Any]]:
    return read_parquet(path, what, lambda file: read_bounded_table(file, path).to_pylist())


def check_no_stray_data_files(folder: Path) -> None:
    """Refuse a file that `datasets` would read as split data beside the suite's pairs (a
    ``test.parquet`` or ``backup/test-00000-of-00001.parquet`` copy): ``load_dataset(folder)``
    would then not be the suite that `validate` and `evaluate` read, and no count would say so."""
    pairs = [path.name for path in pairs_files(folder)]
    own = {MANIFEST_FILE, CANDIDATES_FILE, *pairs}
    if {entry.name for entry in folder.iterdir()} <= own:
        # The suite's files alone (what `build` writes): `datasets` reads its shards and nothing
        # else, and the 1 s import of datasets is spared.
        return
    # An older suite's pairs.parquet has no split name, so `datasets` reads every parquet file
    # of the folder as one split, its candidates with its pairs: as that release wrote it.
    legacy = pairs == [LEGACY_PAIRS_FILE]
    data = {*pairs, CANDIDATES_FILE} if legacy else set(pairs)
    stray = [
        (name, split)
        for split, names in dataset_split_files(folder).items()
        for name in names
        if name not in data
    ]
    if not stray:
        return
    shown = ", ".join(f"{folder / name} (split {split!r})" for name, split in stray[:5])
    more = f" and {len(stray) - 5} more" if len(stray) > 5 else ""
    it = "it" if len(stray) == 1 else "them"
    move = f"move {it} out of the suite folder"
    if any(name in own for name, _ in stray):  # only a card's data_files names these
        move = f"move the dataset card (README.md, .huggingface.yaml) naming {it} out of the folder"
    raise SuiteValidationError(
        f"{shown}{more}: `datasets.load_dataset({str(folder)!r})` would read {it} as split data "
        f"beside the suite's pairs ({', '.join(pairs)}), so the dataset would not be this "
        f"suite's pairs alone; {move}"
    )


def dataset_split_files(folder: Path) -> dict[str, list[str]]:
    """The files ``datasets.load_dataset(folder)`` reads as each split (of every config a card
    in the folder declares), relative to the folder: as `datasets` itself resolves them, offline
    and building nothing, so its rules (split names in file and folder names, sharded names, a
    card's ``data_files``, hidden files left out) are never guessed here."""
    # lazy: datasets takes 1 s to import, paid only for a folder holding more than the suite
    from datasets import config as datasets_config
    from datasets.data_files import DataFilesPatternsDict
    from datasets.exceptions import DatasetsError
    from datasets.load import dataset_module_factory

    base = folder.resolve()
    metadata = folder / datasets_config.REPOYAML_FILENAME
    if _present(metadata):  # opened by datasets as it is: a fifo there would wait forever
        try:
            check_regular_file(metadata, "dataset metadata file")
        except DataFileError as exc:
            raise SuiteValidationError(f"{exc}; move it out of the suite folder") from None
    found: dict[str, list[str]] = {}
    try:
        module = dataset_module_factory(str(base))
        for config in module.builder_configs_parameters.builder_configs or []:
            files = config.data_files or {}
            if isinstance(files, DataFilesPatternsDict):  # a card's patterns, resolved on load
                files = files.resolve(str(base / config.data_dir) if config.data_dir else str(base))
            for split, paths in files.items():
                found.setdefault(str(split), []).extend(
                    Path(os.path.relpath(path, base)).as_posix() for path in paths
                )
    except (DatasetsError, OSError, ValueError, RuntimeError, yaml.YAMLError) as exc:
        raise SuiteValidationError(
            f"{folder}: `datasets` cannot read this suite folder ({' '.join(str(exc).split())});"
            f" a suite folder holds {MANIFEST_FILE}, {CANDIDATES_FILE} and {DATA_GLOB}: move what"
            " else it holds out of it"
        ) from None
    return found
