"""Readers of annotation files (JSON Lines, JSON arrays, tab-separated) with a line for every error.

Every reader reports each row it hands out to the :class:`ReadLog` (``log.row``), and every row it
cannot read to ``log.unreadable`` (``log.malformed``, or an error where the adapter gathers rows
per output): a row is either handed to the adapter or recorded, never dropped.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from nnd_suites.errors import SourceFormatError
from nnd_suites.infra.formatting import clip
from nnd_suites.infra.reading import (
    MAX_NUMBER,
    DataFileError,
    Overflowing,
    bounded_float,
    bounded_int,
    has_lone_surrogate,
    open_regular_file,
    unique_keys_object,
)
from nnd_suites.sources.compressed import is_gzip, read_gzip_text_lines
from nnd_suites.sources.lines import ItemLine, not_decodable, numbered_lines
from nnd_suites.sources.log import ReadLog

#: csv refuses fields over 131,072 characters by default; long documents are real data.
FIELD_SIZE_LIMIT = 64 * 1024 * 1024
NOT_JSON = "not a JSON document"
JSON_SPACE = re.compile(r"[ \t\n\r]*")


class _StrictTabs(csv.Dialect):
    """Tab-separated, quotes only around whole fields: ``"x"y`` is an error, not ``xy``."""

    delimiter = "\t"
    quotechar = '"'
    doublequote = True
    skipinitialspace = False
    lineterminator = "\n"
    quoting = csv.QUOTE_MINIMAL
    strict = True


def read_text_lines(path: Path, log: ReadLog | None = None) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line without its end-of-line) and nothing else stripped.
    A ``.gz`` file is decompressed as it is read (:mod:`nnd_suites.sources.compressed`)."""
    if log is not None:
        log.note_file(path)
    try:
        fd = open_regular_file(path, "source file")  # /dev/zero would be read forever
    except DataFileError as exc:
        raise SourceFormatError(str(path), None, exc.reason) from None
    if is_gzip(path):
        os.close(fd)
        yield from read_gzip_text_lines(path)
        return
    try:
        with open(fd, encoding="utf-8-sig", newline="") as handle:
            yield from numbered_lines(handle, path)
    except UnicodeDecodeError:
        with open(path, "rb") as stream:
            raise not_decodable(path, stream) from None


def _surrogate_error(text: str, value: Any, path: Path, line: int) -> SourceFormatError | None:
    if has_lone_surrogate(text, value):
        return SourceFormatError(
            str(path),
            line,
            "a text holds a lone UTF-16 surrogate escape (e.g. \\ud800), not valid Unicode",
            "fix the escape or remove the row",
        )
    return None


#: JSON as annotation rows are read: integers bounded, and a key written twice in one object is
#: an error (the last value would silently win, and could turn a rating around).
SOURCE_JSON = json.JSONDecoder(
    parse_int=bounded_int, parse_float=bounded_float, object_pairs_hook=unique_keys_object
)


