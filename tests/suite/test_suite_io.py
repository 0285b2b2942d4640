"""Suites on disk: schema-valid files, atomic writes, validation on read."""

from __future__ import annotations

import gc
import json
import re

import jsonschema
import pyarrow.parquet as pq
import pytest
from collections_watch import collections_during

from nnd_suites import Suite, SuiteValidationError
from nnd_suites.cli import main
from nnd_suites.errors import NNDError, UnknownItemError
from nnd_suites.suite import (
    CANDIDATES_FILE,
    DATA_FILE,
    MANIFEST_FILE,
    SuiteManifest,
    export_json_schemas,
)
from nnd_suites.suite.manifest import combine


def test_round_trip_equals_original(challenge300_suite, tmp_path):
    challenge300_suite.save(tmp_path / "s")
    assert Suite.load(tmp_path / "s") == challenge300_suite


def test_written_files_validate_against_exported_json_schemas(quiz_design_suite, tmp_path):
    folder = quiz_design_suite.save(tmp_path / "qd")
    manifest_schema, pair_schema, candidate_schema = (
        json.loads(p.read_text()) for p in export_json_schemas(tmp_path)
    )
    jsonschema.validate(json.loads((folder / MANIFEST_FILE).read_text()), manifest_schema)
    rows = pq.read_table(folder / DATA_FILE).to_pylist()
    assert len(rows) == 2686
    validator = jsonschema.Draft202012Validator(pair_schema)
    for row in rows:
        validator.validate(row)
    candidates = pq.read_table(folder / CANDIDATES_FILE).to_pylist()
    assert len(candidates) == quiz_design_suite.manifest.counts.candidates == 2458
    validator = jsonschema.Draft202012Validator(candidate_schema)
    for row in candidates:
        validator.validate(row)  # quiz design has labels, no ratings (a map column)


def test_shipped_schemas_are_up_to_date(tmp_path):
    from importlib import resources

    export_json_schemas(tmp_path)
    shipped = resources.files("nnd_suites.schemas")
    for name in ("suite_manifest.schema.json", "pair.schema.json", "candidate.schema.json"):
        assert json.loads(shipped.joinpath(name).read_text()) == json.loads(
            (tmp_path / name).read_text()
        ), f"run `nnd-suites schema` to refresh {name}"


def test_tampered_pairs_are_rejected(challenge300_suite, tmp_path):
    folder = challenge300_suite.save(tmp_path / "s")
    table = pq.read_table(folder / DATA_FILE)
    rows = table.to_pylist()
    rows[0]["high"]["text"] = "tampered"
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), folder / DATA_FILE)
    with pytest.raises(SuiteValidationError, match="edited after it was written: the pairs"):
        Suite.load(folder)
    assert main(["validate", str(folder)]) == SuiteValidationError.exit_status
    with pytest.raises(SuiteValidationError, match="the pairs no longer match the recorded hashes"):
        Suite.load(folder)


def test_not_a_suite_folder(tmp_path, capsys):
    assert main(["validate", str(tmp_path)]) == SuiteValidationError.exit_status
    assert "not a suite folder" in capsys.readouterr().err


def test_invalid_manifest_names_the_file(challenge300_suite, tmp_path):
    folder = challenge300_suite.save(tmp_path / "s")
    data = json.loads((folder / MANIFEST_FILE).read_text())
    del data["quality_map"]
    (folder / MANIFEST_FILE).write_text(json.dumps(data))
    with pytest.raises(SuiteValidationError, match="manifest.json: invalid manifest"):
        Suite.load(folder)


def test_failed_write_leaves_previous_suite_intact(challenge300_suite, tmp_path, monkeypatch):
    folder = challenge300_suite.save(tmp_path / "s")
    before = (folder / MANIFEST_FILE).read_text()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("nnd_suites.suite.storage.pq.write_table", boom)
    with pytest.raises(OSError, match="disk full"):
        challenge300_suite.save(folder)
    assert (folder / MANIFEST_FILE).read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]  # no temporary left behind


