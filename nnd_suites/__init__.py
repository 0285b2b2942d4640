"""nnd-suites: Near-Negative Distinction test suites from human evaluations of generated text.

The packages, lowest layer first (each imports only those before it; ARCHITECTURE.md):
``errors``, ``infra``, ``sources``, ``records``, ``suite``, ``plugins``, ``statistics``,
``quality_map``, ``human``, ``builder``, then ``transformations`` and ``slices``, then ``adapters``,
``scaffold`` and ``hub``, then ``resolve``, ``evaluation`` and ``cli``. This module is the facade
over all of them.
"""

import importlib.metadata as _metadata

import lazy_loader

try:  # one version source: pyproject.toml, as installed
    __version__ = _metadata.version("nnd-suites")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"


# Imported when first asked for (PEP 562, through lazy_loader), so that `nnd-suites --help` and
# `import nnd_suites` stay light: the evaluator pulls in torch and transformers, and suites
# pyarrow, numpy and pydantic models.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "errors": [
            "NNDError",
            "QualityMapError",
            "SourceFormatError",
            "SuiteValidationError",
            "UnknownItemError",
        ],
        "builder.adapter": ["Adapter", "AdapterMetadata", "get_adapter", "register_adapter"],
        # builds into dataset folders too, through the Hub layer (datasets)
        "hub.building": ["build_suite"],
        "records.groups": ["Candidate", "Group"],
        "records.pairs": ["Pair", "PairCandidate"],
        "quality_map": ["QualityMap"],
        "suite": ["Suite", "SuiteManifest"],
        "resolve": ["load_suite"],
        "evaluation": ["evaluate"],
        "evaluation.multi": ["evaluate_models"],
        "evaluation.comparison": ["compare_reports"],
        "evaluation.verify": ["verify_suite", "place_in_verify"],
        "evaluation.baselines": ["baselines"],
        "evaluation.robustness": ["robustness"],
        # needs transformers (and accelerate to train)
        "evaluation.training": ["NNDCallback"],
    },
)
__all__ = sorted([*__all__, "__version__"])
