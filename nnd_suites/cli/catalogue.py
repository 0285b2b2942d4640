"""A catalogue of everything that can be plugged in, for `nnd-suites list`.

Each plugin kind's registry is listed here once; heavy kinds (backends) by their declared
summaries, without importing torch.
"""

from __future__ import annotations

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.infra.builtin_models import builtin_models
from nnd_suites.plugins.registry import Registry
from nnd_suites.quality_map import QualityMap, builtin_quality_maps


def _registries() -> dict[str, Registry]:
    """Each plugin kind's registry by the name `list` gives the kind, in its order."""
    # lazy: each kind's registry loads when listed (`import nnd_suites` stays light)
    from nnd_suites.evaluation.backend import BACKENDS
    from nnd_suites.evaluation.scorers import SCORERS
    from nnd_suites.slices import SLICES
    from nnd_suites.transformations import TRANSFORMATIONS

    return {
        "adapters": ADAPTERS,
        "transformations": TRANSFORMATIONS,
        "backends": BACKENDS,
        "slices": SLICES,
        "scorers": SCORERS,
    }


def _line(registry: Registry, cls: type) -> str:
    """A plugin's line: its summary (a transformation's with its parameters' defaults) and
    where it comes from (an adapter's with its definition)."""
    summary = cls.summary_line() if registry.kind == "transformation" else cls.metadata.summary
    where = registry.origin(cls.name) + (f", {cls.definition}" if registry is ADAPTERS else "")
    return f"{summary} ({where})"


def catalogue() -> dict[str, dict[str, str]]:
    # Lazy entries are listed by their declared summary: torch is not imported.
    plugins = {
        kind: registry.summaries(lambda cls, registry=registry: _line(registry, cls), broken=True)
        for kind, registry in _registries().items()
    }
    quality_maps = {
        name: QualityMap.load(path).description.split(".")[0]
        for name, path in sorted(builtin_quality_maps().items())
    }
    return {
        "adapters": plugins.pop("adapters"),
        "quality_maps": quality_maps,
        **plugins,
        "built_in_models": builtin_models(),
    }


def broken_plugins() -> list[str]:
    """Where and why each plugin that failed to import did (`list` shows the others)."""
    return [why for registry in _registries().values() for why in registry.broken().values()]
