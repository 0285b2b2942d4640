"""The line loop every text source shares, plain or decompressed: numbered lines without their
end-of-line, and the error for text that is not UTF-8, at the line of its first bad byte."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from nnd_suites.errors import SourceFormatError


def numbered_lines(
    handle: TextIO, path: Path, limit: int | None = None, unit: str = ""
) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line without its end-of-line) of ``handle`` (opened with
    ``newline=""``); a line longer than ``limit`` characters (``unit`` says of what, e.g.
    " once decompressed") is refused before it is read whole."""
    number = 0
    while line := handle.readline(-1 if limit is None else limit + 1):
        number += 1
        if limit is not None and len(line) > limit:
            raise SourceFormatError(
                str(path),
                number,
                f"a line longer than {limit:,} characters{unit}",
                "is this the right file?",
            )
        yield number, line.rstrip("\r\n")


def not_utf8(path: Path, data: bytes) -> SourceFormatError:
    """The error for ``path`` whose text ``data`` is not UTF-8, at the line of its first bad byte
    (decoding runs ahead in blocks, so the line being read when it failed is not it)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return SourceFormatError(
            str(path), line, f"not UTF-8 text: {exc.reason} (byte {exc.start})", "save it as UTF-8"
        )
    return SourceFormatError(str(path), None, "not UTF-8 text")
