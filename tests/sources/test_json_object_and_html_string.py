"""Readers for a file holding one JSON object, HTML tables held in strings, numbers from JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from nnd_suites.errors import SourceFormatError
from nnd_suites.records.groups import Candidate
from nnd_suites.sources import (
    ReadLog,
    parse_number,
    read_json_array,
    read_json_object,
    read_jsonl,
)
from nnd_suites.sources.html_table import parse_html_table, read_html_table

FIXTURE = Path(__file__).parents[1] / "adapters" / "example_ratings" / "fixtures" / "five_aspects"


def test_json_object_entries_keep_their_lines_and_keys(tmp_path):
    path = tmp_path / "inputs.json"
    path.write_text('{\n  "d1": {"a": 1},\n\n  "d2": [1,\n 2],\n  "d3": "x"\n}\n')
    log = ReadLog()
    assert list(read_json_object(path, log)) == [
        (2, "d1", {"a": 1}),
        (4, "d2", [1, 2]),
        (6, "d3", "x"),
    ]
    assert log.rows == 3 and log.files == {path: None}
    empty = tmp_path / "empty.json"
    empty.write_text(" {} ")
    assert list(read_json_object(empty)) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{\n"a": 1,\n"b": 2,\n"a": 3}',
            r"inputs\.json:4: key 'a' is written twice \(first on line 2\)",
        ),
        ('{\n"a": 1,\n"b": [1,\n2,]}', r"inputs\.json:4: not a JSON document: Expecting value"),
        ('{"a": 1\n"b": 2}', r"inputs\.json:2: not a JSON document: expected ',' or '}'"),
        ('{"a": 1,\n 7: 2}', r"inputs\.json:2: not a JSON document: expected a key"),
        ('[{"a": 1}]', r"inputs\.json:1: expected a JSON object, got a list"),
        ('{"a": 1}\n{"b": 2}', r"inputs\.json:2: not a JSON document: extra data"),
        ('{"a": "\\ud800"}', r"inputs\.json:1: .*lone UTF-16 surrogate"),
        # inside an entry too: the last value would silently win
        ('{"x": 0,\n"w1": {"fluency": 90, "fluency": 10}}', r"inputs\.json:2: .*'fluency'.* twice"),
    ],
)
def test_json_object_errors_name_the_line(tmp_path, text, message):
    path = tmp_path / "inputs.json"
    path.write_text(text)
    with pytest.raises(SourceFormatError, match=message):
        list(read_json_object(path))


def test_a_key_written_twice_in_a_row_is_malformed_not_the_last_value(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"out": "hi", "r1": 90}\n{"out": "hey", "r1": 60, "r2": 70, "r1": 0}\n')
    with pytest.raises(SourceFormatError, match=r"rows\.jsonl:2: invalid JSON: .*\['r1'\] appear"):
        list(read_jsonl(rows))
    log = ReadLog(skip_malformed=True)  # --skip-malformed: the row is left out, and counted
    assert list(read_jsonl(rows, log)) == [(1, {"out": "hi", "r1": 90})]
    assert log.skipped.examples == {
        "malformed row: invalid JSON: key(s) ['r1'] appear twice in one object; keep one": [
            "rows.jsonl:2"
        ]
    }
    listed = tmp_path / "rows.json"
    listed.write_text('[{"out": "hi", "r1": 90},\n {"out": "hey", "r1": 60, "r1": 0}]')
    with pytest.raises(SourceFormatError, match=r"rows\.json:2: .*\['r1'\] appear twice"):
        list(read_json_array(listed))


def test_html_table_in_a_string_reads_like_the_file_reader():
    text = (FIXTURE / "inputs.html").read_text()
    from_file = list(read_html_table(FIXTURE / "inputs.html"))
    assert from_file and parse_html_table(text, Path("inputs.json"), 3) == from_file


def test_html_cell_text_breaks_where_a_browser_breaks_it():
    page = (
        "<table><tr><th>id</th><th>input</th></tr>\n"
        "<tr><td>1</td><td>name[The Eagle]<br>food[French]</td></tr>\n"
        "<tr><td>2</td><td><p>first</p><p>second</p></td></tr>\n"
        "<tr><td>3</td><td><ul><li>one</li><li>two</li></ul> <b>bo</b>ld</td></tr></table>"
    )
    rows = [row["input"] for _, row in parse_html_table(page, Path("x.json"), 3, key="Id1")]
    assert rows == ["name[The Eagle] food[French]", "first second", "one two bold"]


def test_html_table_in_a_string_names_the_file_key_and_row():
    html = "<table>\n<tr><th>s</th><th>o</th></tr>\n<tr><td>A &amp; B</td><td> x  y </td></tr>\n"
    rows = parse_html_table(
        html + "<tr><td>1</td></tr></table>",
        Path("in.json"),
        7,
        key="d1",
        log=ReadLog(skip_malformed=True),
    )
    assert rows == [(3, {"s": "A & B", "o": "x y"})]
    with pytest.raises(
        SourceFormatError, match=r"in\.json:7: d1: HTML line 4: 1 cells, the header has 2"
    ):
        parse_html_table(html + "<tr><td>1</td></tr></table>", Path("in.json"), 7, key="d1")
    with pytest.raises(SourceFormatError, match=r"in\.json:7: d2: no table number 1 with rows"):
        parse_html_table("no table", Path("in.json"), 7, key="d2")


def test_parse_number_takes_json_values_and_says_out_of_range():
    path = Path("ratings.json")
    values = json.loads('[55, 7.5, "80", 0, 100]')
    assert [parse_number(v, path, 3, key="w1.fluency", low=0, high=100) for v in values] == [
        55.0,
        7.5,
        80.0,
        0.0,
        100.0,
    ]
    for value, message in [
        (110, r"ratings\.json:3: w1\.fluency: 110 out of range \[0, 100\]"),
        ("-1", r"ratings\.json:3: w1\.fluency: '-1' out of range \[0, 100\]"),
        (True, r"ratings\.json:3: w1\.fluency: true is not a number"),
        (None, r"ratings\.json:3: w1\.fluency: null is not a number"),
        ("NaN", r"ratings\.json:3: w1\.fluency: 'NaN' is not a number"),
    ]:
        with pytest.raises(SourceFormatError, match=message):
            parse_number(value, path, 3, key="w1.fluency", low=0, high=100)
    # a number written, too large for a float: said so, not "not a number"
    overflows = r"r\.tsv:2: column 'f': '1e999' is beyond 1e\+100 in magnitude: no rating \(it"
    with pytest.raises(SourceFormatError, match=overflows):
        parse_number("1e999", Path("r.tsv"), 2, "f")
    with pytest.raises(SourceFormatError, match=r"r\.tsv:2: column 'f': 'inf' is not a number"):
        parse_number("inf", Path("r.tsv"), 2, "f")
    with pytest.raises(SourceFormatError, match=r"r\.tsv:2: -3 out of range \[0, inf\]"):
        parse_number(-3, Path("r.tsv"), 2, low=0)


def test_a_number_too_large_to_sum_is_no_rating():
    # 1.7e308 twice overflows: a mean raised OverflowError, a sum wrote an infinite gap
    with pytest.raises(SourceFormatError, match=r"r\.csv:2: column 'r1': '1\.7e308' is beyond"):
        parse_number("1.7e308", Path("r.csv"), 2, "r1")
    assert parse_number("-1e100", Path("r.csv"), 2, "r1") == -1e100
    with pytest.raises(ValidationError, match=r"1\.7e\+308 is no rating"):
        Candidate(text="hi", systems=["A"], ratings={"r": [1.7e308, 1.0]})
