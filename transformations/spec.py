"""Transformation specs as typed on the command line: ``NAME[:param=value,...]``."""

from __future__ import annotations

from nnd_suites.errors import NNDError
from nnd_suites.key_values import parse_key_values
from nnd_suites.transformations.base import Transformation, get_transformation


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``typos:rate=0.05,seed=1`` into ``("typos", {"rate": "0.05", "seed": "1"})``.

    Values stay strings: the plugin's pydantic ``Params`` model converts and validates them.
    """
    name, _, rest = spec.strip().partition(":")
    if not name:
        raise NNDError(f"transformation spec {spec!r}: missing name; write NAME[:param=value,...]")
    items = filter(None, (part.strip() for part in rest.split(",")))
    params = parse_key_values(items, f"transformation spec {spec!r}", "NAME[:param=value,...]")
    return name, params


def make_transformation(spec: str | Transformation) -> Transformation:
    """An instance from a spec string (unknown names and parameters raise a clear error)."""
    if isinstance(spec, Transformation):
        return spec
    name, params = parse_spec(spec)
    return get_transformation(name)(**params)
