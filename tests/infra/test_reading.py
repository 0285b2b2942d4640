"""Bounded reading: regular files only, size caps, bounded nesting and digits, named errors."""

from __future__ import annotations

import os
import time

import pytest

from nnd_suites import QualityMap, Suite, load_suite
from nnd_suites.cli import main
from nnd_suites.errors import NNDError, QualityMapError, SourceFormatError, SuiteValidationError
from nnd_suites.infra.reading import (
    MAX_DEPTH,
    DataFileError,
    parse_json,
    parse_yaml,
    read_data_text,
    read_json_file,
    read_yaml_file,
)
from nnd_suites.sources import ReadLog, read_json_array, read_jsonl, read_tsv
from nnd_suites.suite import (
    CANDIDATES_FILE,
    DATA_FILE,
    LEGACY_PAIRS_FILE,
    MANIFEST_FILE,
    SuiteManifest,
)


def not_regular_files(tmp_path):
    """A device, a fifo with no writer (opening it would wait forever), a folder."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {"a device": "/dev/zero", "a fifo": str(fifo), "a folder": str(tmp_path)}


def test_only_regular_files_are_read(tmp_path):
    for kind, path in not_regular_files(tmp_path).items():
        started = time.perf_counter()
        with pytest.raises(DataFileError, match=rf"^{path}: is {kind}"):
            read_data_text(path, "systems file")
        with pytest.raises(SourceFormatError, match=rf"^{path}: is {kind}"):
            list(read_jsonl(path))
        with pytest.raises(SourceFormatError, match=rf"^{path}: is {kind}"):
            list(read_tsv(path))
        assert time.perf_counter() - started < 5, kind


def test_a_config_file_has_a_size_cap(tmp_path):
    path = tmp_path / "systems.yaml"
    path.write_text("a: b\n" * 1000, encoding="utf-8")
    with pytest.raises(DataFileError, match=r"larger than 100 bytes, more than any systems file"):
        read_data_text(path, "systems file", limit=100)
    assert read_data_text(path, "systems file", limit=5000).count("\n") == 1000


def test_bad_bytes_are_named_with_their_line(tmp_path):
    path = tmp_path / "map.json"
    path.write_bytes(b'{\n"a":\n"\xe9"}')
    with pytest.raises(DataFileError, match=r"map.json:3: not UTF-8 text"):
        read_json_file(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * 100_000, "nested 100000 deep"),
        ('{"a":' * 5_000 + "1" + "}" * 5_000, "nested 5000 deep"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"nested {MAX_DEPTH + 1} deep"),
        ('{"n": ' + "9" * 5_000 + "}", "an integer of 5,000 digits"),
        ('{"n": -' + "9" * 200 + "}", "an integer of 201 digits"),
        ('{"a": 1, "a": 2}', r"key\(s\) \['a'\] appear twice"),
        ('{"a": ', "invalid JSON"),
    ],
)
def test_json_bounds_are_named_errors(text, message):
    with pytest.raises(DataFileError, match=message) as caught:
        parse_json(text, "report.json", unique_keys=True)
    assert str(caught.value).startswith("report.json")


def test_json_within_bounds_is_read():
    deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(deep, "x") is not None
    assert parse_json('{"s": "[[[[{{{{", "n": ' + "9" * 100 + "}", "x")["s"] == "[[[[{{{{"
    assert parse_json('{"a": 1, "a": 2}', "x") == {"a": 2}  # repeats refused only when asked


@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * 100_000, f"nested deeper than {MAX_DEPTH}"),
        ("a:\n" + "".join(" " * i + "b:\n" for i in range(1, 400)), "nested deeper"),
        ("n: " + "9" * 5_000, "an integer of 5,000 digits"),
        ("n: 1_" + "0" * 300, "an integer of 301 digits"),
        ("a: [1, 2", "cannot parse the YAML"),
    ],
)
def test_yaml_bounds_are_named_errors(text, message, tmp_path):
    path = tmp_path / "systems.yaml"
    path.write_text(text, encoding="utf-8")
    started = time.process_time()  # CPU time: a busy machine does not stretch it
    with pytest.raises(DataFileError, match=message) as caught:
        read_yaml_file(path)
    assert str(caught.value).startswith(str(path))
    assert time.process_time() - started < 10


def test_yaml_within_bounds_is_read():
    assert parse_yaml("n: " + "9" * 100 + "\nm: [[[1]]]", "x") == {
        "n": int("9" * 100),
        "m": [[[1]]],
    }


@pytest.mark.parametrize("reader", [read_jsonl, read_json_array])
def test_source_readers_name_a_huge_integer(reader, tmp_path):
    path = tmp_path / "rows.json"
    path.write_text("[" + "1" * 10_000 + "]\n" if reader is read_json_array else "1" * 10_000)
    log = ReadLog(skip_malformed=True)
    try:
        rows = list(reader(path, log))
    except NNDError as error:  # read_json_array stops: its document cannot be resynchronised
        assert "an integer of 10,000 digits" in str(error)
    else:
        assert rows == [] and log.skipped.counts


DEEP_JSON = '{"a": ' * 5_000 + "1" + "}" * 5_000
DEEP_YAML = "[" * 5_000 + "]" * 5_000


@pytest.mark.parametrize(
    "content, message",
    [
        ("{" + DEEP_JSON[1:], "JSON nested 5000 deep"),
        ('{"format_version": ' + "1" * 5_000 + "}", "an integer of 5,000 digits"),
    ],
)
def test_a_damaged_manifest_is_a_named_error(challenge300_suite, tmp_path, content, message):
    folder = challenge300_suite.save(tmp_path / "suite")
    (folder / MANIFEST_FILE).write_text(content, encoding="utf-8")
    with pytest.raises(SuiteValidationError, match=rf"manifest.json: {message}"):
        Suite.load(folder)


def test_a_manifest_that_is_not_a_file_is_named(challenge300_suite, tmp_path):
    folder = challenge300_suite.save(tmp_path / "suite")
    (folder / MANIFEST_FILE).unlink()
    os.mkfifo(folder / MANIFEST_FILE)
    with pytest.raises(SuiteValidationError, match=r"manifest.json: is a fifo"):
        SuiteManifest.from_directory(folder)
    # the loader and every command name it too: never "no manifest.json" (not a suite)
    with pytest.raises(SuiteValidationError, match=r"manifest.json: is a fifo"):
        Suite.load(folder)
    with pytest.raises(SuiteValidationError, match=r"manifest.json: is a fifo"):
        load_suite(folder)


@pytest.mark.parametrize("name", [DATA_FILE, CANDIDATES_FILE, LEGACY_PAIRS_FILE])
def test_a_parquet_file_that_is_not_a_file_is_named(challenge300_suite, tmp_path, capsys, name):
    """A fifo with no writer in place of a suite's parquet file: opening it the usual way waits
    forever, so it is opened without blocking and refused at once, as a folder or device is."""
    folder = challenge300_suite.save(tmp_path / "suite")
    if name == LEGACY_PAIRS_FILE:  # an older suite's pairs file, with no shard beside it
        (folder / DATA_FILE).unlink()
    else:
        (folder / name).unlink()
    os.mkfifo(folder / name)
    started = time.perf_counter()
    with pytest.raises(SuiteValidationError, match=rf"^{folder / name}: is a fifo \(named pipe\)"):
        Suite.load(folder)
    assert main(["validate", str(folder)]) == SuiteValidationError.exit_status
    assert f"{folder / name}: is a fifo" in capsys.readouterr().err
    (folder / name).unlink()
    (folder / name).mkdir()
    with pytest.raises(SuiteValidationError, match=rf"^{folder / name}: is a folder"):
        Suite.load(folder)
    assert time.perf_counter() - started < 30


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("deep.json", DEEP_JSON, "nested 5000 deep"),
        ("deep.yaml", DEEP_YAML, "nested deeper than"),
        ("huge.json", '{"name": ' + "7" * 5_000 + "}", "an integer of 5,000 digits"),
        ("huge.yaml", "name: " + "7" * 5_000, "an integer of 5,000 digits"),
    ],
)
def test_a_damaged_quality_map_is_a_named_error(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(QualityMapError, match=message):
        QualityMap.load(path)
    fifo, folder = tmp_path / "fifo.yaml", tmp_path / "folder.yaml"
    os.mkfifo(fifo)
    folder.mkdir()
    for not_a_file, kind in ((fifo, "a fifo"), (folder, "a folder")):
        with pytest.raises(QualityMapError, match=f"{not_a_file}: is {kind}"):
            QualityMap.load(not_a_file)


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "is a device"),
        ("a: " + "[" * 5_000 + "]" * 5_000, "nested deeper than"),
        ("a: " + "7" * 5_000, "an integer of 5,000 digits"),
    ],
)
def test_a_systems_file_is_read_within_bounds(tmp_path, capsys, content, message):
    from nnd_suites.cli import main

    path = "/dev/zero"
    if content is not None:
        path = tmp_path / "systems.yaml"
        path.write_text(content, encoding="utf-8")
    started = time.process_time()  # CPU time: a busy machine does not stretch it
    status = main(["verify", "quiz_design", "--systems-file", str(path), "--out", str(tmp_path)])
    assert status != 0 and message in capsys.readouterr().err
    assert time.process_time() - started < 30


def test_a_gzip_line_is_bounded_once_decompressed(tmp_path, monkeypatch):
    import gzip

    from nnd_suites.sources import compressed

    monkeypatch.setattr(compressed, "LINE_LIMIT", 1000)
    path = tmp_path / "rows.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"a": 1}\n' + b"x" * 5000 + b"\n"))
    with pytest.raises(SourceFormatError, match=r"rows.jsonl.gz:2: a line longer than 1,000"):
        list(read_jsonl(path, ReadLog(skip_malformed=True)))


def test_a_control_character_in_yaml_is_named_with_its_line(tmp_path):
    """PyYAML's reader refuses it when the loader is made, before any mark exists."""
    path = tmp_path / "README.md"
    path.write_text("a: 1\nb: \x07\n", encoding="utf-8")
    with pytest.raises(DataFileError, match=r"README.md:2: cannot parse the YAML: character 7 is"):
        read_yaml_file(path)
