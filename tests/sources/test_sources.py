"""Bad annotation sources get errors that name the file and the line; URLs are read too."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from local_server import quiet_file_handler, start_server, stop_server

from nnd_suites import NNDError, SourceFormatError, UnknownItemError, build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.cli import main

QD_SOURCE = get_adapter("quiz_design").default_source_path()
C3_SOURCE = get_adapter("challenge300").default_source_path()


def quiz_lines(n: int = 3) -> list[str]:
    return QD_SOURCE.read_text("utf-8").splitlines()[:n]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_malformed_jsonl_line_names_the_line(tmp_path, capsys):
    lines = quiz_lines()
    lines[1] = lines[1][:50]  # truncated JSON on line 2
    source = write(tmp_path / "qd.jsonl", lines)
    with pytest.raises(SourceFormatError, match=r"qd.jsonl:2: invalid JSON"):
        build_suite("quiz_design", source)
    assert (
        main(["build", "quiz_design", "--source", str(source), "--out", str(tmp_path / "out")])
        == SourceFormatError.exit_status
    )
    assert "qd.jsonl:2: invalid JSON" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_skip_malformed_records_the_line_in_the_manifest(tmp_path):
    lines = quiz_lines()
    lines[1] = "{not json"
    suite = build_suite("quiz_design", write(tmp_path / "qd.jsonl", lines), skip_malformed=True)
    [record] = [s for s in suite.manifest.skipped if s.reason.startswith("malformed row")]
    assert record.count == 1 and record.examples == ["qd.jsonl:2"]
    assert suite.manifest.counts.groups == 2


def test_missing_required_field(tmp_path):
    lines = quiz_lines()
    row = json.loads(lines[2])
    del row["questions"][1]["reason"]
    lines[2] = json.dumps(row)
    with pytest.raises(
        SourceFormatError,
        match=r"qd.jsonl:3: question 1 is missing required field\(s\) \['reason'\]",
    ):
        build_suite("quiz_design", write(tmp_path / "qd.jsonl", lines))


def test_unknown_label_in_source(tmp_path):
    lines = quiz_lines()
    row = json.loads(lines[0])
    row["questions"][0]["reason"] = "boring"
    lines[0] = json.dumps(row)
    with pytest.raises(
        NNDError,
        match=r"quality map quiz_design.*qd.jsonl:1 question 0: "
        r"candidate has label 'boring'",
    ):
        build_suite("quiz_design", write(tmp_path / "qd.jsonl", lines))


def test_empty_candidate_text_is_reported(tmp_path):
    lines = quiz_lines()
    row = json.loads(lines[0])
    row["questions"][0]["question"] = " "
    lines[0] = json.dumps(row)
    suite = build_suite("quiz_design", write(tmp_path / "qd.jsonl", lines))
    [record] = [s for s in suite.manifest.skipped if s.reason == "empty candidate text"]
    assert record.count == 1 and record.examples == ["qd.jsonl:1 question 0"]


def test_tsv_row_with_wrong_number_of_fields(tmp_path):
    lines = C3_SOURCE.read_text("utf-8").splitlines()[:4]
    lines[2] = lines[2] + '\t"extra"'
    with pytest.raises(
        SourceFormatError,
        match=r"c3.tsv:3: row has 21 tab-separated fields, "
        r"expected 20",
    ):
        build_suite("challenge300", write(tmp_path / "c3.tsv", lines))


def test_tsv_missing_required_column(tmp_path):
    lines = C3_SOURCE.read_text("utf-8").splitlines()[:3]
    lines[0] = lines[0].replace('"category"', '"topic"')
    with pytest.raises(
        SourceFormatError,
        match=r"c3.tsv:1: missing required column\(s\) "
        r"\['category'\]",
    ):
        build_suite("challenge300", write(tmp_path / "c3.tsv", lines))


def test_a_header_of_one_long_field_is_shown_cut(tmp_path):
    """Quiz Design's JSON lines given to challenge300 (a TSV reader): the error quoted the whole
    first line (a 2,500-character JSON object) as the header."""
    with pytest.raises(SourceFormatError) as error:
        build_suite("challenge300", QD_SOURCE)
    message = str(error.value)
    assert f"{QD_SOURCE}:1: missing required column(s) ['id', 'question', 'category']" in message
    assert 'the header has [\'{"group_id": 0, "doc_id": 0, "answer_span": "mee...' in message
    assert len(message) < len(str(QD_SOURCE)) + 300


def test_non_numeric_credit(tmp_path):
    lines = C3_SOURCE.read_text("utf-8").splitlines()[:3]
    lines[1] = lines[1].rsplit("\t", 1)[0] + "\tyes"
    with pytest.raises(
        SourceFormatError, match=r"c3.tsv:2: column 'credit-T5-XXL-SSM-NQ': 'yes' is not a number"
    ):
        build_suite("challenge300", write(tmp_path / "c3.tsv", lines))


def test_skip_malformed_leaves_out_and_counts_rows_an_adapter_refuses(tmp_path):
    # these stopped the build even with --skip-malformed; a null or empty system became a
    # system called "None" or "" in human scores
    lines = quiz_lines(4)
    broken = {1: ("model_name", None), 2: ("model_name", "bartb_sup|"), 3: ("reason", None)}
    for index, (field, value) in broken.items():
        row = json.loads(lines[index])
        row["questions"][0][field] = value
        lines[index] = json.dumps(row)
    source = write(tmp_path / "qd.jsonl", lines)
    with pytest.raises(SourceFormatError, match=r"qd\.jsonl:2: question 0: 'model_name' must be"):
        build_suite("quiz_design", source)
    suite = build_suite("quiz_design", source, skip_malformed=True)
    assert suite.manifest.counts.groups == 1
    assert {s.reason: s.examples for s in suite.manifest.skipped if "malformed" in s.reason} == {
        "malformed row: question 0: 'model_name' must be a JSON string, got null": ["qd.jsonl:2"],
        "malformed row: a value of this row is refused: systems.1: a system name is empty; "
        "name the system, or 'unknown' when none is": ["qd.jsonl:3"],
        "malformed row: question 0: 'reason' must be a JSON string, got null": ["qd.jsonl:4"],
    }
    table = C3_SOURCE.read_text("utf-8").splitlines()[:4]
    table[2] = table[2].rsplit("\t", 1)[0] + "\t"  # an empty credit
    suite = build_suite("challenge300", write(tmp_path / "c3.tsv", table), skip_malformed=True)
    assert suite.manifest.counts.groups == 2
    [record] = [s for s in suite.manifest.skipped if s.reason.startswith("malformed row")]
    # the value beside its place, so that rows of other values count under one reason
    assert record.examples == ["c3.tsv:3 ('')"] and record.reason.endswith("value is not a number")


def test_an_archive_for_a_one_file_adapter_says_so(tmp_path):
    # its bytes were read as the table: "q.tar.gz:1: invalid JSON"
    archive = tmp_path / "q.tar.gz"
    with tarfile.open(archive, "w:gz") as handle:
        handle.add(QD_SOURCE, "quiz_design_groups.jsonl")
    with pytest.raises(SourceFormatError, match="q.tar.gz: an archive, but this adapter reads"):
        build_suite("quiz_design", archive)


def test_missing_source_file(tmp_path):
    with pytest.raises(SourceFormatError, match="nope.jsonl: source file not found"):
        build_suite("quiz_design", tmp_path / "nope.jsonl")


def test_unknown_adapter(capsys):
    with pytest.raises(UnknownItemError, match=r"unknown adapter 'mqm2' \(known: .*quiz_design"):
        build_suite("mqm2")
    with pytest.raises(
        UnknownItemError, match="unknown adapter 'quiz_desing'; did you mean 'quiz_design'"
    ):
        build_suite("quiz_desing")
    assert main(["build", "mqm2"]) == UnknownItemError.exit_status
    assert "unknown adapter 'mqm2'" in capsys.readouterr().err


def test_file_url_source_is_refused_with_the_local_path_to_give(tmp_path):
    """Only http(s) URLs are fetched: a file:// URL is a usage error that says what to pass."""
    with pytest.raises(NNDError, match="only http:// and https:// URLs are read .*local path"):
        build_suite("challenge300", C3_SOURCE.as_uri())
    assert len(build_suite("challenge300", str(C3_SOURCE))) == 807


def test_http_url_source_is_downloaded_once_into_the_cache(tmp_path):
    server = start_server(quiet_file_handler(C3_SOURCE.parent))
    try:
        url = f"http://127.0.0.1:{server.server_port}/{C3_SOURCE.name}"
        assert len(build_suite("challenge300", url)) == 807
    finally:
        stop_server(server)
    assert len(build_suite("challenge300", url)) == 807  # the server is gone: from the cache
