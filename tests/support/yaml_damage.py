"""Damage for a YAML file, shared by the fuzz tests of the quality maps and of ``source.yaml``:
truncation, bad bytes, dropped, repeated, swapped and re-indented lines, a renamed key, and a
value replaced by another type, a huge number, deep nesting or a YAML construct."""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

QUIET = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
PROFILE = settings(
    settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci")), suppress_health_check=QUIET
)  # the profiles are registered in tests/conftest.py
VALUES = ["[", "{a: 1}", "null", "1e999", "-1", "0", "[]", "{}", "x" * 5000, "*missing"]
VALUES += ["!!python/object/apply:os.system ['true']", "'\\ud800'", "&a [*a]", "2001-01-01"]
VALUES += [
    ".nan",
    "-.inf",
    "9" * 5000,
    "[" * 2000 + "]" * 2000,
    "{a: " * 1000 + "1" + "}" * 1000,
    "~",
    "yes",
]
BAD_BYTES = [b"\xff", b"\xc3", b"\x00", b"\t", b":", b"- ", b"'", b'"', b"{", b"&x ", b"*x"]


def _lines(raw: bytes) -> list[bytes]:
    return raw.splitlines(keepends=True) or [b""]


def truncate(data: st.DataObject, raw: bytes) -> bytes:
    return raw[: data.draw(st.integers(0, len(raw)))]


def bad_bytes(data: st.DataObject, raw: bytes) -> bytes:
    at = data.draw(st.integers(0, len(raw)))
    return raw[:at] + data.draw(st.sampled_from(BAD_BYTES)) + raw[at:]


def edit_lines(data: st.DataObject, raw: bytes) -> bytes:
    lines = _lines(raw)
    i = data.draw(st.integers(0, len(lines) - 1))
    j = data.draw(st.integers(0, len(lines) - 1))
    how = data.draw(st.sampled_from(["drop", "repeat", "swap", "indent", "dedent"]))
    if how == "drop":
        del lines[i]
    elif how == "repeat":
        lines.insert(j, lines[i])
    elif how == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif how == "indent":
        lines[i] = b"  " + lines[i]
    else:
        lines[i] = lines[i].lstrip(b" ")
    return b"".join(lines)


def change_value(data: st.DataObject, raw: bytes) -> bytes:
    lines = _lines(raw)
    keyed = [i for i, line in enumerate(lines) if re.match(rb"\s*-?\s*\w+:", line)] or [0]
    i = data.draw(st.sampled_from(keyed))
    key = re.match(rb"(\s*-?\s*\w+:)", lines[i])
    if key is None:
        return raw
    if data.draw(st.booleans()):  # rename the key
        lines[i] = key.group(1)[:-1] + b"x:" + lines[i][key.end() :]
    else:
        lines[i] = key.group(1) + b" " + data.draw(st.sampled_from(VALUES)).encode() + b"\n"
    return b"".join(lines)


MUTATIONS = [truncate, bad_bytes, edit_lines, change_value]


def damaged(data: st.DataObject, raw: bytes) -> bytes:
    """``raw`` after one to three of the mutations."""
    for mutation in data.draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3)):
        raw = mutation(data, raw)
    return raw
