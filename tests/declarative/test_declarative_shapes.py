"""The rating shapes a table may have: one row per (rater, output) gathered into one candidate,
the aspect as a column, a JSON list column holding every rater's value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nnd_suites.declarative.plugin import declared_adapter
from nnd_suites.declarative.reader import GATHERED_LEFT_OUT
from nnd_suites.errors import DeclarationError, SourceFormatError
from nnd_suites.sources import ReadLog

HEADER = """\
name: shapes
quality_map: shapes
metadata:
  task: summarization
  languages: [en]
  annotation_type: numeric
  license: MIT
  citation: "@misc{x}"
  source_urls: [https://example.org]
  description: shapes
group:
  key: [doc]
  context: {document: doc}
template: "{document}"
"""


def _groups(tmp_path: Path, body: str, name: str, rows: str, log: ReadLog | None = None) -> list:
    (tmp_path / "source.yaml").write_text(HEADER + body, "utf-8")
    (tmp_path / name).write_text(rows, "utf-8")
    cls = declared_adapter("shapes", tmp_path)
    cls.name = "shapes"  # what registering it would set
    return list(cls().read(tmp_path / name, log or ReadLog()))


def test_one_row_per_rater_and_aspect_is_gathered_into_one_candidate(tmp_path):
    body = (
        "file: {format: tsv}\ncandidates:\n  text: summary\n  system: model\n"
        "  rater: worker\n  aspect_column: aspect\n  value: score\n"
    )
    rows = "doc\tsummary\tmodel\tworker\taspect\tscore\n" + "".join(
        f"d\t{text}\t{model}\t{worker}\t{aspect}\t{score}\n"
        for text, model, worker, aspect, score in [
            ("s1", "m1", "w1", "fluency", 5),
            ("s1", "m1", "w2", "fluency", 4),
            ("s1", "m1", "w1", "relevance", 3),
            ("s2", "m2", "w1", "fluency", 1),
            ("s2", "m2", "w2", "relevance", 2),
        ]
    )
    (group,) = _groups(tmp_path, body, "rows.tsv", rows)
    assert [(c.text, c.ratings) for c in group.candidates] == [
        ("s1", {"fluency": [5.0, 4.0], "relevance": [3.0]}),
        ("s2", {"fluency": [1.0], "relevance": [2.0]}),
    ]


def test_a_json_list_column_gives_every_raters_value(tmp_path):
    body = (
        "file: {format: jsonl}\ncandidates:\n  text: summary\n"
        "  ratings: {coherence: ratings.coherence}\n"
    )
    rows = (
        '{"doc": "d", "summary": "a", "ratings": {"coherence": [1, 2, 3]}}\n'
        '{"doc": "d", "summary": "b", "ratings": {"coherence": [4, 5, 5]}}\n'
    )
    (group,) = _groups(tmp_path, body, "rows.jsonl", rows)
    assert [c.ratings for c in group.candidates] == [
        {"coherence": [1.0, 2.0, 3.0]},
        {"coherence": [4.0, 5.0, 5.0]},
    ]
    assert [c.systems for c in group.candidates] == [["unknown"], ["unknown"]]


GATHERED = (
    "file: {format: tsv}\ncandidates:\n  text: summary\n  system: model\n"
    "  rater: worker\n  aspect_column: aspect\n  value: score\n"
)


def _rated(rows: list[tuple]) -> str:
    return "doc\tsummary\tmodel\tworker\taspect\tscore\n" + "".join(
        "d\t" + "\t".join(map(str, row)) + "\n" for row in rows
    )


def test_gathered_rows_keep_their_raters_and_a_rating_given_twice_is_malformed(tmp_path):
    rows = [
        ("s1", "m1", "w1", "fluency", 5),
        ("s1", "m1", "w2", "fluency", 4),
        ("s1", "m1", "w2", "relevance", 2),
        ("s1", "m1", "w1", "relevance", 3),
        ("s2", "m2", "w2", "fluency", 1),
        ("s2", "m2", "w2", "relevance", 2),
    ]
    (group,) = _groups(tmp_path, GATHERED, "rows.tsv", _rated(rows))
    assert [(c.raters, c.ratings) for c in group.candidates] == [
        (["w1", "w2"], {"fluency": [5.0, 4.0], "relevance": [3.0, 2.0]}),  # raters' order
        (["w2"], {"fluency": [1.0], "relevance": [2.0]}),
    ]
    twice = _rated([*rows, ("s1", "m1", "w1", "fluency", 1)])  # it would weigh twice in a mean
    with pytest.raises(
        SourceFormatError, match=r"rows\.tsv:8: a rater rated 'fluency' .*again \(rater 'w1'"
    ):
        _groups(tmp_path, GATHERED, "rows.tsv", twice)
    log = ReadLog(skip_malformed=True)
    (kept,) = _groups(tmp_path, GATHERED, "rows.tsv", twice, log)
    assert kept.candidates[0].ratings == {"fluency": [5.0, 4.0], "relevance": [3.0, 2.0]}
    assert sum(log.skipped.counts.values()) == 1


#: w2's rating of s1 (line 3) is no number: s1 judged on w1's 1 alone would lose to s2's mean
#: of 3, where w2 gave s1 a 5 (a mean, a majority moved by a row left out, with exit 0)
W2_RATING_OF_S1_BROKEN = [
    ("s1", "m1", "w1", "fluency", 1),
    ("s1", "m1", "w2", "fluency", "five"),
    ("s2", "m2", "w1", "fluency", 3),
    ("s2", "m2", "w2", "fluency", 3),
    ("s3", "m3", "w1", "fluency", 2),
    ("s3", "m3", "w2", "fluency", 2),
]


def test_a_gathered_output_with_a_malformed_rating_row_is_left_out_whole(tmp_path):
    rows = W2_RATING_OF_S1_BROKEN
    with pytest.raises(SourceFormatError, match=r"rows\.tsv:3: "):
        _groups(tmp_path, GATHERED, "rows.tsv", _rated(rows))
    log = ReadLog(skip_malformed=True)
    (group,) = _groups(tmp_path, GATHERED, "rows.tsv", _rated(rows), log)
    assert [c.text for c in group.candidates] == ["s2", "s3"]
    reasons = log.skipped.counts
    assert [r for r in reasons if r.startswith("malformed row")] and sum(reasons.values()) == 2
    assert reasons[GATHERED_LEFT_OUT] == 1
    assert log.skipped.examples[GATHERED_LEFT_OUT] == ["rows.tsv:2"]


def test_an_empty_rater_cell_is_malformed_not_a_rater_named_empty(tmp_path):
    # Read as a rater named '', two empty cells on two outputs would be one person, and their
    # ratings would make a vote (and a margin) nobody gave.
    rows = [
        ("s1", "m1", "w1", "fluency", 5),
        ("s1", "m1", "", "fluency", 4),
        ("s2", "m2", "w1", "fluency", 1),
        ("s2", "m2", " ", "fluency", 2),
        ("s3", "m3", "w1", "fluency", 3),
        ("s4", "m4", "w1", "fluency", 2),
    ]
    with pytest.raises(SourceFormatError, match=r"rows\.tsv:3: empty rater cell \(column 'worker'"):
        _groups(tmp_path, GATHERED, "rows.tsv", _rated(rows))
    log = ReadLog(skip_malformed=True)
    # with --skip-malformed the row is counted, and its output, rated by a rater it cannot
    # name, is left out whole (as any output a malformed rating row rated)
    (kept,) = _groups(tmp_path, GATHERED, "rows.tsv", _rated(rows), log)
    assert [(c.text, c.raters, c.ratings) for c in kept.candidates] == [
        ("s3", ["w1"], {"fluency": [3.0]}),
        ("s4", ["w1"], {"fluency": [2.0]}),
    ]
    assert log.skipped.counts[GATHERED_LEFT_OUT] == 2
    assert sum(log.skipped.counts.values()) == 4


def test_a_tsv_read_with_quoting_none_keeps_its_quotes_as_text(tmp_path):
    body = "file: {format: tsv, quoting: none}\ncandidates:\n  text: summary\n  ratings:\n" + (
        "    overall: score\n"
    )
    rows = 'doc\tsummary\tscore\nd\t"Hey," she said.\t4\nd\t"Hey"\t2\n'
    (group,) = _groups(tmp_path, body, "rows.tsv", rows)
    assert [c.text for c in group.candidates] == ['"Hey," she said.', '"Hey"']
    # read as csv quoting (the default), the first field is unreadable and the second unquoted
    with pytest.raises(SourceFormatError, match=r"rows\.tsv:2: unreadable row.*quoting: none"):
        _groups(tmp_path, body.replace(", quoting: none", ""), "rows.tsv", rows)
    with pytest.raises(DeclarationError, match="'quoting' is for tsv files, not csv"):
        _groups(tmp_path, body.replace("tsv,", "csv,"), "rows.csv", rows)


@pytest.mark.parametrize(
    ("damage", "fault"),
    [
        (lambda line: line.replace("\tfluency", "\t\tfluency"), r"row has 7 tab-separated fields"),
        (lambda line: line.replace("\tfluency\t5", ""), r"row has 4 tab-separated fields"),
        (lambda line: line.replace("d\t", "", 1), r"row has 5 tab-separated fields"),
    ],
)
def test_a_gathered_row_that_cannot_be_split_stops_the_build(tmp_path, damage, fault):
    # line 3 (w2's 5 for s1) cut apart: the output it rated cannot be told from fields out of
    # their columns, and s1 judged without it would lose to s2
    lines = _rated(W2_RATING_OF_S1_BROKEN).split("\n")
    lines[2] = damage(lines[2].replace("five", "5"))
    with pytest.raises(SourceFormatError, match=rf"rows\.tsv:3: {fault}.*cannot be told"):
        _groups(tmp_path, GATHERED, "rows.tsv", "\n".join(lines), ReadLog(skip_malformed=True))


def test_a_gathered_row_whose_group_or_output_cannot_be_read_stops_the_build(tmp_path):
    body = (
        "file: {format: jsonl}\ncandidates:\n  text: summary\n  system: model\n"
        "  rater: worker\n  aspect_column: aspect\n  value: score\n"
    )
    good = [
        {"doc": "d", "summary": "s1", "model": "m1", "worker": "w1", "aspect": "f", "score": 1},
        {"doc": "d", "summary": "s2", "model": "m2", "worker": "w1", "aspect": "f", "score": 3},
        {"doc": "d", "summary": "s2", "model": "m2", "worker": "w2", "aspect": "f", "score": 3},
    ]
    w2_of_s1 = {"doc": "d", "summary": "s1", "model": "m1", "worker": "w2", "aspect": "f"}
    bad_rows = ({**w2_of_s1, "doc": ["d"]}, {**w2_of_s1, "summary": {"s": 1}}, "[1]", "{not json")
    for bad in bad_rows:
        row = bad if isinstance(bad, str) else json.dumps({**bad, "score": 5})
        rows = "\n".join([json.dumps(good[0]), row, *map(json.dumps, good[1:])]) + "\n"
        with pytest.raises(SourceFormatError, match=r"rows\.jsonl:2: .*cannot be told"):
            _groups(tmp_path, body, "rows.jsonl", rows, ReadLog(skip_malformed=True))


UNNAMED = GATHERED.replace("  rater: worker\n", "")


def test_a_gathered_aspect_rated_twice_with_no_rater_column_is_malformed(tmp_path):
    # s1's fluency twice (line 3 repeats line 2 cell for cell): counted twice, the repeat made
    # s1's mean 3.67 over s2's 3, a test nobody's ratings support
    rows = [
        ("s1", "m1", "-", "fluency", 5),
        ("s1", "m1", "-", "fluency", 5),
        ("s1", "m1", "-", "relevance", 1),
        ("s2", "m2", "-", "fluency", 3),
        ("s2", "m2", "-", "relevance", 2),
        ("s3", "m3", "-", "fluency", 4),
    ]
    with pytest.raises(
        SourceFormatError,
        match=r"rows\.tsv:3: 'fluency' of this output is rated again; with no rater column "
        r".* \(first at rows\.tsv:2\)",
    ):
        _groups(tmp_path, UNNAMED, "rows.tsv", _rated(rows))
    # a repeat or a second, unnamed rater: the output is left out whole, both counted
    log = ReadLog(skip_malformed=True)
    (kept,) = _groups(tmp_path, UNNAMED, "rows.tsv", _rated(rows), log)
    assert [(c.text, c.ratings) for c in kept.candidates] == [
        ("s2", {"fluency": [3.0], "relevance": [2.0]}),
        ("s3", {"fluency": [4.0]}),
    ]
    assert log.skipped.counts[GATHERED_LEFT_OUT] == 1
    assert sum(log.skipped.counts.values()) == 2
    # one rating per aspect of each output is the shape as before
    (group,) = _groups(tmp_path, UNNAMED, "rows.tsv", _rated(rows[:1] + rows[2:]))
    assert group.candidates[0].ratings == {"fluency": [5.0], "relevance": [1.0]}
