"""Suites: the manifest (``manifest.py``), the pairs table (``table.py``), the ``Suite`` class
(``suite.py``), its annotated candidates (``candidates.py``) and what a user may call a suite
(``resolve.py``: folders, built-in names, Hub)."""

from nnd_suites.suite.candidates import CANDIDATES_FILE, SuiteCandidate
from nnd_suites.suite.manifest import (
    FORMAT_VERSION,
    MANIFEST_FILE,
    AdapterInfo,
    BuildCounts,
    QualityMapInfo,
    SkippedItems,
    SourceFile,
    SuiteCounts,
    SuiteManifest,
    TransformationInfo,
    export_json_schemas,
)
from nnd_suites.suite.suite import Suite, breakdown_counts, pair_counts, read_candidates
from nnd_suites.suite.table import (
    PAIRS_FILE,
    pair_rows,
    pairs_arrow_schema,
    pairs_from_rows,
    pairs_to_table,
)

__all__ = [
    "CANDIDATES_FILE",
    "FORMAT_VERSION",
    "MANIFEST_FILE",
    "PAIRS_FILE",
    "AdapterInfo",
    "BuildCounts",
    "QualityMapInfo",
    "SkippedItems",
    "SourceFile",
    "Suite",
    "SuiteCandidate",
    "SuiteCounts",
    "SuiteManifest",
    "TransformationInfo",
    "breakdown_counts",
    "export_json_schemas",
    "pair_counts",
    "pair_rows",
    "pairs_arrow_schema",
    "pairs_from_rows",
    "pairs_to_table",
    "read_candidates",
]
