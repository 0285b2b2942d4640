"""Source rows that used to give a wrong suite, or a traceback, now give a file:line error."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from nnd_suites import NNDError, SourceFormatError, build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.cli import main
from nnd_suites.infra.atomic import atomic_directory, atomic_write_text
from nnd_suites.records.pairs import pair_id

QD_SOURCE = get_adapter("quiz_design").default_source_path()
C3_SOURCE = get_adapter("challenge300").default_source_path()
MQM_SOURCE = get_adapter("wmt_mqm").default_source_path()


def head(source: Path, n: int) -> list[str]:
    return source.read_text("utf-8").splitlines()[:n]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def add_column(lines: list[str], column: int, name: str, value: str | None = None) -> list[str]:
    """Append a column named ``name`` holding a copy of column ``column`` (or ``value``)."""
    rows = [line.split("\t") for line in lines]
    return ["\t".join([*rows[0], name])] + [
        "\t".join([*row, row[column] if value is None else value]) for row in rows[1:]
    ]


def test_repeated_answer_column_is_refused_with_both_positions(tmp_path):
    lines = add_column(head(C3_SOURCE, 20), 4, '"Macaw-11B"')  # Macaw-3B's answers
    with pytest.raises(
        SourceFormatError,
        match=r"c3.tsv:1: column 'Macaw-11B' appears twice in the header \(columns 4 and 21\)",
    ):
        build_suite("challenge300", write(tmp_path / "c3.tsv", lines))


def test_repeated_severity_column_is_refused(tmp_path, capsys):
    lines = add_column(head(MQM_SOURCE, 30), 0, "severity", "No-error")
    path = write(tmp_path / "mqm_ted_ende.tsv", lines)
    out = tmp_path / "suite"
    assert (
        main(["build", "wmt_mqm", "--source", str(path), "--out", str(out)]) == 3
    )  # SourceFormatError
    assert "mqm_ted_ende.tsv:1: column 'severity' appears twice" in capsys.readouterr().err
    assert not out.exists()


def test_stray_quote_inside_a_field_is_an_error_not_a_changed_text(tmp_path):
    lines = head(C3_SOURCE, 4)
    fields = lines[2].split("\t")
    fields[1] = '"x"y' + fields[1].strip('"')  # was silently read as xyHow...
    lines[2] = "\t".join(fields)
    path = write(tmp_path / "c3.tsv", lines)
    with pytest.raises(SourceFormatError, match=r"c3.tsv:3: unreadable row: .*expected after"):
        build_suite("challenge300", path)
    suite = build_suite("challenge300", path, skip_malformed=True)
    assert suite.manifest.counts.groups == 2
    assert [s.examples for s in suite.manifest.skipped if "unreadable" in s.reason] == [
        ["c3.tsv:3"]
    ]


def test_quote_left_open_does_not_swallow_the_next_lines(tmp_path):
    lines = head(C3_SOURCE, 5)
    lines[2] = lines[2].replace('"\t"', '\t"', 1)  # drop the quote closing the id
    with pytest.raises(SourceFormatError, match=r"c3.tsv:3: (unreadable row|quoted field runs)"):
        build_suite("challenge300", write(tmp_path / "c3.tsv", lines))
    header = ['"', *head(C3_SOURCE, 4)]  # found by the fuzzer: the header took in line 2
    header[1] = header[1][1:]
    with pytest.raises(SourceFormatError, match=r"c3.tsv:1: the header runs to line 2"):
        build_suite("challenge300", write(tmp_path / "c3.tsv", header))


def test_empty_source_is_an_error_that_says_what_was_read(tmp_path, capsys):
    path = write(tmp_path / "qd.jsonl", [])
    with pytest.raises(SourceFormatError, match=r"qd.jsonl: no pair built: read 0 row\(s\)"):
        build_suite("quiz_design", path)
    out = tmp_path / "out"
    assert (
        main(["build", "quiz_design", "--source", str(path), "--out", str(out)]) == 3
    )  # SourceFormatError
    assert not out.exists()


def test_zero_pairs_names_the_skip_reasons(tmp_path):
    rows = [json.loads(line) for line in head(QD_SOURCE, 2)]
    for row in rows:
        for question in row["questions"]:
            question["reason"], question["label"] = "No error", 1  # the label agrees
    path = write(tmp_path / "qd.jsonl", [json.dumps(row) for row in rows])
    with pytest.raises(
        SourceFormatError,
        match=r"read 2 row\(s\) giving 2 group\(s\) with \d+ candidate\(s\); left out: "
        r".*2 group\(s\) had no two candidates of different quality",
    ):
        build_suite("quiz_design", path)


def test_empty_required_field_is_an_error_or_a_counted_skip(tmp_path):
    lines = head(MQM_SOURCE, 40)
    bad = next(i for i, line in enumerate(lines) if i and "\tMajor" in line)
    fields = lines[bad].split("\t")
    fields[7] = ""  # the MQM category
    lines[bad] = "\t".join(fields)
    path = write(tmp_path / "mqm_ted_ende.tsv", lines)
    with pytest.raises(SourceFormatError, match=rf":{bad + 1}: empty field\(s\) \['category'\]"):
        build_suite("wmt_mqm", path)
    suite = build_suite("wmt_mqm", path, skip_malformed=True)
    assert "" not in {pair.category for pair in suite.pairs}
    [skip] = [s for s in suite.manifest.skipped if "empty field" in s.reason]
    assert skip.count == 1 and skip.examples == [f"mqm_ted_ende.tsv:{bad + 1}"]


def test_field_longer_than_csv_default_limit_is_read(tmp_path):
    lines = head(C3_SOURCE, 6)
    for number in range(1, len(lines)):
        fields = lines[number].split("\t")
        fields[1] = f'"{number} ' + "why " * 50_000 + '?"'  # over csv's 131,072 characters
        lines[number] = "\t".join(fields)
    suite = build_suite("challenge300", write(tmp_path / "c3.tsv", lines))
    assert suite.manifest.counts.groups == 5
    assert min(len(pair.context["question"]) for pair in suite.pairs) > 200_000


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda q, row: q.update(question=123),
            r"text: Input should be a valid string \(got int\)",
        ),
        (lambda q, row: q.update(question=None), r"got NoneType"),
        (lambda q, row: row.update(context=["a", "b"]), r"got list"),
        (lambda q, row: row.update(questions="abc"), r"'questions' must be a JSON list"),
    ],
)
def test_wrong_json_type_is_a_line_error(tmp_path, change, message):
    lines = head(QD_SOURCE, 3)
    row = json.loads(lines[1])
    change(row["questions"][0], row)
    lines[1] = json.dumps(row)
    with pytest.raises(SourceFormatError, match=r"qd.jsonl:2: ") as error:
        build_suite("quiz_design", write(tmp_path / "qd.jsonl", lines))
    assert error.value.line == 2
    assert re.search(message, str(error.value))


def test_lone_surrogate_is_a_line_error(tmp_path):
    lines = head(QD_SOURCE, 3)
    row = json.loads(lines[2])
    row["questions"][0]["question"] = "What \ud800?"
    lines[2] = json.dumps(row)  # ASCII JSON: the surrogate is written as the escape \ud800
    with pytest.raises(SourceFormatError, match=r"qd.jsonl:3: .*lone UTF-16 surrogate"):
        build_suite("quiz_design", write(tmp_path / "qd.jsonl", lines))
    with pytest.raises(NNDError, match="not valid Unicode"):
        pair_id("group-1", {"answer": "x"}, "a \udfff b")


@pytest.mark.parametrize(
    ("umask", "file_mode", "dir_mode"), [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700)]
)
def test_written_files_follow_the_umask(tmp_path, umask, file_mode, dir_mode):
    old = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "a.txt", "x")
        with atomic_directory(tmp_path / "folder") as folder:
            (folder / "b.txt").write_text("y")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == file_mode
    assert stat.S_IMODE((tmp_path / "folder").stat().st_mode) == dir_mode
