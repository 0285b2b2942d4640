"""Transformation plugins: normalisations and perturbations that rewrite a suite into a child suite.

Each built-in plugin is a folder here with its class, a README.md and an examples.json that the
test harness runs (one test case per plugin). Third-party packages register theirs through the
``nnd_suites.transformations`` entry-point group, like adapters.
"""

from __future__ import annotations

from nnd_suites.transformations.apply import (
    child_suite_name,
    is_degenerate,
    normalize_suite,
    transform_suite,
)
from nnd_suites.transformations.base import (
    TRANSFORMATIONS,
    SeededParams,
    Transformation,
    TransformationMetadata,
    TransformationParams,
    derive_rng,
    get_transformation,
    register_transformation,
)
from nnd_suites.transformations.spec import make_transformation, parse_spec

__all__ = [
    "TRANSFORMATIONS",
    "SeededParams",
    "Transformation",
    "TransformationMetadata",
    "TransformationParams",
    "child_suite_name",
    "derive_rng",
    "get_transformation",
    "is_degenerate",
    "make_transformation",
    "normalize_suite",
    "parse_spec",
    "register_transformation",
    "transform_suite",
]
