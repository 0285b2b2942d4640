"""Reading manifest.json: undecodable bytes, format versions (MAJOR.MINOR), newer fields."""

from __future__ import annotations

import json

import pytest

from nnd_suites.errors import SuiteValidationError
from nnd_suites.format_version import FORMAT_VERSION, parse_format_version
from nnd_suites.suite import MANIFEST_FILE, Suite


@pytest.fixture
def suite_folder(quiz_design_suite, tmp_path):
    return quiz_design_suite.save(tmp_path / "quiz_design")


def _edit_manifest(folder, **changes) -> None:
    path = folder / MANIFEST_FILE
    data = json.loads(path.read_text("utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), "utf-8")


def test_a_binary_manifest_is_a_named_error(suite_folder):
    (suite_folder / MANIFEST_FILE).write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe" + bytes(range(256)))
    with pytest.raises(SuiteValidationError, match=r"manifest\.json: invalid manifest: not UTF-8"):
        Suite.load(suite_folder)


def test_a_truncated_manifest_names_file_and_line(suite_folder):
    path = suite_folder / MANIFEST_FILE
    path.write_text(path.read_text("utf-8")[:200], "utf-8")
    with pytest.raises(
        SuiteValidationError, match=r"manifest\.json:\d+: invalid manifest: not JSON"
    ):
        Suite.load(suite_folder)


def test_a_newer_minor_version_with_a_new_field_says_to_upgrade(suite_folder):
    _edit_manifest(suite_folder, format_version="1.7", new_field={"x": 1})
    with pytest.raises(
        SuiteValidationError,
        match=r"written by a newer nnd-suites \(format 1\.7, field\(s\) new_field\); upgrade",
    ):
        Suite.load(suite_folder)


def test_a_newer_minor_version_with_a_new_nested_field_says_to_upgrade(suite_folder):
    data = json.loads((suite_folder / MANIFEST_FILE).read_text("utf-8"))
    _edit_manifest(suite_folder, format_version="1.7", counts={**data["counts"], "extra": 1})
    with pytest.raises(SuiteValidationError, match=r"extra.*newer nnd-suites \(format 1\.7\)"):
        Suite.load(suite_folder)


def test_a_newer_minor_version_without_new_fields_is_read(suite_folder, quiz_design_suite):
    _edit_manifest(suite_folder, format_version="1.7")
    assert len(Suite.load(suite_folder)) == len(quiz_design_suite) == 2686


def test_an_unknown_field_of_our_own_version_is_still_refused(suite_folder):
    _edit_manifest(suite_folder, new_field=1)
    with pytest.raises(SuiteValidationError, match="extra_forbidden"):
        Suite.load(suite_folder)


@pytest.mark.parametrize("version", ["2.0", "0.9"])
def test_another_major_version_is_not_readable(suite_folder, version):
    _edit_manifest(suite_folder, format_version=version)
    with pytest.raises(SuiteValidationError, match=f"format version {version} is not readable"):
        Suite.load(suite_folder)


@pytest.mark.parametrize("version", ["1.x-garbage", "1", "1.0.0", " 1.0", "01.0", "", 1.0, None])
def test_a_malformed_format_version_is_refused(suite_folder, version):
    _edit_manifest(suite_folder, format_version=version)
    with pytest.raises(SuiteValidationError, match="invalid format_version"):
        Suite.load(suite_folder)


def test_the_written_version_parses():
    assert parse_format_version(FORMAT_VERSION, "here") == (1, 0)


def test_an_exported_config_reads_through_the_same_checks(quiz_design_suite, tmp_path):
    from nnd_suites.hub import export_suites
    from nnd_suites.hub.configs import read_config

    export_suites([quiz_design_suite], tmp_path / "export")
    config = tmp_path / "export" / "quiz_design"
    _edit_manifest(config, format_version="1.x-garbage")
    with pytest.raises(SuiteValidationError, match="invalid format_version '1.x-garbage'"):
        read_config(config)
