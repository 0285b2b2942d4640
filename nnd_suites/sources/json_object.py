"""Read a file holding one JSON object (``{id: value, ...}``), with the line of every entry.

Releases often key their items by id in one object (``inputs.json``). Entries are decoded one
by one, so an adapter's error about a value can name the file, the line where it starts and its
key; a key written twice (which ``json.load`` would silently resolve to the last value) is an
error. As with a JSON array, a broken document cannot be resynchronised: its errors stop the build.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nnd_suites.errors import SourceFormatError
from nnd_suites.infra.reading import bounded_int
from nnd_suites.sources.log import ReadLog
from nnd_suites.sources.readers import (
    JSON_SPACE,
    NOT_JSON,
    SOURCE_JSON,
    _surrogate_error,
    read_text_lines,
)


class _Cursor:
    """A position in a JSON text and its line, advanced over whitespace and decoded values."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text, self.at, self.line, self.counted = path, text, 0, 1, 0
        self.skip_space()

    def skip_space(self) -> None:
        self.at = JSON_SPACE.match(self.text, self.at).end()
        self.line, self.counted = self.line + self.text.count("\n", self.counted, self.at), self.at

    def error(self, message: str) -> SourceFormatError:
        return SourceFormatError(str(self.path), self.line, f"{NOT_JSON}: {message}")

    def expect(self, mark: str, what: str) -> None:
        if not self.text.startswith(mark, self.at):
            raise self.error(f"expected {what}")
        self.at += 1
        self.skip_space()

    def value(self) -> Any:
        try:
            value, end = SOURCE_JSON.raw_decode(self.text, self.at)
        except json.JSONDecodeError as exc:
            raise SourceFormatError(str(self.path), exc.lineno, f"{NOT_JSON}: {exc.msg}") from None
        except ValueError as exc:  # an integer of thousands of digits, a key written twice
            raise self.error(str(exc)) from None
        except RecursionError:
            raise SourceFormatError(str(self.path), self.line, "JSON nested too deeply") from None
        error = _surrogate_error(self.text[self.at : end], value, self.path, self.line)
        if error is not None:
            raise error
        self.at = end
        self.skip_space()
        return value


def read_json_object(path: Path, log: ReadLog | None = None) -> Iterator[tuple[int, str, Any]]:
    """Yield (line where the entry starts, key, value) for each entry of a file holding one JSON
    object, in file order. Name both in errors: ``SourceFormatError(path, line, f"{key}: ...")``."""
    log = log or ReadLog()
    cursor = _Cursor(path, "\n".join(line for _, line in read_text_lines(path, log)))
    if not cursor.text.startswith("{", cursor.at):
        try:
            kind = type(json.loads(cursor.text, parse_int=bounded_int)).__name__
        except (ValueError, RecursionError) as exc:
            raise SourceFormatError(str(path), getattr(exc, "lineno", 1), NOT_JSON) from None
        raise SourceFormatError(str(path), cursor.line, f"expected a JSON object, got a {kind}")
    cursor.expect("{", "'{'")
    seen: dict[str, int] = {}
    closed = cursor.text.startswith("}", cursor.at)
    while not closed:
        line = cursor.line
        if not cursor.text.startswith('"', cursor.at):
            raise cursor.error("expected a key in double quotes")
        key = cursor.value()
        if key in seen:
            raise SourceFormatError(
                str(path), line, f"key {key!r} is written twice (first on line {seen[key]})"
            )
        seen[key] = line
        cursor.expect(":", "':' after the key")
        value = cursor.value()
        log.row(path, line)
        yield line, key, value
        closed = cursor.text.startswith("}", cursor.at)
        if not closed:
            cursor.expect(",", "',' or '}'")
    cursor.expect("}", "'}'")
    if cursor.at < len(cursor.text):
        raise cursor.error("extra data after the object")
