"""Suites: the manifest (``manifest.py``), the pairs table (``table.py``), the ``Suite`` class
(``suite.py``), its annotated candidates (``candidates.py``), the one on-disk layout and its
reader (``storage.py``: what `build` writes is an exported config) and what a user may call a
suite (``resolve.py``: folders, built-in names, exports, the Hub)."""

from nnd_suites.suite.candidates import CANDIDATES_FILE, SuiteCandidate
from nnd_suites.suite.manifest import (
    MANIFEST_FILE,
    AdapterInfo,
    BuildCounts,
    QualityMapInfo,
    SkippedItems,
    SourceFile,
    SuiteManifest,
    TransformationInfo,
    export_json_schemas,
)
from nnd_suites.suite.storage import (
    DATA_FILE,
    DATA_GLOB,
    LEGACY_PAIRS_FILE,
    SPLIT,
    has_manifest,
    read_pair_rows,
    suite_features,
)
from nnd_suites.suite.suite import Suite
from nnd_suites.suite.table import pair_rows, pairs_arrow_schema

__all__ = [
    "CANDIDATES_FILE",
    "DATA_FILE",
    "DATA_GLOB",
    "LEGACY_PAIRS_FILE",
    "MANIFEST_FILE",
    "SPLIT",
    "AdapterInfo",
    "BuildCounts",
    "QualityMapInfo",
    "SkippedItems",
    "SourceFile",
    "Suite",
    "SuiteCandidate",
    "SuiteManifest",
    "TransformationInfo",
    "export_json_schemas",
    "has_manifest",
    "pair_rows",
    "pairs_arrow_schema",
    "read_pair_rows",
    "suite_features",
]
