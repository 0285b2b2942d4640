"""Read a table of an HTML page (inputs published as HTML tables) with the line of every row.

The page is tokenised here, in one pass, rather than by :mod:`html.parser`: that parser retries
every unterminated construct (``<!--``, ``<a b='``, ``</``) with a scan to the end of the input,
so a 100 kB page of them took minutes. The tokeniser follows the HTML standard where it matters
for tables: comments and ``<!...>``/``<?...>`` are skipped, attribute values may hold ``>``, the
text of ``script``/``style``/``textarea``/``title`` is raw, and markup left open at the end of the
file ends the document, as in a browser.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from nnd_suites.errors import SourceFormatError
from nnd_suites.sources.log import ReadLog
from nnd_suites.sources.readers import read_text_lines

# A start or end tag; attribute values may hold '>'. Possessive and atomic: the attributes stop
# only at '>' or at the end of the text, so a tag left open fails once, in linear time.
_TAG = re.compile(
    r"<(/?)([a-zA-Z][^\s/>]*+)(?>[^>\"'=]++|=\s*+(?>\"[^\"]*+\"|'[^']*+'|[^\s>]*+)|[\"'])*+>"
)
_BOGUS = re.compile(r"<[!?/][^>]*+>")  # <!DOCTYPE ...>, <?xml ...?>, </ 3>: skipped to '>'
_RAW_TEXT = ("script", "style", "textarea", "title")
# Tags a browser shows as a break in a cell's text (<br>, paragraphs, list items, nested table
# cells): read as a space, so "a<br>b" is "a b", never "ab". Inline tags (<b>, <a>) add nothing.
_BREAKING = frozenset(
    {"br", "hr", "p", "pre", "div", "blockquote", "address", "figure", "figcaption"}
    | {"li", "ul", "ol", "dl", "dt", "dd", "table", "caption", "tr", "td", "th"}
    | {"h1", "h2", "h3", "h4", "h5", "h6", "header", "footer", "main", "nav", "section"}
    | {"article", "aside"}
)


def _tags(text: str) -> Iterator[tuple[str, str, int]]:
    """("start" | "end" | "data", tag name or decoded text, offset) for each token of a page."""
    at, size = 0, len(text)
    while at < size:
        opening = text.find("<", at)
        if opening < 0:
            yield "data", html.unescape(text[at:]), at
            return
        if opening > at:
            yield "data", html.unescape(text[at:opening]), at
        at = opening
        if text.startswith("<!--", at):
            close = text.find("-->", at + 4)
            if close < 0:
                return  # a comment left open runs to the end of the file
            at = close + 3
        elif tag := _TAG.match(text, at):
            name = tag.group(2).lower()
            yield ("end" if tag.group(1) else "start"), name, at
            at = tag.end()
            if name in _RAW_TEXT and not tag.group(1):
                found = re.compile(rf"</{name}[\s/>]", re.IGNORECASE).search(text, at)
                at = found.start() if found else size
        elif re.match(r"</?[a-zA-Z]", text[at : at + 3]):
            return  # a tag left open at the end of the file
        elif text.startswith(("<!", "<?", "</"), at):
            bogus = _BOGUS.match(text, at)
            if bogus is None:
                return
            at = bogus.end()
        else:  # a '<' that opens nothing is text
            yield "data", "<", at
            at += 1


class _Rows:
    """Collects the rows of the ``index``-th top-level ``<table>``: (line, cell texts)."""

    def __init__(self, index: int) -> None:
        self.index, self.seen, self.depth = index, -1, 0
        self.rows: list[tuple[int, list[str]]] = []
        self.cell: list[str] | None = None

    def read(self, text: str) -> None:
        line, counted = 1, 0
        for kind, value, offset in _tags(text):
            if kind == "data":
                if self.cell is not None:
                    self.cell.append(value)
                continue
            line, counted = line + text.count("\n", counted, offset), offset
            if kind == "start":
                self._start(value, line)
            else:
                self._end(value)
        self._close_cell()

    def _start(self, tag: str, line: int) -> None:
        if self.cell is not None and tag in _BREAKING:
            self.cell.append(" ")
        if tag == "table":
            self.depth += 1
            self.seen += self.depth == 1
        elif self.depth == 1 and self.seen == self.index:
            if tag == "tr":
                self.rows.append((line, []))
            elif tag in ("td", "th") and self.rows:
                self._close_cell()
                self.cell = []

    def _end(self, tag: str) -> None:
        if self.cell is not None and tag in _BREAKING:
            self.cell.append(" ")
        if tag == "table":
            self._close_cell()
            self.depth = max(self.depth - 1, 0)
        elif tag in ("td", "th", "tr"):
            self._close_cell()

    def _close_cell(self) -> None:
        if self.cell is not None and self.rows:
            self.rows[-1][1].append(" ".join("".join(self.cell).split()))  # as a browser shows it
        self.cell = None


def read_html_table(
    path: Path, log: ReadLog | None = None, *, table: int = 0
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line, {header: cell text}) for each row of the ``table``-th table of an HTML file;
    its first row is the header. Cell texts are whitespace-collapsed, entities decoded."""
    log = log or ReadLog()
    text = "".join(f"{line}\n" for _, line in read_text_lines(path, log))

    def fault(line: int | None, message: str) -> SourceFormatError:
        return SourceFormatError(str(path), line, message)

    for line, row in _table_rows(text, table, fault, log):
        log.row(path, line)
        yield line, row


def parse_html_table(
    text: str,
    path: Path,
    line: int | None = None,
    *,
    key: str | None = None,
    table: int = 0,
    log: ReadLog | None = None,
) -> list[tuple[int, dict[str, str]]]:
    """(line within ``text``, {header: cell text}) for each row of the ``table``-th table of an
    HTML text held in a string (e.g. a JSON value); its first row is the header. Errors name the
    file and ``line`` holding the text, the ``key`` path of the value and the row's line in it."""
    where = f"{key}: " if key else ""

    def fault(row_line: int | None, message: str) -> SourceFormatError:
        at = f"HTML line {row_line}: " if row_line is not None else ""
        return SourceFormatError(str(path), line, f"{where}{at}{message}")

    return list(_table_rows(text, table, fault, log or ReadLog()))


def _table_rows(
    text: str, table: int, fault: Callable[[int | None, str], SourceFormatError], log: ReadLog
) -> Iterator[tuple[int, dict[str, str]]]:
    """Rows of a table under its header; a row of the wrong width goes to ``log.unreadable``."""
    parser = _Rows(table)
    parser.read(text)
    if not parser.rows:
        raise fault(None, f"no table number {table + 1} with rows")
    (header_line, header), *rows = parser.rows
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated or not all(header):
        raise fault(header_line, f"the header row names columns {header}: each once, none empty")
    for line, cells in rows:
        if len(cells) != len(header):
            log.unreadable(fault(line, f"{len(cells)} cells, the header has {len(header)}"))
            continue
        yield line, dict(zip(header, cells, strict=True))
