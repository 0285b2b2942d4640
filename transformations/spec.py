"""Transformation specs as typed on the command line: ``NAME[:param=value,...]``."""

from __future__ import annotations

from nnd_suites.errors import NNDError
from nnd_suites.transformations.base import Transformation, get_transformation


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``typos:rate=0.05,seed=1`` into ``("typos", {"rate": "0.05", "seed": "1"})``.

    Values stay strings: the plugin's pydantic ``Params`` model converts and validates them.
    """
    name, _, rest = spec.strip().partition(":")
    if not name:
        raise NNDError(f"transformation spec {spec!r}: missing name; write NAME[:param=value,...]")
    params: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise NNDError(
                f"transformation spec {spec!r}: {item!r} is not param=value "
                "(write NAME[:param=value,...])"
            )
        if key in params:
            raise NNDError(f"transformation spec {spec!r}: parameter {key!r} given twice")
        params[key] = value.strip()
    return name, params


def make_transformation(spec: str | Transformation) -> Transformation:
    """An instance from a spec string (unknown names and parameters raise a clear error)."""
    if isinstance(spec, Transformation):
        return spec
    name, params = parse_spec(spec)
    return get_transformation(name)(**params)
