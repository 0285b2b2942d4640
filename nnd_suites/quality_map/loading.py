"""Reading quality-map files: repeated keys refused, line numbers kept for error messages.

YAML and JSON both let a repeated key silently win (``tiers:`` twice inverts an order), so both
loaders refuse it. The YAML loader also records the line of every key and list item, so an error
found later (schema, cycle, unknown label) can point at ``file:line``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from nnd_suites.errors import QualityMapError
from nnd_suites.infra.reading import (
    DataFileError,
    load_yaml,
    parse_json,
    read_regular_bytes,
)
from nnd_suites.infra.strict_yaml import StrictYAML
from nnd_suites.infra.validation import user_errors
from nnd_suites.quality_map.model import ALLOWED_KEYS

#: a place in the map (keys and list indices from the top) -> its 1-based line
Lines = dict[tuple[str | int, ...], int]


def _paths(value: Any, node_lines: dict[int, dict[Any, int]], prefix: tuple = ()) -> Lines:
    found: Lines = {}
    lines = node_lines.get(id(value), {})
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        if key in lines:
            found[(*prefix, key)] = lines[key]
        if isinstance(child, (dict, list)):
            found.update(_paths(child, node_lines, (*prefix, key)))
    return found


def read_map_file(path: Path) -> tuple[Any, Lines]:
    """The parsed file and the line of each place in it; unparsable -> a located error."""
    try:
        data = read_regular_bytes(path, "quality map")
    except DataFileError as exc:
        raise QualityMapError(str(path), exc.reason) from None
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise QualityMapError(
            f"{path}:{line}", f"not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"
        ) from None
    if path.suffix == ".json":
        try:
            return parse_json(raw, str(path), unique_keys=True), {}
        except DataFileError as exc:
            where = f"{path}:{exc.line}" if exc.line else str(path)
            raise QualityMapError(where, f"cannot parse: {exc.reason}; fix the JSON") from None
    try:
        data, loader = load_yaml(raw, str(path), StrictYAML)
    except DataFileError as exc:
        where = f"{path}:{exc.line}" if exc.line else str(path)
        raise QualityMapError(where, exc.reason) from None
    lines = _paths(data, loader.node_lines) if isinstance(data, (dict, list)) else {}
    return data, lines


def place(origin: str, lines: Lines, path: tuple[str | int, ...]) -> str:
    """``file:line, at a.b`` for the deepest ``path`` prefix whose line is known."""
    line = next((lines[path[:n]] for n in range(len(path), 0, -1) if path[:n] in lines), None)
    where = f"{origin}:{line}" if line else origin
    return f"{where}, at {'.'.join(map(str, path))}" if path else where


def schema_advice(error: dict[str, Any], allowed_keys: Mapping[str, list[str]]) -> str:
    """What to do about one pydantic error of a YAML file our schemas read (a quality map, a
    ``source.yaml``); ``allowed_keys`` maps each mapping's key ("" at the top) to its keys."""
    kind, loc = error["type"], error["loc"]
    key = loc[-1] if loc else ""
    if kind == "extra_forbidden":
        named = error.get("pydantic_loc", loc)[:-1]  # a tagged union's tag names its keys
        owner = next((str(p) for p in reversed(named) if str(p) in allowed_keys), "")
        allowed = ", ".join(allowed_keys[owner])
        return f"unknown key {key!r}; remove it or fix the spelling (allowed: {allowed})"
    if kind == "missing":
        return f"missing required key {key!r}; add it"
    if kind == "union_tag_not_found":
        return "a rating_rule needs a 'kind'; add one"
    if kind == "union_tag_invalid":
        return f"unknown kind {error['ctx']['tag']!r}; use one of {error['ctx']['expected_tags']}"
    message = error["msg"].removeprefix("Value error, ")
    given = error.get("input")
    if key == "[key]" and isinstance(given, int | float) and kind == "string_type":
        # YAML 1.1 reads an unquoted 0, 1.5, yes or off as a number or a boolean
        if isinstance(given, bool):
            return (
                f"a key here is a text, but YAML reads it unquoted as the boolean "
                f"{str(given).lower()} (so it reads yes, no, on, off, true and false); quote the "
                'key as written ("yes": ...)'
            )
        return (
            f"key {given} is a text here, but YAML reads it unquoted as a number; quote the "
            f'keys ("{given}": ...)'
        )
    if isinstance(given, bool) and kind in ("string_type", "float_type", "int_type", "union"):
        # YAML 1.1 reads an unquoted yes, no, on, off, true or false as a boolean
        return (
            f"{message}: YAML reads an unquoted yes, no, on, off, true or false as a boolean; "
            "quote it ('yes')"
        )
    return message if kind == "value_error" else f"{message}; fix the value"


def schema_error(exc: ValidationError, data: Any, origin: str, lines: Lines) -> QualityMapError:
    """One located, actionable error from pydantic's, naming the key at fault."""
    errors = user_errors(exc, data)  # by the keys of the file, a union's other branches aside
    first = errors[0]
    text = f"does not match the quality-map schema: {schema_advice(first, ALLOWED_KEYS)}"
    if len(errors) > 1:
        text += f" (and {len(errors) - 1} more problem(s))"
    return QualityMapError(place(origin, lines, first["loc"]), text)
