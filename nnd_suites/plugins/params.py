"""Typed plugin parameters, checked one way for every plugin kind.

Adapters (``Options``), transformations, slices and backends (``Params``) declare their
parameters as a pydantic model that refuses unknown keys; a bad value or an unknown key is a
:class:`~nnd_suites.errors.ParameterError` (a usage error) in one format, naming the plugin, each
bad parameter and the parameters it takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from nnd_suites.errors import NNDError, ParameterError
from nnd_suites.infra.key_values import parse_key_values

P = TypeVar("P", bound=BaseModel)


class PluginParams(BaseModel):
    """Base of a plugin's parameters: unknown keys are refused, values are validated."""

    # nan and inf: a bound refuses them for a wrong reason ("<= 1"), an unbounded one not at all
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def parse_params(kind: str, name: str, params: type[P], values: Mapping[str, Any]) -> P:
    """``params(**values)``, or a ParameterError naming ``kind name`` and every problem."""
    try:
        return params(**values)
    except ValidationError as exc:
        raise ParameterError(describe_params_error(kind, name, params, exc)) from exc


def describe_params_error(
    kind: str, name: str, params: type[BaseModel], exc: ValidationError
) -> str:
    """One clause per bad parameter, naming the plugin, the parameter and the accepted ones."""
    known = ", ".join(params.model_fields) or "(none)"
    problems = []
    for error in exc.errors():
        parameter = ".".join(str(part) for part in error["loc"]) or "?"
        if error["type"] == "extra_forbidden":
            problems.append(f"unknown parameter {parameter!r} (known: {known})")
        elif error["type"] == "missing":  # "Field required (got {})" said neither what nor how
            field = params.model_fields.get(parameter)
            about = f": {field.description}" if field is not None and field.description else ""
            problems.append(f"parameter {parameter!r} is required{about}")
        else:
            problems.append(f"parameter {parameter!r}: {error['msg']} (got {error['input']!r})")
    return f"{kind} {name}: " + "; ".join(problems)


def parse_plugin_spec(kind: str, spec: str) -> tuple[str, dict[str, str]]:
    """Split ``typos:rate=0.05,seed=1`` into ``("typos", {"rate": "0.05", "seed": "1"})``.

    Values stay strings: the plugin's pydantic parameters model converts and validates them.
    """
    if not isinstance(spec, str):
        raise NNDError(f"{kind} spec {spec!r}: not a string; write NAME[:param=value,...]")
    name, _, rest = spec.strip().partition(":")
    if not name:
        raise NNDError(f"{kind} spec {spec!r}: missing name; write NAME[:param=value,...]")
    items = filter(None, (part.strip() for part in rest.split(",")))
    params = parse_key_values(items, f"{kind} spec {spec!r}", "NAME[:param=value,...]")
    return name, params
