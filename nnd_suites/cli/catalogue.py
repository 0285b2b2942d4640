"""A catalogue of everything that can be plugged in, for `nnd-suites list`.

Each plugin kind's registry is listed here once; heavy kinds (backends) by their declared
summaries, without importing torch.
"""

from __future__ import annotations

from collections.abc import Callable

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.infra.builtin_models import builtin_models
from nnd_suites.quality_map import QualityMap, builtin_quality_maps


def _adapters() -> dict[str, str]:
    return ADAPTERS.summaries(
        lambda cls: f"{cls.metadata.summary} ({ADAPTERS.origin(cls.name)}, {cls.definition})",
        broken=True,
    )


def _quality_maps() -> dict[str, str]:
    return {
        name: QualityMap.load(path).description.split(".")[0]
        for name, path in sorted(builtin_quality_maps().items())
    }


def _transformations() -> dict[str, str]:
    # lazy: each kind's registry loads when listed (`import nnd_suites` stays light)
    from nnd_suites.transformations import TRANSFORMATIONS

    return TRANSFORMATIONS.summaries(
        lambda cls: f"{cls.summary_line()} ({TRANSFORMATIONS.origin(cls.name)})", broken=True
    )


def _backends() -> dict[str, str]:
    # lazy: each kind's registry loads when listed (`import nnd_suites` stays light)
    from nnd_suites.evaluation.backend import BACKENDS

    # Lazy entries are listed by their declared summary: torch is not imported.
    return BACKENDS.summaries(
        lambda cls: f"{cls.metadata.summary} ({BACKENDS.origin(cls.name)})", broken=True
    )


def _slices() -> dict[str, str]:
    # lazy: each kind's registry loads when listed (`import nnd_suites` stays light)
    from nnd_suites.slices import SLICES

    return SLICES.summaries(
        lambda cls: f"{cls.metadata.summary} ({SLICES.origin(cls.name)})", broken=True
    )


def _scorers() -> dict[str, str]:
    # lazy: each kind's registry loads when listed (`import nnd_suites` stays light)
    from nnd_suites.evaluation.scorers import SCORERS

    return SCORERS.summaries(
        lambda cls: f"{cls.metadata.summary} ({SCORERS.origin(cls.name)})", broken=True
    )


CATALOGUE_SOURCES: dict[str, Callable[[], dict[str, str]]] = {
    "adapters": _adapters,
    "quality_maps": _quality_maps,
    "transformations": _transformations,
    "backends": _backends,
    "slices": _slices,
    "scorers": _scorers,
    "built_in_models": builtin_models,
}


def catalogue() -> dict[str, dict[str, str]]:
    return {kind: source() for kind, source in CATALOGUE_SOURCES.items()}


def broken_plugins() -> list[str]:
    """Where and why each plugin that failed to import did (`list` shows the others)."""
    # lazy, as each kind's listing above (`import nnd_suites` stays light)
    from nnd_suites.evaluation.backend import BACKENDS
    from nnd_suites.evaluation.scorers import SCORERS
    from nnd_suites.slices import SLICES
    from nnd_suites.transformations import TRANSFORMATIONS

    registries = (ADAPTERS, TRANSFORMATIONS, BACKENDS, SLICES, SCORERS)
    return [why for registry in registries for why in registry.broken().values()]
