"""The numeric scaffold is a folder release (inputs, per-system outputs and rating files) read
with the public readers: it builds as written, counts what it leaves out, and names a bad score."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from nnd_suites import SourceFormatError, build_suite
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.scaffold import harness
from nnd_suites.scaffold.writer import write_adapter


@pytest.fixture
def scaffolded(tmp_path, monkeypatch):
    """``new-adapter my_ratings --type numeric`` in a temporary root, registered for one test."""
    (tmp_path / "adapters").mkdir()
    (tmp_path / "quality_maps").mkdir()
    write_adapter(tmp_path, "my_ratings", "numeric")
    folder = tmp_path / "adapters" / "my_ratings"
    ADAPTERS.names()
    saved = {k: dict(getattr(ADAPTERS, k)) for k in ("_classes", "_origins", "_aliases")}
    spec = importlib.util.spec_from_file_location("my_ratings_adapter", folder / "adapter.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    yield folder, tmp_path / "quality_maps" / "my_ratings.yaml"
    for name, value in saved.items():
        setattr(ADAPTERS, name, value)


def test_the_numeric_stub_builds_its_release_as_expected(scaffolded, tmp_path):
    folder, quality_map = scaffolded
    expected = harness.load_expected(ADAPTERS.get("my_ratings"))
    assert expected.source == "release" and expected.pairs == 7
    suite = build_suite(
        "my_ratings", folder / "fixtures" / "release", tmp_path / "suite", quality_map=quality_map
    )
    assert harness.stats_differences(expected, suite.stats()) == []
    # g1: a 85, b 45, c 65, d 95 (means of two raters); at least 20 apart: a>b a>c c>b d>b d>c
    g1 = sorted((p.high.systems[0], p.low.systems[0]) for p in suite.pairs if p.group_id == "g1")
    assert g1 == [("system_a", "system_b"), ("system_a", "system_c"), ("system_c", "system_b"),
                  ("system_d", "system_b"), ("system_d", "system_c")]  # fmt: skip


def test_the_numeric_stub_counts_what_it_leaves_out_and_names_a_bad_score(scaffolded, tmp_path):
    folder, quality_map = scaffolded
    release = folder / "fixtures" / "release"
    outputs, ratings = release / "outputs" / "system_a.json", release / "ratings" / "system_d.json"
    outputs.write_text(json.dumps({**json.loads(outputs.read_text()), "g9": "an orphan"}))
    scores = json.loads(ratings.read_text())
    ratings.write_text(json.dumps({**scores, "g2": {"r1": {"quality": 50}}}))
    suite = build_suite("my_ratings", release, tmp_path / "suite", quality_map=quality_map)
    assert {s.reason: s.count for s in suite.manifest.skipped} == {
        "output of an input absent from inputs.json": 1,
        "rating of an output absent from outputs/": 1,
    }
    assert len(suite) == 7
    scores["g1"]["r2"]["quality"] = 101
    ratings.write_text(json.dumps(scores, indent=1))
    with pytest.raises(
        SourceFormatError, match=r"system_d\.json:2: g1\.r2\.quality: 101 out of range \[0, 100\]"
    ):
        build_suite("my_ratings", release, tmp_path / "bad", quality_map=quality_map)
