"""nnd-suites: Near-Negative Distinction test suites from human evaluations of generated text."""

import importlib.metadata as _metadata

try:  # one version source: pyproject.toml, as installed
    __version__ = _metadata.version("nnd-suites")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

from nnd_suites.errors import (
    NNDError,
    QualityMapError,
    SourceFormatError,
    SuiteValidationError,
    UnknownItemError,
)

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
    "register_adapter",
]


# Imported when first asked for, so that `nnd-suites --help` and `import nnd_suites` stay light:
# the evaluator pulls in torch and transformers, and suites pyarrow, numpy and pydantic models.
_LAZY = {
    "Adapter": "nnd_suites.adapter",
    "AdapterMetadata": "nnd_suites.adapter",
    "get_adapter": "nnd_suites.adapter",
    "register_adapter": "nnd_suites.adapter",
    "build_suite": "nnd_suites.build",
    "Candidate": "nnd_suites.groups",
    "Group": "nnd_suites.groups",
    "Pair": "nnd_suites.pairs",
    "PairCandidate": "nnd_suites.pairs",
    "QualityMap": "nnd_suites.quality_map",
    "Suite": "nnd_suites.suite",
    "SuiteManifest": "nnd_suites.suite",
    "load_suite": "nnd_suites.suite.resolve",
    "evaluate": "nnd_suites.evaluation",
    "evaluate_models": "nnd_suites.evaluation.multi",
    "compare_reports": "nnd_suites.evaluation.comparison",
    "verify_suite": "nnd_suites.evaluation.verify",
    "place_in_verify": "nnd_suites.evaluation.verify",
    "baselines": "nnd_suites.evaluation.baselines",
    "robustness": "nnd_suites.evaluation.robustness",
    "NNDCallback": "nnd_suites.evaluation.training",  # needs transformers (and accelerate to train)
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        # lazy attribute (PEP 562): loads on first use
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'nnd_suites' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public API, eager and lazy names (not this module's helpers and imports)."""
    return sorted({*__all__, *_LAZY})
