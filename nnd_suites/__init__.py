"""nnd-suites: Near-Negative Distinction test suites from human evaluations of generated text."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

from .adapter import Adapter, AdapterMetadata, get_adapter
from .build import build_suite
from .errors import (
    NNDError,
    QualityMapError,
    SourceFormatError,
    SuiteValidationError,
    UnknownItemError,
)
from .groups import Candidate, Group
from .pairs import Pair, PairCandidate
from .quality_map import QualityMap
from .suite import Suite, SuiteManifest
from .suites import load_suite

__all__ = [
    "Adapter",
    "AdapterMetadata",
    "Candidate",
    "Group",
    "NNDError",
    "Pair",
    "PairCandidate",
    "QualityMap",
    "QualityMapError",
    "SourceFormatError",
    "Suite",
    "SuiteManifest",
    "SuiteValidationError",
    "UnknownItemError",
    "__version__",
    "build_suite",
    "get_adapter",
    "load_suite",
]


def __getattr__(name: str) -> Any:
    # The evaluator pulls in torch and transformers: import it only when asked for.
    if name == "evaluate":
        from .evaluation import evaluate

        return evaluate
    raise AttributeError(f"module 'nnd_suites' has no attribute {name!r}")
