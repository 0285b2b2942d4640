"""Fuzzing the hh_rlhf reader (gzip JSON Lines) as tests/sources/test_fuzz_readers.py fuzzes the
other built-in readers: damaged copies of a slice of the shipped file, before compression (the
same mutations) and after it (truncated or flipped gzip bytes), built with and without
``skip_malformed``, end in an error naming the file and line, or in a suite whose manifest
accounts for every line: a judgment, a counted skip, or a recorded malformed row."""

from __future__ import annotations

import gzip
import importlib.util
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nnd_suites import NNDError, SourceFormatError, build_suite
from nnd_suites.builder.adapter import get_adapter

_spec = importlib.util.spec_from_file_location(
    "fuzz_readers", Path(__file__).with_name("test_fuzz_readers.py")
)
fuzz = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = fuzz  # its dataclasses look their module up
_spec.loader.exec_module(fuzz)

LINES = 6
with gzip.open(get_adapter("hh_rlhf").default_source_path(), "rb") as _handle:
    SAMPLE = b"".join(_handle.readline() for _ in range(LINES))


def account(path: Path, text_path: Path, error: NNDError | None, suite) -> None:
    if error is not None:
        fuzz.check_error(error, path)
        return
    lines = fuzz._text_lines(text_path)
    rows = {n for n, line in enumerate(lines, start=1) if line.strip(" \t\r\n")}
    malformed = fuzz._malformed_lines(suite, lines)
    assert malformed <= rows
    judgments = suite.manifest.counts.candidates // 2
    skipped = fuzz._skips(suite, "transcripts differ before the final reply")
    assert judgments + skipped == len(rows - malformed)


def build(path: Path, skip_malformed: bool):
    try:
        return None, build_suite("hh_rlhf", path, skip_malformed=skip_malformed)
    except NNDError as exc:
        return exc, None


@fuzz.PROFILE
@given(data=st.data(), skip_malformed=st.booleans())
def test_damaged_text_inside_the_gzip(data, skip_malformed):
    raw = SAMPLE
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        raw = data.draw(st.sampled_from(fuzz.MUTATIONS), label="mutation")(data, raw, "jsonl")
    with tempfile.TemporaryDirectory() as folder:
        text = Path(folder) / "sample.jsonl"
        text.write_bytes(raw)
        path = Path(folder) / "sample.jsonl.gz"
        path.write_bytes(gzip.compress(raw, mtime=0))
        try:
            fuzz._text_lines(text)
        except UnicodeDecodeError:  # not UTF-8: an error at a line (this one, or an earlier
            error, _ = build(path, skip_malformed)  # malformed line found first)
            assert isinstance(error, SourceFormatError)
            fuzz.check_error(error, path)
            return
        error, suite = build(path, skip_malformed)
        account(path, text, error, suite)


@fuzz.PROFILE
@given(data=st.data(), skip_malformed=st.booleans())
def test_damaged_gzip_bytes(data, skip_malformed):
    packed = gzip.compress(SAMPLE, mtime=0)
    how = data.draw(st.sampled_from(["truncate", "flip"]), label="damage")
    packed = (
        fuzz.truncate(data, packed, "gz")
        if how == "truncate"
        else fuzz.flip_byte(data, packed, "gz")
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sample.jsonl.gz"
        path.write_bytes(packed)
        error, suite = build(path, skip_malformed)
        if error is None:  # a flip the format does not check (header time, OS byte)
            text = Path(folder) / "sample.jsonl"
            text.write_bytes(gzip.decompress(packed))
            account(path, text, None, suite)
        elif "not gzip data" in str(error):
            assert path.name in str(error)
        else:
            fuzz.check_error(error, path)


def test_the_sample_builds():
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sample.jsonl.gz"
        path.write_bytes(gzip.compress(SAMPLE, mtime=0))
        suite = build_suite("hh_rlhf", path)
    assert suite.manifest.counts.candidates == 2 * LINES
    with (
        pytest.raises(SourceFormatError, match="sample.jsonl.gz:1"),
        tempfile.TemporaryDirectory() as folder,
    ):
        path = Path(folder) / "sample.jsonl.gz"
        path.write_bytes(gzip.compress(b"[1]\n" + SAMPLE))
        build_suite("hh_rlhf", path)
