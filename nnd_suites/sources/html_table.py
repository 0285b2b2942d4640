"""Read a table of an HTML page (inputs published as HTML tables) with the line of every row."""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

from nnd_suites.errors import SourceFormatError
from nnd_suites.sources.log import ReadLog
from nnd_suites.sources.readers import read_text_lines


class _Rows(HTMLParser):
    """Collects the rows of the ``index``-th top-level ``<table>``: (line, cell texts)."""

    def __init__(self, index: int) -> None:
        super().__init__(convert_charrefs=True)
        self.index, self.seen, self.depth = index, -1, 0
        self.rows: list[tuple[int, list[str]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self.depth += 1
            self.seen += self.depth == 1
        elif self.depth == 1 and self.seen == self.index:
            if tag == "tr":
                self.rows.append((self.getpos()[0], []))
            elif tag in ("td", "th") and self.rows:
                self._close_cell()
                self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._close_cell()
            self.depth = max(self.depth - 1, 0)
        elif tag in ("td", "th", "tr"):
            self._close_cell()

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)

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
    parser = _Rows(table)
    for _, line in read_text_lines(path, log):
        parser.feed(line + "\n")
    parser.close()
    if not parser.rows:
        raise SourceFormatError(str(path), None, f"no table number {table + 1} with rows")
    (header_line, header), *rows = parser.rows
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated or not all(header):
        raise SourceFormatError(
            str(path), header_line, f"the header row names columns {header}: each once, none empty"
        )
    for line, cells in rows:
        if len(cells) != len(header):
            log.malformed(
                SourceFormatError(
                    str(path), line, f"{len(cells)} cells, the header has {len(header)}"
                )
            )
            continue
        log.row(path, line)
        yield line, dict(zip(header, cells, strict=True))
