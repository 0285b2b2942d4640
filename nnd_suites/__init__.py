"""nnd-suites: Near-Negative Distinction test suites from human evaluations of generated text.

The packages, lowest layer first (each imports only those before it; ARCHITECTURE.md):
``errors``, ``infra``, ``sources``, ``records``, ``suite``, ``plugins``, ``statistics``,
``quality_map``, ``human``, ``build``, then ``transformations`` and ``slices``, then ``adapters``,
``scaffold`` and ``hub``, then ``resolve``, ``evaluation`` and ``cli``. This module is the facade
over all of them.
"""

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
    "get_adapter",
    "load_suite",
    "register_adapter",
]


# Imported when first asked for, so that `nnd-suites --help` and `import nnd_suites` stay light:
# the evaluator pulls in torch and transformers, and suites pyarrow, numpy and pydantic models.
_LAZY = {
    "Adapter": "nnd_suites.build.adapter",
    "AdapterMetadata": "nnd_suites.build.adapter",
    "get_adapter": "nnd_suites.build.adapter",
    "register_adapter": "nnd_suites.build.adapter",
    # builds into dataset folders too, through the Hub layer (datasets)
    "build_suite": "nnd_suites.hub.building",
    "Candidate": "nnd_suites.records.groups",
    "Group": "nnd_suites.records.groups",
    "Pair": "nnd_suites.records.pairs",
    "PairCandidate": "nnd_suites.records.pairs",
    "QualityMap": "nnd_suites.quality_map",
    "Suite": "nnd_suites.suite",
    "SuiteManifest": "nnd_suites.suite",
    "load_suite": "nnd_suites.resolve",
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
