"""Reading annotation sources: local paths or URLs, with line numbers for every error.

A URL is downloaded once into a local cache (atomically) when an adapter reads it; nothing is
downloaded at import time.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nnd_suites.errors import SourceFormatError
from nnd_suites.io import atomic_path

#: How many example locators each skip reason keeps in a manifest.
SKIP_EXAMPLES = 20


def cache_dir() -> Path:
    root = os.environ.get("NND_SUITES_CACHE") or Path.home() / ".cache" / "nnd_suites"
    return Path(root)


def is_url(source: str | os.PathLike) -> bool:
    return urllib.parse.urlparse(str(source)).scheme in {"http", "https", "file"}


def resolve_source(source: str | os.PathLike) -> Path:
    """Return a local path for ``source``: a path, or an http(s)/file URL fetched into the cache."""
    text = str(source)
    if not is_url(text):
        path = Path(text).expanduser()
        if not path.is_file():
            raise SourceFormatError(
                text, None, "source file not found", "pass an existing path or URL"
            )
        return path
    parsed = urllib.parse.urlparse(text)
    if parsed.scheme == "file":
        return resolve_source(urllib.request.url2pathname(parsed.path))
    name = Path(parsed.path).name or "source"
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    local = cache_dir() / "sources" / digest / name
    if not local.exists():
        try:
            with urllib.request.urlopen(text, timeout=60) as response, atomic_path(local) as tmp:
                tmp.write_bytes(response.read())
        except OSError as exc:
            raise SourceFormatError(
                text,
                None,
                f"could not download: {exc}",
                "check the URL and your connection, or pass a local path",
            ) from exc
    return local


def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class SkipLog:
    """Counts everything left out of a suite, by reason, with example locators (file:line, ids)."""

    counts: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, reason: str, where: str, n: int = 1) -> None:
        self.counts[reason] += n
        kept = self.examples.setdefault(reason, [])
        if len(kept) < SKIP_EXAMPLES:
            kept.append(where)

    def records(self) -> list[dict[str, Any]]:
        return [
            {"reason": reason, "count": count, "examples": self.examples.get(reason, [])}
            for reason, count in sorted(self.counts.items())
        ]


@dataclass
class ReadLog:
    """Handed to an adapter's ``read``: where it reports what it leaves out.

    ``skip`` records a candidate or row left out on purpose; ``malformed`` raises the error
    (default) or, with ``skip_malformed``, records the row with its line number and goes on.
    """

    skipped: SkipLog = field(default_factory=SkipLog)
    skip_malformed: bool = False

    def skip(self, reason: str, where: str, n: int = 1) -> None:
        self.skipped.add(reason, where, n)

    def malformed(self, error: SourceFormatError) -> None:
        if not self.skip_malformed:
            raise error
        self.skipped.add(f"malformed row: {error.reason}", f"{Path(error.path).name}:{error.line}")


def _read_text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line without its end-of-line) and nothing else stripped."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            for number, line in enumerate(handle, start=1):
                yield number, line.rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise SourceFormatError(str(path), None, f"not UTF-8 text ({exc})") from exc


def read_jsonl(path: Path, log: ReadLog | None = None) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed object) for each non-blank line of a JSON Lines file."""
    log = log or ReadLog()
    for number, line in _read_text_lines(path):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            log.malformed(
                SourceFormatError(
                    str(path), number, f"invalid JSON: {exc.msg}", "fix or remove the line"
                )
            )


def read_tsv(
    path: Path,
    *,
    quoted: bool = True,
    required: tuple[str, ...] = (),
    optional_trailing: tuple[str, ...] = (),
    log: ReadLog | None = None,
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, {column: value}) for each row of a tab-separated file with a header.

    Rows are never stripped before splitting (an empty trailing column is a real column).
    ``optional_trailing`` columns may be missing at the end of a row (files with or without them).
    """
    log = log or ReadLog()
    lines = _read_text_lines(path)
    reader = csv.reader(
        (line for _, line in lines),
        delimiter="\t",
        quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE,
    )
    try:
        header = next(reader)
    except StopIteration:
        raise SourceFormatError(str(path), 1, "empty file: expected a header row") from None
    missing = [name for name in required if name not in header]
    if missing:
        raise SourceFormatError(
            str(path), 1, f"missing required column(s) {missing}", f"the header has {header}"
        )
    width = len(header)
    trailing = [name for name in optional_trailing if name in header]
    min_width = (
        width - len(trailing) if trailing and header[-len(trailing) :] == trailing else width
    )
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            log.malformed(SourceFormatError(str(path), reader.line_num, f"unreadable row: {exc}"))
            continue
        number = reader.line_num
        if not fields or fields == [""]:
            continue
        if not min_width <= len(fields) <= width:
            log.malformed(
                SourceFormatError(
                    str(path),
                    number,
                    f"row has {len(fields)} tab-separated fields, expected {width}"
                    + (f" (or {min_width})" if min_width != width else ""),
                    "check for stray or missing tabs in this row",
                )
            )
            continue
        fields += [""] * (width - len(fields))
        yield number, dict(zip(header, fields, strict=True))


def require_fields(obj: Any, fields: tuple[str, ...], path: Path, line: int, what: str) -> None:
    """Raise a SourceFormatError naming the line when ``obj`` lacks a required field."""
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
