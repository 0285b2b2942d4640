"""Transformation plugins: normalisations and perturbations that rewrite a suite into a child suite.

Each built-in plugin is a folder here with its class, a README.md and an examples.json that the
test harness runs (one test case per plugin). Third-party packages register theirs through the
``nnd_suites.transformations`` entry-point group, like adapters.
"""

import lazy_loader

# Each name is imported when first used (PEP 562, through lazy_loader): `nnd-suites list` reads
# the registry without loading the suite model that applying a transformation needs (pyarrow).
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "apply": ["child_suite_name", "is_degenerate", "normalize_suite", "transform_suite"],
        "base": [
            "TRANSFORMATIONS",
            "SeededParams",
            "Transformation",
            "TransformationMetadata",
            "TransformationParams",
            "derive_rng",
            "make_transformation",
            "parse_spec",
            "register_transformation",
        ],
    },
)