def test_validate_command_reports_pairs(challenge300_suite, tmp_path, capsys):
    folder = challenge300_suite.save(tmp_path / "s")
    assert main(["validate", str(folder)]) == 0
    assert "807 pairs" in capsys.readouterr().out


def test_stats_of_an_unknown_suite(tmp_path, capsys):
    assert main(["stats", str(tmp_path / "nowhere")]) == NNDError.exit_status
    err = capsys.readouterr().err
    assert "nowhere: no such folder; a suite is a built-in adapter name" in err
    assert main(["stats", "quiz_desing"]) == UnknownItemError.exit_status
    err = capsys.readouterr().err
    assert "unknown suite 'quiz_desing'; did you mean 'quiz_design'?" in err
    assert main(["stats", "frank"]) == NNDError.exit_status
    assert "nnd-suites build frank --source PATH_OR_URL" in capsys.readouterr().err


def _edit(value):
    """A different value of the same JSON type (so only the hash can tell)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return value[:-1] if value else ["x"]
    if isinstance(value, dict):
        key = next(iter(value), None)
        return {**value, key: _edit(value[key])} if key is not None else {"x": "y"}
    return "x"


@pytest.fixture(scope="module")
def written_quiz_design(quiz_design_suite, tmp_path_factory):
    # 100 of its pairs, the manifest's fields as they are: what an edit must not pass is the
    # manifest, and each case loads the suite twice (the whole suite: 0.6 s a case, 100: 0.2 s)
    part = quiz_design_suite.derive(quiz_design_suite.pairs[:100])
    folder = part.save(tmp_path_factory.mktemp("qd") / "suite")
    return folder, json.loads((folder / MANIFEST_FILE).read_text())


@pytest.mark.parametrize("field", list(SuiteManifest.model_fields))
def test_editing_any_manifest_field_fails_validation_naming_it(written_quiz_design, field):
    folder, original = written_quiz_design
    data = json.loads(json.dumps(original))
    data[field] = _edit(data[field])
    # one line naming the field (pydantic's own dump put it on a line of its own)
    named = [
        f"manifest field '{field}'",
        f"manifest: {field}:",
        f"manifest: {field}.",
        f"invalid {field}",
    ]
    if field == "section_hashes":
        data[field]["templates"] = "0" * 64
        named = ["manifest field 'templates'"]
    elif field == "content_hash":
        data[field] = "0" * 64
    try:
        (folder / MANIFEST_FILE).write_text(json.dumps(data))
        with pytest.raises(SuiteValidationError) as error:
            Suite.load(folder)
        assert any(text in str(error.value) for text in named), (field, str(error.value))
        assert "\n" not in str(error.value)
        assert main(["validate", str(folder)]) == SuiteValidationError.exit_status
    finally:
        (folder / MANIFEST_FILE).write_text(json.dumps(original))


@pytest.mark.parametrize(
    "edits,wording",
    [
        ({"description": "edited"}, "manifest field 'description' no longer matches the"),
        (
            {"description": "edited", "license": "edited"},
            "manifest field 'description', manifest field 'license' no longer match the",
        ),
        # checked while the pairs file is read, against its schema
        ({"context_fields": ["answer"]}, "manifest field 'context_fields' no longer matches the"),
    ],
)
def test_the_edit_message_agrees_in_number(written_quiz_design, edits, wording):
    """It said "no longer match(es)" whatever the number of fields."""
    folder, original = written_quiz_design
    try:
        (folder / MANIFEST_FILE).write_text(json.dumps({**original, **edits}))
        with pytest.raises(SuiteValidationError) as error:
            Suite.load(folder)
    finally:
        (folder / MANIFEST_FILE).write_text(json.dumps(original))
    assert f"edited after it was written: {wording} recorded hashes" in str(error.value)
    assert "match(es)" not in str(error.value)


def test_the_content_hash_does_not_depend_on_the_release(quiz_design_suite):
    relabelled = quiz_design_suite.manifest.model_copy(update={"created_with": "9.9.9"})
    sealed = relabelled.sealed(quiz_design_suite.pairs, quiz_design_suite.candidates)
    assert sealed.content_hash == (quiz_design_suite.manifest.content_hash)


def test_the_content_hash_covers_every_section_but_the_release(quiz_design_suite):
    """Only created_with stays out: a suite whose quality map, counts or pairs differ is
    another suite (a mutant leaving quality_map out passed every other test)."""
    manifest = quiz_design_suite.manifest
    assert combine(manifest.section_hashes) == manifest.content_hash
    for name in manifest.section_hashes:
        edited = combine({**manifest.section_hashes, name: "0" * 64})
        assert (edited == manifest.content_hash) == (name == "created_with"), name


@pytest.mark.parametrize(
    "version,message",
    [
        ("1.x-garbage", "invalid format_version '1.x-garbage'"),
        ("2.7", "written by a newer nnd-suites (format 2.7"),
        ("3.0", "suite format 3.0 is not readable"),
    ],
)
def test_format_versions_are_checked_before_the_fields(
    challenge300_suite, tmp_path, version, message
):
    folder = challenge300_suite.save(tmp_path / "suite")
    data = json.loads((folder / MANIFEST_FILE).read_text())
    data.update(format_version=version, a_field_from_the_future=1)
    (folder / MANIFEST_FILE).write_text(json.dumps(data))
    with pytest.raises(SuiteValidationError, match=re.escape(message)):
        Suite.load(folder)


def test_a_binary_manifest_is_named(challenge300_suite, tmp_path):
    folder = challenge300_suite.save(tmp_path / "suite")
    (folder / MANIFEST_FILE).write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(SuiteValidationError, match="manifest.json:1: not UTF-8 text"):
        Suite.load(folder)


def test_a_suite_without_pairs_is_invalid_on_disk(
    challenge300_suite, tmp_path, capsys, monkeypatch
):
    # write a consistent, hashed 0-pair suite the way an older release (or a hand) could have
    with monkeypatch.context() as patched:
        patched.setattr(Suite, "validate", lambda self, **checks: None)
        folder = challenge300_suite.derive([]).save(tmp_path / "empty")
    assert main(["validate", str(folder)]) == SuiteValidationError.exit_status
    assert "holds no pair" in capsys.readouterr().err
    with pytest.raises(SuiteValidationError, match="holds no pair"):
        challenge300_suite.derive([])


def test_validate_takes_any_suite_name_the_resolver_knows(capsys):
    assert main(["validate", "challenge300"]) == 0  # built from the shipped source, then checked
    assert "valid suite 'challenge300', 807 pairs" in capsys.readouterr().out
    assert main(["validate", "no_such_suite"]) != 0
    assert "no_such_suite" in capsys.readouterr().err


@pytest.mark.parametrize("operation", ["save", "load"])
def test_saving_or_loading_a_large_suite_sets_off_no_garbage_collection(
    wmt_mqm_suite, tmp_path, operation
):
    """Its records all stay alive, yet each batch of them set off a collection that walked every
    object the process held: loading wmt_mqm (17,722 tests) made 701 collections, 3 of them
    full, more than half its time. At most one is left: the resumed collector's, of what the
    call made."""
    folder = wmt_mqm_suite.save(tmp_path / "wmt_mqm")
    run = {"save": lambda: wmt_mqm_suite.save(folder), "load": lambda: Suite.load(folder)}
    assert len(collections_during(run[operation])) <= 1
    assert gc.isenabled()


def test_a_paused_collector_stays_paused(challenge300_suite, tmp_path):
    gc.disable()
    try:
        Suite.load(challenge300_suite.save(tmp_path / "s"))
        assert not gc.isenabled()
    finally:
        gc.enable()