def read_jsonl(path: Path, log: ReadLog | None = None) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed object) for each non-blank line of a JSON Lines file."""
    log = log or ReadLog()
    for number, line in read_text_lines(path, log):
        if not line.strip(" \t\r\n"):  # JSON's whitespace only: "\x85" is not a blank line
            continue
        try:
            value = SOURCE_JSON.decode(line)
        except json.JSONDecodeError as exc:
            log.unreadable(
                SourceFormatError(
                    str(path), number, f"invalid JSON: {exc.msg}", "fix or remove the line"
                )
            )
            continue
        except ValueError as exc:  # an integer of thousands of digits, a key written twice
            log.unreadable(SourceFormatError(str(path), number, f"invalid JSON: {exc}"))
            continue
        except RecursionError:
            log.unreadable(SourceFormatError(str(path), number, "JSON nested too deeply"))
            continue
        error = _surrogate_error(line, value, path, number)
        if error is not None:
            log.unreadable(error)
            continue
        log.row(path, number)
        yield number, value


def read_json_array(path: Path, log: ReadLog | None = None) -> Iterator[tuple[int, Any]]:
    """Yield (line where it starts, item) for each item of a file holding one JSON list (an
    :class:`ItemLine` where items share it); items are decoded one by one, and a broken document
    cannot be resynchronised, so its errors stop the build even with ``skip_malformed``."""
    log = log or ReadLog()
    text = "\n".join(line for _, line in read_text_lines(path, log))
    position = JSON_SPACE.match(text).end()
    if not text.startswith("[", position):
        try:
            kind = type(json.loads(text, parse_int=bounded_int)).__name__
        except (ValueError, RecursionError) as exc:
            raise SourceFormatError(str(path), getattr(exc, "lineno", 1), NOT_JSON) from None
        raise SourceFormatError(str(path), 1, f"expected a JSON list of items, got a {kind}")
    position = JSON_SPACE.match(text, position + 1).end()
    line, counted, index, shares_last, closed = 1, 0, 0, False, text.startswith("]", position)
    while not closed:
        line, counted = line + text.count("\n", counted, position), position
        try:
            item, end = SOURCE_JSON.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise SourceFormatError(str(path), exc.lineno, f"{NOT_JSON}: {exc.msg}") from None
        except ValueError as exc:  # an integer of thousands of digits, a key written twice
            raise SourceFormatError(str(path), line, f"{NOT_JSON}: {exc}") from None
        except RecursionError:
            raise SourceFormatError(str(path), line, "JSON nested too deeply") from None
        after = JSON_SPACE.match(text, end).end()
        closed = text.startswith("]", after)
        if not closed and not text.startswith(",", after):
            where = line + text.count("\n", counted, after)
            raise SourceFormatError(str(path), where, f"{NOT_JSON}: expected ',' or ']'")
        position = JSON_SPACE.match(text, after + 1).end()
        shares_next = not closed and text.find("\n", counted, position) < 0
        at = ItemLine(line, index) if shares_last or shares_next else line
        index, shares_last = index + 1, shares_next
        error = _surrogate_error(text[counted:end], item, path, at)
        if error is not None:
            raise error
        log.row(path, at)
        yield at, item
    if position < len(text):
        where = line + text.count("\n", counted, position)
        raise SourceFormatError(str(path), where, f"{NOT_JSON}: extra data after the list")


def read_tsv(
    path: Path,
    *,
    quoted: bool = True,
    required: tuple[str, ...] = (),
    may_be_empty: tuple[str, ...] = (),
    optional_trailing: tuple[str, ...] = (),
    log: ReadLog | None = None,
    refused: Callable[[SourceFormatError, dict[str, str], bool], None] | None = None,
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, {column: value}) for each row of a tab-separated file with a header.

    Rows are never stripped before splitting (an empty trailing column is a real column).
    ``required`` columns must be in the header and non-blank in every row, unless listed in
    ``may_be_empty``. ``optional_trailing`` columns may be missing at the end of a row (files
    with or without them). A header naming a column twice, a quote inside a field and a quoted
    field running over the end of its line are errors: each would silently change the values.
    ``refused(error, row, split)`` is told of a row left out (with ``--skip-malformed``) for its
    blank fields or its number of fields, for an adapter that gathers rows to leave out what the
    row was part of: ``split`` is False when the row's fields did not match the header's columns
    (``row`` then holds its leading fields by position, which an adapter may only trust where it
    can check them). Without ``refused``, such a row goes to ``log.unreadable``.
    """
    log = log or ReadLog()
    csv.field_size_limit(max(csv.field_size_limit(), FIELD_SIZE_LIMIT))
    reader = csv.reader(
        (line for _, line in read_text_lines(path, log)),
        _StrictTabs,
        quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE,
    )
    try:
        header = next(reader)
    except StopIteration:
        raise SourceFormatError(str(path), 1, "empty file: expected a header row") from None
    except csv.Error as exc:
        raise SourceFormatError(str(path), 1, f"unreadable header: {exc}") from None
    if reader.line_num != 1:
        raise SourceFormatError(
            str(path), 1, f"the header runs to line {reader.line_num}", "an unbalanced quote"
        )
    _check_header(path, header, required)
    must_fill = [name for name in required if name not in may_be_empty]
    width = len(header)
    trailing = [name for name in optional_trailing if name in header]
    min_width = (
        width - len(trailing) if trailing and header[-len(trailing) :] == trailing else width
    )
    while True:
        start = reader.line_num + 1
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            span = f" (lines {start} to {reader.line_num})" if reader.line_num > start else ""
            log.unreadable(
                SourceFormatError(
                    str(path),
                    start,
                    f"unreadable row{span}: {exc}",
                    "check quotes (a source.yaml reads quotes as text with file.quoting: none)",
                )
            )
            continue
        number = reader.line_num
        if not fields or fields == [""]:
            continue
        problem = _row_problem(fields, start, number, width, min_width)
        if problem is not None:
            error = SourceFormatError(str(path), start, *problem)
            if refused is None or number != start:  # a line of its own, cut short or too long
                log.unreadable(error)
            else:
                log.malformed(error)
                refused(error, dict(zip(header, fields, strict=False)), False)
            continue
        row = dict(zip(header, fields + [""] * (width - len(fields)), strict=True))
        empty = [name for name in must_fill if not row[name].strip()]
        if empty:
            error = SourceFormatError(
                str(path), start, f"empty field(s) {empty}", "required: fill them or remove the row"
            )
            log.malformed(error)
            if refused is not None:
                refused(error, row, True)
            continue
        log.row(path, number)
        yield number, row


def _check_header(path: Path, header: list[str], required: tuple[str, ...]) -> None:
    first: dict[str, int] = {}
    for position, name in enumerate(header, start=1):
        if name in first:
            raise SourceFormatError(
                str(path),
                1,
                f"column {name!r} appears twice in the header (columns {first[name]} and "
                f"{position})",
                "rename or remove one: a repeated name would hide the other column's values",
            )
        first[name] = position
    missing = [name for name in required if name not in header]
    if missing:  # each name cut: another format's first line is one long "column"
        shown = [name if len(name) <= 48 else f"{name[:48]}..." for name in header]
        raise SourceFormatError(
            str(path), 1, f"missing required column(s) {missing}", f"the header has {shown}"
        )


