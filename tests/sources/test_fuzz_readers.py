"""Property-based fuzzing of every built-in adapter's reader on damaged copies of its shipped file.

Each example takes a small slice of a real source (the shipped data, or the fixture for adapters
without one), applies one to three mutations (truncation, byte flips, inserted quotes, tabs, line
ends and escapes, repeated, dropped and renamed columns, re-encoding, a 200,000-character field,
a JSON value replaced by another type, repeated, dropped and blank lines) and builds it, with and
without ``skip_malformed``. It must end in one of two ways:

* a named :class:`~nnd_suites.errors.NNDError` naming the file and the line (``file:LINE`` or, for
  a FRANK item, ``file item N``; the only file-level error allowed is "no pair built"), or
* a suite whose manifest accounts for every row of the file: the test reads the file on its own
  (the lines of a JSONL/TSV file, the items of a JSON list), takes away the rows the manifest
  records as malformed (``file:LINE`` examples, a ``lines A to B`` span counting every line in
  it) and checks that each remaining row became the adapter's unit: a group (quiz_design,
  challenge300), a candidate or a counted skip (summeval, FRANK items), or for MQM, whose rows
  are folded into one candidate per (segment, system), that the candidates plus the skipped ones
  are the file's distinct (segment, system) keys and that every Neutral or source-error row is
  counted as such.

Any other exception, or a row that is neither in the suite nor counted, fails the test.

CI runs the ``ci`` profile: a fixed seed (derandomized), 200 examples per adapter, about a
minute in all. For a longer local run with fresh random examples::

    HYPOTHESIS_PROFILE=thorough python -m pytest -q tests/sources/test_fuzz_readers.py
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnd_suites import NNDError, SourceFormatError, build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.suite import Suite

QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
PROFILE = settings(
    settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci")), suppress_health_check=QUIET
)  # the profiles are registered in tests/conftest.py


@dataclass(frozen=True)
class Target:
    adapter: str
    source: Path
    kind: str  # "jsonl", "tsv" or "json"
    lines: int | None = None  # slice of the file (None: the whole fixture)

    def sample(self) -> bytes:
        data = self.source.read_bytes()
        if self.lines is None:
            return data
        return b"".join(data.splitlines(keepends=True)[: self.lines])


def _shipped(adapter: str) -> Path:
    return get_adapter(adapter).default_source_path()


def _fixture(adapter: str) -> Path:
    folder = get_adapter(adapter).folder() / "fixtures"
    return folder / json.loads((folder / "expected_stats.json").read_text("utf-8"))["source"]


TARGETS = {
    "quiz_design": Target("quiz_design", _shipped("quiz_design"), "jsonl", 6),
    "challenge300": Target("challenge300", _shipped("challenge300"), "tsv", 8),
    "wmt_mqm": Target("wmt_mqm", _shipped("wmt_mqm"), "tsv", 21),
    "summeval": Target("summeval", _fixture("summeval"), "jsonl"),
    "frank": Target("frank", _fixture("frank"), "json"),
}

# ---------------------------------------------------------------------------------- mutations

Mutation = Callable[[st.DataObject, bytes, str], bytes]
DAMAGE = [b'"', b"\t", b"\n", b"\r", b"\\", b"{", b"}", b",", b"\x00", b"\xff", b"\xc3", b'""']
STRANGE = [123, None, [], {}, "", True, 1.5, ["a"], {"a": 1}, "\ud800", "x" * 200_000]


def _position(data: st.DataObject, raw: bytes) -> int:
    return data.draw(st.integers(0, len(raw)), label="position")


def truncate(data, raw, kind):
    return raw[: _position(data, raw)]


def flip_byte(data, raw, kind):
    if not raw:
        return raw
    at = data.draw(st.integers(0, len(raw) - 1), label="byte")
    return raw[:at] + bytes([data.draw(st.integers(0, 255), label="value")]) + raw[at + 1 :]


def insert(data, raw, kind):
    at = _position(data, raw)
    return raw[:at] + data.draw(st.sampled_from(DAMAGE), label="insert") + raw[at:]


def _lines(raw: bytes) -> list[bytes]:
    return raw.splitlines(keepends=True)


def edit_line(data, raw, kind):
    lines = _lines(raw)
    if not lines:
        return raw
    at = data.draw(st.integers(0, len(lines) - 1), label="line")
    how = data.draw(st.sampled_from(["drop", "repeat", "blank", "swap"]), label="line edit")
    new = {
        "drop": [],
        "repeat": [lines[at], lines[at]],
        "blank": [b"\n", lines[at]],
        "swap": [lines[min(at + 1, len(lines) - 1)], lines[at]] if at + 1 < len(lines) else [],
    }[how]
    return b"".join([*lines[:at], *new, *lines[at + 2 if how == "swap" else at + 1 :]])


def edit_column(data, raw, kind):
    """Repeat, drop or rename a column of every line (TSV); other formats: a stray tab."""
    if kind != "tsv":
        return insert(data, raw, kind)
    rows = [line.rstrip(b"\r\n").split(b"\t") for line in _lines(raw)]
    if not rows:
        return raw
    column = data.draw(st.integers(0, len(rows[0]) - 1), label="column")
    how = data.draw(st.sampled_from(["repeat", "drop", "rename"]), label="column edit")
    for number, row in enumerate(rows):
        if column >= len(row):
            continue
        if how == "repeat":
            row.append(row[column])
        elif how == "drop":
            del row[column]
        elif number == 0:
            row[column] = rows[0][data.draw(st.integers(0, len(rows[0]) - 1), label="as")]
    return b"".join(b"\t".join(row) + b"\n" for row in rows)


def reencode(data, raw, kind):
    text = raw.decode("utf-8", errors="replace")
    how = data.draw(st.sampled_from(["utf-16", "latin-1", "bom", "crlf"]), label="encoding")
    if how == "bom":
        return b"\xef\xbb\xbf" + raw
    if how == "crlf":
        return raw.replace(b"\n", b"\r\n")
    return text.encode(how, errors="replace")


def huge_field(data, raw, kind):
    """Make one word 200,000 characters long (inside a field, as long documents are)."""
    spots = [m.start() for m in re.finditer(rb" the ", raw)]
    if not spots:
        return raw
    at = data.draw(st.sampled_from(spots), label="word")
    return raw[:at] + b" " + b"the " * 50_000 + raw[at + 5 :]


def change_type(data, raw, kind):
    """Replace one JSON value (any depth) by a value of another type; other formats: a flip."""
    if kind == "tsv":
        return flip_byte(data, raw, kind)
    lines = _lines(raw) if kind == "jsonl" else [raw]
    if not raw:
        return raw
    at = data.draw(st.integers(0, len(lines) - 1), label="line")
    try:
        value = json.loads(lines[at])
    except ValueError:
        return raw
    lines[at] = (json.dumps(_replace_one(data, value)) + "\n").encode()
    return b"".join(lines)


def _replace_one(data: st.DataObject, value: Any) -> Any:
    children = (
        list(value)
        if isinstance(value, dict)
        else list(range(len(value)))
        if isinstance(value, list)
        else []
    )
    if not children or data.draw(st.integers(0, 3), label="stop") == 0:
        return data.draw(st.sampled_from(STRANGE), label="strange")
    key = data.draw(st.sampled_from(children), label="key")
    value[key] = _replace_one(data, value[key])
    return value


MUTATIONS: list[Mutation] = [
    truncate,
    flip_byte,
    insert,
    edit_line,
    edit_column,
    reencode,
    huge_field,
    change_type,
]

# ---------------------------------------------------------------------------------- accounting


def _text_lines(path: Path) -> list[str]:
    return [line.rstrip("\r\n") for line in io.StringIO(path.read_text("utf-8-sig"), newline="")]


def _malformed_lines(suite: Suite, lines: list[str]) -> set[int]:
    """Lines the manifest records as malformed rows (each line of a recorded span counts)."""
    found: set[int] = set()
    for record in suite.manifest.skipped:
        if not record.reason.startswith("malformed row"):
            continue
        assert record.count == len(record.examples), "a test slice keeps every example"
        for example in record.examples:
            # FILE:LINE, then what only this row has in brackets (its value, its rater)
            start = int(re.fullmatch(r"(.+?):(\d+)(?: \(.*\))?", example, re.DOTALL).group(2))
            span = re.search(r"lines? (\d+) to (?:line )?(\d+)", record.reason)
            end = int(span.group(2)) if span else start
            found.update(n for n in range(start, end + 1) if lines[n - 1])
    return found


def _skips(suite: Suite, *prefixes: str) -> int:
    return sum(s.count for s in suite.manifest.skipped if s.reason.startswith(prefixes))


def check_accounting(target: Target, path: Path, suite: Suite) -> None:
    counts = suite.manifest.counts
    assert counts.pairs == len(suite.pairs) > 0
    if target.kind == "json":
        items = json.loads(path.read_text("utf-8-sig"))
        units = counts.candidates + _skips(
            suite, "malformed row", "article not in", "xsum article", "cnndm article", "sentence"
        )
        assert units == len(items)
        return
    lines = _text_lines(path)
    rows = {
        n
        for n, line in enumerate(lines, start=1)
        if (line.strip(" \t\r\n") if target.kind == "jsonl" else line and n > 1)
    }
    malformed = _malformed_lines(suite, lines)
    assert malformed <= rows
    valid = sorted(rows - malformed)
    if target.adapter in ("quiz_design", "challenge300"):
        assert counts.groups == len(valid)
    elif target.adapter == "summeval":
        assert counts.candidates + _skips(suite, "record outside split") == len(valid)
    else:
        _check_mqm(suite, [lines[0].split("\t")] + [lines[n - 1].split("\t") for n in valid])


def _check_mqm(suite: Suite, rows: list[list[str]]) -> None:
    header, body = rows[0], [dict(zip(rows[0], row, strict=False)) for row in rows[1:]]
    keys = {(r["doc"], r["doc_id"], r["seg_id"], r["system"]) for r in body}
    ignored = [
        r
        for r in body
        if r["severity"].strip().lower() == "neutral"
        or r["category"].strip().lower().split("/")[0] in ("source error", "source issue")
    ]
    assert "severity" in header
    # a candidate with a malformed row (left out with --skip-malformed) is left out whole
    left_out = _skips(suite, "candidate with only", "candidate left out whole")
    assert suite.manifest.counts.candidates + left_out == len(keys)
    assert _skips(suite, "annotation row ignored") == len(ignored)


# ---------------------------------------------------------------------------------- the property


def check_error(error: NNDError, path: Path) -> None:
    message = str(error)
    assert path.name in message, message
    if isinstance(error, SourceFormatError) and error.line is None:
        assert error.reason.startswith("no pair built"), message
    else:
        assert re.search(rf"{re.escape(path.name)}(:\d+| item \d+)", message), message


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_built_in_adapter_has_a_fuzz_target(name):
    assert get_adapter(name)  # a new built-in adapter needs a TARGETS entry


@pytest.mark.parametrize("name", sorted(TARGETS))
@PROFILE
@given(data=st.data(), skip_malformed=st.booleans())
def test_damaged_source_gives_a_full_account_or_a_line_error(name, data, skip_malformed):
    target = TARGETS[name]
    raw = target.sample()
    for mutation in data.draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3)):
        raw = mutation(data, raw, target.kind)
    folder = Path(tempfile.mkdtemp())
    try:
        for extra in target.source.parent.glob("*_split.txt"):  # FRANK's split files
            shutil.copy(extra, folder)
        path = folder / target.source.name
        path.write_bytes(raw)
        try:
            suite = build_suite(name, path, skip_malformed=skip_malformed)
        except NNDError as error:
            check_error(error, path)
            return
        check_accounting(target, path, suite)
    finally:
        shutil.rmtree(folder)


@PROFILE
@given(data=st.data())
def test_damaged_frank_split_file_gives_a_full_account_or_a_named_error(data):
    """FRANK reads a second file, the split's article hashes: damage it instead of the source.
    A damaged hash is an article outside the split (a counted skip); bad bytes are a line error."""
    target = TARGETS["frank"]
    split = target.source.parent / "test_split.txt"
    raw = split.read_bytes()
    for mutation in data.draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3)):
        raw = mutation(data, raw, "jsonl")
    folder = Path(tempfile.mkdtemp())
    try:
        shutil.copy(target.source, folder)
        (folder / split.name).write_bytes(raw)
        try:
            suite = build_suite("frank", folder / target.source.name)
        except NNDError as error:
            message = str(error)
            assert split.name in message or "no pair built" in message, message
            if split.name in message and "lists no article" not in message:
                assert re.search(rf"{re.escape(split.name)}:\d+", message), message
            return
        check_accounting(target, folder / target.source.name, suite)
    finally:
        shutil.rmtree(folder)
