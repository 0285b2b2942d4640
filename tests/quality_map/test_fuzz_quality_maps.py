"""Property-based fuzzing of the quality-map loader on damaged copies of every shipped map.

Each example damages a shipped map (truncation, byte flips and bad bytes, dropped, repeated,
swapped and re-indented lines, a renamed key, a value replaced by another type or a YAML
construct) and loads it. It must end in a :class:`QualityMapError` that names the file, or in a
map that loads; a map that loads then builds its adapter's fixture into a suite or stops with a
named :class:`NNDError`. Any other exception fails. CI runs the ``ci`` profile (fixed seed, 200
examples per map); ``HYPOTHESIS_PROFILE=thorough`` runs 5,000.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from nnd_suites import NNDError, build_suite
from nnd_suites.builder.adapter import ADAPTERS, get_adapter
from nnd_suites.errors import QualityMapError
from nnd_suites.quality_map import QualityMap
from nnd_suites.quality_map.core import builtin_quality_maps

QUIET = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
PROFILE = settings(
    settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci")), suppress_health_check=QUIET
)  # the profiles are registered in tests/conftest.py
MAPS = builtin_quality_maps()
VALUES = ["[", "{a: 1}", "null", "1e999", "-1", "0", "[]", "{}", "x" * 5000, "*missing"]
VALUES += ["!!python/object/apply:os.system ['true']", "'\\ud800'", "&a [*a]", "2001-01-01"]
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


def _fixture(adapter: str) -> Path:
    folder = get_adapter(adapter).folder() / "fixtures"
    return folder / json.loads((folder / "expected_stats.json").read_text("utf-8"))["source"]


@pytest.mark.parametrize("name", sorted(MAPS))
def test_every_shipped_map_has_an_adapter_to_build_with(name):
    assert name in ADAPTERS.names()


@pytest.mark.parametrize("name", sorted(MAPS))
@PROFILE
@given(data=st.data())
def test_damaged_quality_map_loads_or_gives_a_named_error(name, data, tmp_path):
    raw = MAPS[name].read_bytes()
    for mutation in data.draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3)):
        raw = mutation(data, raw)
    path = tmp_path / f"{name}.yaml"
    path.write_bytes(raw)
    try:
        QualityMap.load(path)
    except QualityMapError as error:
        assert path.name in str(error), str(error)
        event("refused with a named error")
        return
    try:
        suite = build_suite(name, _fixture(name), quality_map=path)
    except NNDError as error:
        assert str(error), "an error without a message"
        event("loaded; the build stopped with a named error")
        return
    assert len(suite) > 0
    event("loaded and built")
