"""``KEY=VALUE`` items as typed on a command line, parsed one way everywhere, and the one check
that a repeatable option names each item once."""

from __future__ import annotations

from collections.abc import Iterable

from nnd_suites.errors import NNDError


def parse_key_values(items: Iterable[str], where: str, form: str) -> dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}``; values stay strings (a pydantic model
    converts them). A missing ``=``, an empty key or a key given twice is an error naming
    ``where`` (what the items belong to) and showing ``form`` (how to write them)."""
    parsed: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise NNDError(f"{where}: {item!r} is not KEY=VALUE (write {form})")
        if key in parsed:
            raise NNDError(f"{where}: {key!r} given twice ({parsed[key]!r} and {value!r})")
        parsed[key] = value.strip()
    return parsed


def require_unique(given: list[str], kind: str, option: str = "") -> None:
    """Each of ``given`` (scorers, suites, transformations, as their plugins write them) once:
    a repeat would be scored or applied twice. ``option`` names the flag in the message."""
    repeated = sorted({name for name in given if given.count(name) > 1})
    if repeated:
        flag = f" ({option})" if option else ""
        raise NNDError(f"{kind} {repeated[0]!r} is given twice{flag}; give each {kind} once")
