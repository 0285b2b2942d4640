"""The rows of a declared table, through the shared readers (line numbers, ``--skip-malformed``,
size bounds), with the declared filters applied and every cell looked up by its column."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nnd_suites.declarative.loading import Declared
from nnd_suites.declarative.model import Column, Fixed
from nnd_suites.errors import DeclarationError, SourceFormatError
from nnd_suites.infra.formatting import clip
from nnd_suites.records.groups import first_spelling
from nnd_suites.sources import ReadLog, read_json_array, read_jsonl, read_tsv
from nnd_suites.sources.delimited import read_csv

Row = dict[str, Any]
MISSING = object()


def table_rows(declared: Declared, path: Path, log: ReadLog) -> Iterator[tuple[int, Row]]:
    """(line, row) of every row the filters keep; the others are counted by reason."""
    spec = declared.spec.file
    if spec.format == "csv":
        csv_options = {"encoding": spec.encoding, "delimiter": spec.delimiter}
        rows: Iterator[tuple[int, Any]] = read_csv(path, log, **csv_options)
    elif spec.format == "tsv":
        rows = read_tsv(path, quoted=spec.quoting == "csv", log=log)
    elif spec.format == "jsonl":
        rows = read_jsonl(path, log)
    else:
        rows = read_json_array(path, log)
    for line, row in rows:
        if not isinstance(row, dict):
            log.unreadable(
                SourceFormatError(
                    str(path), line, f"a row must be a JSON object, got {type(row).__name__}"
                )
            )
            continue
        try:
            left_out = next(
                (
                    rule
                    for index, rule in enumerate(declared.spec.filters)
                    if not rule.keeps(_filter_text(declared, row, rule.column, path, line, index))
                ),
                None,
            )
        except SourceFormatError as exc:  # kept or filtered out cannot be told: as unreadable
            log.unreadable(exc)
            continue
        if left_out is not None:
            log.skip(f"filtered out: {left_out.describe()}", f"{path.name}:{line}")
            continue
        yield line, row


def _filter_text(
    declared: Declared, row: Row, column: str, path: Path, line: int, index: int
) -> str:
    """A cell as a filter compares it: text, a JSON null as the empty text and true/false as
    JSON writes them (a list or object is this row's error)."""
    value = cell(declared, row, column, path, line, ("filters", index))
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return text_cell(declared, row, column, path, line, ("filters", index))


#: between the values of a key of several columns in a group id
KEY_SEPARATOR = " | "


def key_cells(
    declared: Declared, columns: list[str], row: Row, path: Path, line: int
) -> tuple[str, ...]:
    """The row's cells of the ``group.key`` columns; a key all blank names no group of its own
    (every such row would join one): the row's fault."""
    key = tuple(
        text_cell(declared, row, column, path, line, ("group", "key", index))
        for index, column in enumerate(columns)
    )
    if key and not "".join(key).strip():
        raise SourceFormatError(
            str(path),
            line,
            f"the group key {columns} is empty",
            "fill it in, or leave such rows out with a filter (--skip-malformed counts them)",
        )
    return key


def key_group_id(key: tuple[str, ...]) -> str:
    """The id of the group of ``key`` (its cells, one per key column): the values joined by
    ``' | '``, unchanged where no value holds a '|' (the ids of every shipped suite); a '|' (and
    then a backslash) in a value is escaped, so ('a | b', 'c') and ('a', 'b | c') stay two ids."""
    if len(key) == 1:
        return key[0]  # one column: nothing to tell apart
    return KEY_SEPARATOR.join(
        value.replace("\\", "\\\\").replace("|", "\\|") if "|" in value else value for value in key
    )


def one_spelling(
    seen: dict[tuple[str, ...], tuple[tuple[str, ...], str]],
    key: tuple[str, ...],
    where: str,
    at: tuple[Path, int],
) -> None:
    """A group key that differs from an earlier one only in spaces around a cell ('141 ' beside
    '141') is this row's fault: read as written, it would be a group apart, its pair a second
    test of the same texts (in a pairwise source, perhaps the opposite one)."""
    first, first_where = seen.setdefault(tuple(value.strip() for value in key), (key, where))
    if first != key:
        raise SourceFormatError(
            str(at[0]),
            at[1],
            f"group key {clip(repr(list(key)))} differs from that of {first_where} "
            f"({clip(repr(list(first)))}) only in spaces around a cell: read as written, it "
            "names a group apart",
            "correct the cell (--skip-malformed counts the row instead)",
        )


#: a value written two ways, read as two: (what it is, what that does, what a skip leaves out)
_TWO_WAYS = {
    "aspect": (
        "an aspect",
        "an output would be judged on the ratings of one spelling only",
        " and leaves out the outputs they rate",
    ),
    "category": ("a category", "the tests of one category would be counted apart", ""),
}


def written_one_way(
    spellings: dict[str, tuple[str, str]], value: str, column: str, what: str, at: tuple[Path, int]
) -> None:
    """An aspect or a category (``what``) written another way than before in its ``column``
    ('Fluency' or 'fluency ' beside 'fluency') is this row's (``at``: file, line) fault; one
    written alike each time is read as written. ``spellings``: canonical -> (first, where)."""
    found = first_spelling(spellings, what, value, f"{at[0].name}:{at[1]}")
    if found is not None:
        first, first_at = found
        named, harm, left_out = _TWO_WAYS[what]
        raise SourceFormatError(
            str(at[0]),
            at[1],
            f"{named} (column {column!r}) written another way: read as two {what}s, {harm}",
            f"write each {what} one way in the file (--skip-malformed counts such rows{left_out})",
            f"{clip(repr(value))} is {clip(repr(first))}, first at {first_at}",
        )


@functools.cache
def _parts(column: str) -> tuple[str, ...]:
    return tuple(column.split("."))


def cell(
    declared: Declared, row: Row, column: str, path: Path, line: int, keys: tuple[str | int, ...]
) -> Any:
    """The value of ``column`` (a JSON key, or an ``a.b`` path into nested objects); a column the
    row lacks is a declaration error naming both places."""
    value: Any = row.get(column, MISSING)
    if value is MISSING and "." in column:
        value = row
        for part in _parts(column):
            value = value.get(part, MISSING) if isinstance(value, dict) else MISSING
    if value is MISSING:
        raise DeclarationError(
            f"{declared.at(*keys)}: column {column!r} is not in {path.name}:{line}, which has "
            f"{sorted(row)}; fix the column name in {declared.path.name}"
        )
    return value


def text_cell(
    declared: Declared, row: Row, column: str, path: Path, line: int, keys: tuple[str | int, ...]
) -> str:
    """A cell as text (a JSON number as written: doc ids); a list, object or null is an error."""
    value = row.get(column, MISSING)
    if type(value) is str:  # the common case, without the lookup's error handling
        return value
    value = cell(declared, row, column, path, line, keys)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise SourceFormatError(
            str(path),
            line,
            f"column {column!r} (named at {declared.at(*keys)}) holds "
            f"{type(value).__name__}, not a text",
            "point it at a text column",
        )
    return value if isinstance(value, str) else str(value)


def fixed_or_cell(
    declared: Declared, source: Column | Fixed, row: Row, path: Path, line: int, key: str
) -> str:
    """The system named by ``source``: a value the declaration fixes, or the row's cell (``key``
    names the declaration's key, for the error's line); an empty cell is the row's fault."""
    if isinstance(source, Fixed):
        return source.value
    part = "candidates" if declared.spec.candidates is not None else "comparisons"
    system = name_cell(declared, row, source, path, line, (part, key))
    if not system.strip():  # a system named '' in human scores, or refused as the group ends
        raise SourceFormatError(
            str(path),
            line,
            f"empty system cell (column {source!r}, named at {declared.at(part, key)})",
            "name the system (--skip-malformed counts such rows instead)",
        )
    return system


def name_cell(
    declared: Declared, row: Row, column: str, path: Path, line: int, keys: tuple[str, ...]
) -> str:
    """A system or rater cell (``keys[-1]`` names which); one with spaces around it ('gpt3 '
    beside 'gpt3') is the row's fault: read as written, it would be a system or rater apart."""
    value = text_cell(declared, row, column, path, line, keys)
    if value != value.strip() and value.strip():
        raise SourceFormatError(
            str(path),
            line,
            f"{keys[-1]} cell with spaces around it (column {column!r}, named at "
            f"{declared.at(*keys)}): read as written, it names a {keys[-1]} apart",
            "correct the cell (--skip-malformed counts the row instead)",
            clip(repr(value)),
        )
    return value
