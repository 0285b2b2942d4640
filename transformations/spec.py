"""Transformation specs as typed on the command line: ``NAME[:param=value,...]``."""

from __future__ import annotations

from nnd_suites.plugins.params import parse_plugin_spec
from nnd_suites.transformations.base import Transformation, get_transformation


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``typos:rate=0.05,seed=1`` into ``("typos", {"rate": "0.05", "seed": "1"})``."""
    return parse_plugin_spec("transformation", spec)


def make_transformation(spec: str | Transformation) -> Transformation:
    """An instance from a spec string (unknown names and parameters raise a clear error)."""
    if isinstance(spec, Transformation):
        return spec
    name, params = parse_spec(spec)
    return get_transformation(name)(**params)
