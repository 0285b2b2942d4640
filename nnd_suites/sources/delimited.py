"""Comma-separated tables with a header row, as most human-evaluation releases publish them.

Unlike :func:`~nnd_suites.sources.readers.read_tsv` (one row per line), a quoted CSV field may
span lines (code, dialogue): a row is numbered by the line it starts on, and its text keeps its
own line ends (``\\r\\n`` inside a field stays ``\\r\\n``). A row with too few or too many fields
and an unreadable row go to ``log.unreadable`` (an error, or with ``--skip-malformed`` a counted
record where the rows are not gathered per output); a header naming a column twice is an error.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from nnd_suites.errors import SourceFormatError
from nnd_suites.infra.reading import DataFileError, open_regular_file
from nnd_suites.sources.compressed import GZIP_MAGIC, is_gzip
from nnd_suites.sources.lines import not_decodable
from nnd_suites.sources.log import ReadLog
from nnd_suites.sources.readers import FIELD_SIZE_LIMIT, _check_header


def _open_bytes(path: Path) -> BinaryIO:
    """The file's bytes, decompressed as they are read when its name ends in .gz."""
    try:
        fd = open_regular_file(path, "source file")  # /dev/zero would be read forever
    except DataFileError as exc:
        raise SourceFormatError(str(path), None, exc.reason) from None
    raw = os.fdopen(fd, "rb")
    if not is_gzip(path):
        return raw
    if raw.read(2) != GZIP_MAGIC:
        raw.close()
        raise SourceFormatError(str(path), None, "not gzip data, though its name ends in .gz")
    raw.seek(0)
    return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]


def _open_text(path: Path, encoding: str) -> TextIO:
    return io.TextIOWrapper(_open_bytes(path), encoding=encoding, newline="")


def _not_decodable(path: Path, encoding: str) -> SourceFormatError:
    with _open_bytes(path) as stream:
        advice = "declare its encoding (file.encoding) or save it as UTF-8"
        return not_decodable(path, stream, encoding, advice, name=encoding)


#: characters tables are separated by, the comma first: what a header is split on to tell
SEPARATORS = ",;\t|"


def read_csv(
    path: Path, log: ReadLog | None = None, *, encoding: str = "utf-8", delimiter: str = ","
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line the row starts on, {column: value}) for each row of a CSV file whose fields
    ``delimiter`` separates."""
    try:
        yield from _rows(path, log or ReadLog(), encoding, delimiter)
    except UnicodeDecodeError:
        raise _not_decodable(path, encoding) from None


def sniff_delimiter(path: Path) -> str:
    """The one of :data:`SEPARATORS` that splits the header of ``path`` (UTF-8) into the most
    columns (the comma on a tie): what a delimiter is proposed from."""
    try:
        with _open_text(path, "utf-8-sig") as handle:
            header = handle.readline(2**16)
    except UnicodeDecodeError:  # decoded a block ahead: a later line's byte fails here too
        raise _not_decodable(path, "utf-8").with_hint("save the sample as UTF-8") from None
    counts = {sep: len(next(csv.reader([header], delimiter=sep), [])) for sep in SEPARATORS}
    return max(SEPARATORS, key=lambda sep: counts[sep])  # max keeps the first of a tie


def _rows(
    path: Path, log: ReadLog, encoding: str, delimiter: str
) -> Iterator[tuple[int, dict[str, str]]]:
    log.note_file(path)
    csv.field_size_limit(max(csv.field_size_limit(), FIELD_SIZE_LIMIT))
    with _open_text(path, "utf-8-sig" if encoding == "utf-8" else encoding) as handle:
        reader = csv.reader(handle, strict=True, delimiter=delimiter)
        try:
            header = next(reader)
        except StopIteration:
            raise SourceFormatError(str(path), 1, "empty file: expected a header row") from None
        except csv.Error as exc:
            raise SourceFormatError(str(path), 1, f"unreadable header: {exc}") from None
        other = [s for s in SEPARATORS if len(header) == 1 and s != delimiter and s in header[0]]
        if other:  # 'a;b;c' read as one column: every column would be "not in the file"
            raise SourceFormatError(
                str(path),
                1,
                f"the header is one field holding {other[0]!r}: the file looks separated by "
                f"{other[0]!r}, not {delimiter!r}",
                f"declare file.delimiter: {other[0]!r} in source.yaml"
                if other[0] != "\t"
                else "declare file.format: tsv",
            )
        _check_header(path, header, ())
        while True:
            start = reader.line_num + 1
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                log.unreadable(SourceFormatError(str(path), start, f"unreadable row: {exc}"))
                continue
            if not fields:
                continue
            if len(fields) != len(header):
                log.unreadable(
                    SourceFormatError(
                        str(path),
                        start,
                        f"row has {len(fields)} fields, the header {len(header)}",
                        f"check the quotes and the {delimiter!r} of this row",
                    )
                )
                continue
            log.row(path, start)
            yield start, dict(zip(header, fields, strict=True))
