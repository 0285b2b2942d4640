"""Suites keep every annotated candidate: written, hashed, validated, carried by transformations,
exported and loaded back."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from nnd_suites import build_suite, load_suite
from nnd_suites.errors import SuiteValidationError
from nnd_suites.hub import export_suites
from nnd_suites.suite import CANDIDATES_FILE, MANIFEST_FILE, Suite
from nnd_suites.suite.candidates import candidates_to_table

SAMPLE = "adapters/quiz_design/fixtures/quiz_design_sample.jsonl"


def test_every_annotated_candidate_is_kept(quiz_design_suite, challenge300_suite):
    for suite, candidates in ((quiz_design_suite, 2458), (challenge300_suite, 1500)):
        assert len(suite.candidates) == suite.manifest.counts.candidates == candidates
    # Groups that formed no pair keep their candidates too.
    paired = {p.group_id for p in quiz_design_suite.pairs}
    unpaired = {c.group_id for c in quiz_design_suite.candidates} - paired
    assert len(unpaired) == quiz_design_suite.manifest.counts.groups_without_pairs > 0
    first = challenge300_suite.candidates[0]
    assert first.ratings is not None and set(first.ratings) == {"credit"}
    assert first.category  # the question category the map rolls up


def test_save_and_load_round_trip(challenge300_suite, tmp_path):
    folder = challenge300_suite.save(tmp_path / "c300")
    assert (folder / CANDIDATES_FILE).is_file()
    loaded = Suite.load(folder)
    assert loaded.candidates == challenge300_suite.candidates
    assert loaded == challenge300_suite


def test_an_edited_candidate_is_named(quiz_design_suite, tmp_path):
    folder = quiz_design_suite.save(tmp_path / "qd")
    edited = [c.model_copy(update={"label": "No error"}) for c in quiz_design_suite.candidates]
    pq.write_table(candidates_to_table(edited), folder / CANDIDATES_FILE)
    with pytest.raises(SuiteValidationError, match=r"the candidates no longer match"):
        Suite.load(folder)


def test_a_dropped_candidate_is_named(quiz_design_suite, tmp_path):
    folder = quiz_design_suite.save(tmp_path / "qd")
    pq.write_table(candidates_to_table(quiz_design_suite.candidates[1:]), folder / CANDIDATES_FILE)
    with pytest.raises(SuiteValidationError, match=r"2,457 annotated candidates kept.*2,458"):
        Suite.load(folder)


def test_a_folder_without_candidates_says_rebuild(quiz_design_suite, tmp_path):
    folder = quiz_design_suite.save(tmp_path / "qd")
    (folder / CANDIDATES_FILE).unlink()
    with pytest.raises(SuiteValidationError, match=r"no candidates.parquet.*rebuild"):
        Suite.load(folder)


def test_transformations_carry_the_candidates(quiz_design_suite):
    from nnd_suites.transformations.apply import transform_suite

    child = transform_suite(quiz_design_suite, "lowercase")
    assert child.candidates == quiz_design_suite.candidates
    assert child.manifest.content_hash != quiz_design_suite.manifest.content_hash


def test_hub_export_round_trips_the_candidates(challenge300_suite, tmp_path):
    export_suites([challenge300_suite], tmp_path / "nnd")
    config = tmp_path / "nnd" / "challenge300"
    assert (config / CANDIDATES_FILE).is_file()
    assert json.loads((config / MANIFEST_FILE).read_text())["counts"]["candidates"] == 1500
    loaded = load_suite(tmp_path / "nnd", "challenge300")
    assert loaded.candidates == challenge300_suite.candidates


def test_a_sample_build_keeps_its_candidates():
    suite = build_suite("quiz_design", SAMPLE)
    assert len(suite.candidates) == 41 and len(suite.pairs) == 49
