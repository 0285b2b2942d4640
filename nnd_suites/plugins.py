"""A catalogue of everything that can be plugged in, for `nnd-suites list`.

Other plugin kinds (transformations, backends) add themselves to ``CATALOGUE_SOURCES``.
"""

from __future__ import annotations

from collections.abc import Callable

from nnd_suites.adapter import ADAPTERS
from nnd_suites.quality_map import QualityMap, builtin_quality_maps


def _adapters() -> dict[str, str]:
    return {
        name: f"{cls.metadata.annotation_type}: {cls.metadata.task} ({ADAPTERS.origin(name)})"
        for name, cls in ADAPTERS.items()
    }


def _quality_maps() -> dict[str, str]:
    return {
        name: QualityMap.load(path).description.split(".")[0]
        for name, path in sorted(builtin_quality_maps().items())
    }


def _transformations() -> dict[str, str]:
    from nnd_suites.transformations import TRANSFORMATIONS

    return {
        name: f"{cls.summary_line()} ({TRANSFORMATIONS.origin(name)})"
        for name, cls in TRANSFORMATIONS.items()
    }


def _backends() -> dict[str, str]:
    from nnd_suites.evaluation import BACKENDS

    return {name: f"{cls.description} ({BACKENDS.origin(name)})" for name, cls in BACKENDS.items()}


CATALOGUE_SOURCES: dict[str, Callable[[], dict[str, str]]] = {
    "adapters": _adapters,
    "quality maps": _quality_maps,
    "transformations": _transformations,
    "backends": _backends,
}


def catalogue() -> dict[str, dict[str, str]]:
    return {kind: source() for kind, source in CATALOGUE_SOURCES.items()}