def _row_problem(
    fields: list[str], start: int, end: int, width: int, min_width: int
) -> tuple[str, str] | None:
    """(message, hint) when a row cannot be taken as it is."""
    if end != start:  # a quote opened a field that only closes lines later
        return (
            f"quoted field runs from line {start} to line {end}",
            "an unbalanced quote: quote the whole field and double quotes inside it",
        )
    if not min_width <= len(fields) <= width:
        return (
            f"row has {len(fields)} tab-separated fields, expected {width}"
            + (f" (or {min_width})" if min_width != width else ""),
            "check for stray or missing tabs in this row",
        )
    return None


def require_fields(
    obj: Any,
    fields: tuple[str, ...],
    path: Path,
    line: int | None,
    what: str,
    *,
    lists: tuple[str, ...] = (),
    texts: tuple[str, ...] = (),
) -> None:
    """Raise a SourceFormatError naming the line when ``obj`` lacks a required field, or when
    one of the fields named in ``lists`` is not a JSON list, or one in ``texts`` not a JSON
    string (``str(None)`` would make a system called "None")."""
    if not isinstance(obj, dict):
        raise SourceFormatError(
            str(path), line, f"{what} must be a JSON object, got {type(obj).__name__}"
        )
    missing = [name for name in fields if name not in obj]
    if missing:
        raise SourceFormatError(
            str(path),
            line,
            f"{what} is missing required field(s) {missing}",
            f"it has {sorted(obj)}",
        )
    for name in lists:
        if not isinstance(obj[name], list):
            got = type(obj[name]).__name__
            raise SourceFormatError(
                str(path), line, f"{what}: {name!r} must be a JSON list, got {got}"
            )
    for name in texts:
        if not isinstance(obj[name], str):
            shown = "null" if obj[name] is None else type(obj[name]).__name__
            raise SourceFormatError(
                str(path), line, f"{what}: {name!r} must be a JSON string, got {shown}"
            )


#: 4,5 or -0,25: a number as locales with a decimal comma write it
DECIMAL_COMMA = re.compile(r"[-+]?\d*,\d+")


def read_number(value: str | float) -> float:
    """``value`` as a number, the one reading of every numeric cell and credit level: text is
    NFKC-normalised and stripped first, so full-width digits, signs and points (``１``, ``－``,
    ``．``) read as their ASCII forms whichever of them a cell mixes, and negative zero is zero
    (a credit ``-0`` is the level ``0``, not one of its own). ValueError (or OverflowError) if
    it is no number; ``nan`` and ``inf`` are returned for the caller to refuse."""
    if isinstance(value, str):
        value = unicodedata.normalize("NFKC", value).strip()
    return float(value) + 0.0  # -0.0 + 0.0 is 0.0


def parse_number(
    value: str | float,
    path: Path,
    line: int | None,
    column: str | None = None,
    *,
    key: str | None = None,
    low: float | None = None,
    high: float | None = None,
) -> float:
    """``value`` (a TSV cell's text, or a JSON number or string) as a finite number within
    [low, high] (and of magnitude at most :data:`MAX_NUMBER`), or a file:line error naming the
    ``column`` (TSV) or the ``key`` path (JSON, e.g. ``"ratings.w1.fluency"``) when given."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        number = math.nan  # true is not 1, and a list or null is no number
    else:
        try:
            number = read_number(value)
        except (ValueError, OverflowError):
            number = math.nan
    where = f"column {column!r}: " if column is not None else f"{key}: " if key else ""
    shown = clip(repr(value) if isinstance(value, str) else json.dumps(value, default=repr))
    aside = ""
    if isinstance(value, Overflowing):  # as the file writes it ('1e400'), not Infinity
        shown = value.written
    # a number too large for a float ('1e400'), not 'inf' written out: a number, beyond bounds
    overflows = (
        math.isinf(number) and "inf" not in unicodedata.normalize("NFKC", str(value)).casefold()
    )
    if not (math.isfinite(number) or overflows):
        if isinstance(value, str) and DECIMAL_COMMA.fullmatch(value.strip()):
            aside = f" (a decimal comma is not read: write {value.strip().replace(',', '.')})"
        problem = "is not a number"
    elif abs(number) > MAX_NUMBER:
        problem = f"is beyond {MAX_NUMBER:g} in magnitude: no rating"
        aside = " (it overflows a float)" if overflows else ""
    elif (low is not None and number < low) or (high is not None and number > high):
        bounds = f"[{-math.inf if low is None else low:g}, {math.inf if high is None else high:g}]"
        problem = f"out of range {bounds}"
    else:
        return number
    # skipped rows count under one reason whatever their values (each example shows its own)
    raise SourceFormatError(
        str(path),
        line,
        f"{where}{shown} {problem}{aside}",
        counted_as=f"{where}value {problem}",
        value=shown,
    )
