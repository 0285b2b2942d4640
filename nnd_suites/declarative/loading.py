"""Reading ``source.yaml``: the quality map's strict YAML loader (repeated keys, aliases refused;
the line of every key kept), the generated schema's models, and ``file:line`` in every error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from nnd_suites.declarative.model import ALLOWED_KEYS, SourceDeclaration
from nnd_suites.errors import DeclarationError, QualityMapError
from nnd_suites.infra.validation import user_errors
from nnd_suites.quality_map.loading import Lines, place, read_map_file, schema_advice


class Declared:
    """A validated declaration, where it lies, and the line of each of its keys."""

    def __init__(self, path: Path, spec: SourceDeclaration, lines: Lines) -> None:
        self.path, self.spec, self.lines = path, spec, lines

    def at(self, *keys: str | int) -> str:
        """``source.yaml:line`` of the deepest of ``keys`` whose line is known."""
        return place(str(self.path), self.lines, tuple(keys)).split(", at ")[0]


def load_declaration(path: Path) -> Declared:
    """``path`` parsed and validated; any fault -> a :class:`DeclarationError` at its line."""
    try:
        data, lines = read_map_file(path)
    except QualityMapError as exc:  # the same reader: re-worded for a source declaration
        text = str(exc).removeprefix("quality map ")
        raise DeclarationError(text.replace("cannot parse:", "cannot parse source.yaml:")) from None
    if not isinstance(data, dict):
        raise DeclarationError(f"{path}:1: expected a mapping of keys (name, file, group, ...)")
    try:
        spec = SourceDeclaration.model_validate(data)
    except ValidationError as exc:
        raise _schema_error(exc, data, str(path), lines) from None
    return Declared(path, spec, lines)


def _schema_error(exc: ValidationError, data: Any, origin: str, lines: Lines) -> DeclarationError:
    """One located, actionable error from pydantic's, naming the key at fault."""
    errors = user_errors(exc, data)  # a union's branch: the one that takes what was given
    first = errors[0]
    path = first["loc"]
    text = f"does not match the declarative-source schema: {schema_advice(first, ALLOWED_KEYS)}"
    others = len({e["loc"][:2] for e in errors}) - 1
    if others > 0:
        text += f" (and {others} more problem(s))"
    return DeclarationError(f"{place(origin, lines, path)}: {text}")
