"""Gzip-compressed text sources (``*.gz``), read line by line as they decompress.

Releases such as Anthropic's HH-RLHF ship JSON Lines as ``.jsonl.gz``. The shared readers take
them as they are (``read_jsonl(path)`` on a ``.gz`` file): the manifest hashes the compressed file
as shipped, and every error names the line of the decompressed text (a damaged or truncated
archive at the line where decompression failed; such an error stops the build even with
``skip_malformed``: what follows cannot be read).
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path

from nnd_suites.errors import SourceFormatError
from nnd_suites.sources.lines import GZIP_MAGIC, not_decodable, numbered_lines

#: the longest decompressed line (characters): 64 KiB of gzip can inflate to a 64 MiB line
LINE_LIMIT = 64 * 2**20


def is_gzip(path: Path) -> bool:
    """A ``.gz`` name: such a file must be gzip data (checked when it is read)."""
    return Path(path).name.lower().endswith(".gz")


def read_gzip_text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line without its end-of-line) of a gzip-compressed UTF-8 text."""
    with open(path, "rb") as raw:
        if raw.read(2) != GZIP_MAGIC:
            raise SourceFormatError(
                str(path),
                None,
                "not gzip data, though its name ends in .gz",
                "decompress it or rename it without .gz",
            )
    number = 0
    try:
        # newline="": the same line ends as the plain readers (open(..., newline=""))
        with (
            gzip.open(path, "rb") as raw,
            io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as handle,
        ):
            # a gzip bomb's line is refused before it fills memory
            for number, line in numbered_lines(handle, path, LINE_LIMIT, " once decompressed"):
                yield number, line
    except UnicodeDecodeError:
        raise _not_utf8(path) from None
    except (OSError, EOFError, zlib.error) as exc:
        raise _damaged(path, number, exc) from None


def _damaged(path: Path, lines_read: int, exc: BaseException) -> SourceFormatError:
    # decompression runs ahead of the lines handed out: the damage is at or after this line
    return SourceFormatError(
        str(path),
        lines_read + 1,
        f"damaged gzip data ({exc or type(exc).__name__}); nothing from here on can be read",
        "download the file again and check its sha256",
    )


def _not_utf8(path: Path) -> SourceFormatError:
    """The error for decompressed text that is not UTF-8, at the line of its first bad byte."""
    try:
        with gzip.open(path, "rb") as stream:
            return not_decodable(path, stream)  # type: ignore[arg-type]
    except (OSError, EOFError, zlib.error) as exc:
        return _damaged(path, 0, exc)
