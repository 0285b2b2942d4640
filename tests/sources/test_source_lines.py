"""Text that is not in its encoding is named at the line and byte of its first bad byte, found
block by block (nnd_suites.sources.lines.not_decodable): in a plain file, a gzip file and a CSV,
wherever the blocks fall, and without holding the file, or its decompressed text, whole."""

from __future__ import annotations

import gzip
import io
import tracemalloc

import pytest

from nnd_suites.errors import SourceFormatError
from nnd_suites.sources import lines, read_jsonl, read_text_lines
from nnd_suites.sources.delimited import read_csv


@pytest.mark.parametrize("block", [1, 2, 3, 5, 64, 2**20])
def test_the_first_bad_byte_is_found_wherever_the_blocks_fall(block, monkeypatch, tmp_path):
    monkeypatch.setattr(lines, "BLOCK", block)
    data = "id\nçé\n€ ok\n".encode() + b"a\xffb\n"  # two- and three-byte characters first
    error = lines.not_decodable(tmp_path / "t.txt", io.BytesIO(data))
    assert (error.line, error.reason) == (4, "not UTF-8 text: invalid start byte (byte 16)")
    truncated = lines.not_decodable(tmp_path / "t.txt", io.BytesIO("ok\n€".encode()[:-1]))
    assert (truncated.line, truncated.reason) == (
        2,
        "not UTF-8 text: unexpected end of data (byte 3)",
    )
    assert "not UTF-8 text" in str(lines.not_decodable(tmp_path / "t.txt", io.BytesIO(b"fine")))


def test_plain_gzip_and_csv_sources_name_the_line(tmp_path):
    text = b'{"a": 1}\n{"b": "\xff"}\n'
    plain = tmp_path / "rows.jsonl"
    plain.write_bytes(text)
    packed = tmp_path / "rows.jsonl.gz"
    packed.write_bytes(gzip.compress(text))
    for path in (plain, packed):
        with pytest.raises(SourceFormatError, match=rf"{path.name}:2: not UTF-8 text: invalid"):
            list(read_jsonl(path))
    table = tmp_path / "t.csv.gz"
    table.write_bytes(gzip.compress(b"id,text\n1,ok\n2,caf\xe9\n"))
    with pytest.raises(SourceFormatError, match=r"t\.csv\.gz:3: not utf-8 text: invalid .*byte 18"):
        list(read_csv(table))


def test_a_gzip_bomb_with_a_bad_byte_is_named_without_decompressing_it_whole(tmp_path):
    bomb = tmp_path / "bomb.jsonl.gz"
    with gzip.open(bomb, "wb", 9) as out:
        out.write(b'{"a": 1}\n\xff\n')
        for _ in range(64):
            out.write(b"x" * 2**20)  # 64 MiB once decompressed
    tracemalloc.start()
    try:
        with pytest.raises(SourceFormatError, match=r"bomb\.jsonl\.gz:2: not UTF-8 text"):
            list(read_text_lines(bomb))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20  # the whole text was 64 MiB, and each bad byte decompressed it all
