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
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from yaml_damage import PROFILE, damaged

from nnd_suites import NNDError, build_suite
from nnd_suites.builder.adapter import ADAPTERS, get_adapter
from nnd_suites.errors import QualityMapError
from nnd_suites.quality_map import QualityMap
from nnd_suites.quality_map.core import builtin_quality_maps

MAPS = builtin_quality_maps()


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
    raw = damaged(data, MAPS[name].read_bytes())
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
