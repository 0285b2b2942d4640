"""The line loop every text source shares, plain or decompressed: numbered lines without their
end-of-line, and the error for text that is not UTF-8, at the line of its first bad byte."""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from nnd_suites.errors import SourceFormatError


class ItemLine(int):
    """The line a JSON list's item starts on, where other items start on it too (a list written
    on one line): shown with the item's index, ``1 (item 3)``, so that each row's place is its own
    (it counts as its line everywhere else)."""

    item: int

    def __new__(cls, line: int, item: int) -> ItemLine:
        self = super().__new__(cls, line)
        self.item = item
        return self

    def __getnewargs__(self) -> tuple[int, int]:  # type: ignore[override]
        return int(self), self.item

    def __str__(self) -> str:  # f"{path}:{line}" formats with str
        return f"{int(self)} (item {self.item})"


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


def not_decodable(
    path: Path,
    stream: BinaryIO,
    encoding: str = "utf-8",
    advice: str = "save it as UTF-8",
    name: str = "UTF-8",
) -> SourceFormatError:
    """The error for ``path`` whose bytes (read from ``stream``: the file, or its decompressed
    text) are not ``encoding``, at the line of the first bad byte (decoding runs ahead in blocks,
    so the line being read when it failed is not it). Read block by block: finding the line of a
    bad byte costs one block of memory, however large the file (or the gzip bomb) is. ``name``
    is how the message names the encoding."""
    decoder = codecs.getincrementaldecoder(encoding)()
    line, consumed = 1, 0
    while True:
        block = stream.read(BLOCK)
        if not consumed and block.startswith(GZIP_MAGIC) and not path.name.lower().endswith(".gz"):
            return SourceFormatError(
                str(path),
                None,
                f"not {name} text: it starts as gzip data does (compressed, but not named .gz)",
                f"name it {path.name}.gz, so it is decompressed as it is read",
            )
        try:
            decoder.decode(block, final=not block)
        except UnicodeDecodeError as exc:
            pending = len(exc.object) - len(block)  # bytes of a character the last block began
            line += exc.object.count(b"\n", 0, exc.start)
            where = consumed - pending + exc.start
            return SourceFormatError(
                str(path), line, f"not {name} text: {exc.reason} (byte {where})", advice
            )
        if not block:
            return SourceFormatError(str(path), None, f"not {name} text", advice)
        line += block.count(b"\n")
        consumed += len(block)


#: the first bytes of every gzip file
GZIP_MAGIC = b"\x1f\x8b"
#: bytes decoded at a time while looking for a bad byte
BLOCK = 2**20
