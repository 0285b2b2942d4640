"""wmt_mqm: the figures on the shipped TED file, and every released file layout."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.cli import main
from nnd_suites.errors import NNDError, SourceFormatError
from nnd_suites.sources import ReadLog

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"


def cli_stats(args: list[str], out: Path, capsys) -> dict:
    assert main(["build", "wmt_mqm", "--out", str(out), *args]) == 0
    capsys.readouterr()
    assert main(["stats", str(out), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_figures_on_the_shipped_file(tmp_path, capsys):
    stats = cli_stats([], tmp_path / "mqm", capsys)
    # every one of the 8,435 rows is read (most end with an empty comment column)
    assert stats["groups"] == 529
    assert stats["candidates"] == 7406
    assert stats["pairs"] == 17722
    assert stats["breakdowns"]["severity"] == {"Minor": 9163, "Major": 8559}
    assert stats["breakdowns"]["label"] == stats["breakdowns"]["severity"]
    assert stats["breakdowns"]["category"] == {
        "Style": 7493,
        "Accuracy": 5240,
        "Fluency": 3071,
        "Terminology": 1788,
        "Other": 130,
    }
    # Identical translations of two systems judged differently by two raters are kept and
    # reported (the published figure counts them); their tests are degenerate.
    assert stats["conflicting_texts"] == 567
    assert stats["degenerate_pairs"] == 2080
    assert stats["skipped"] == {}


def test_degenerate_pairs_are_the_identical_text_pairs(wmt_mqm_suite):
    """17,722 (Major 8,559, Minor 9,163) counts every (error-free, erroneous) candidate pair;
    2,080 of them have the same text on both sides."""
    adapter = get_adapter("wmt_mqm")()
    all_pairs, same_text = Counter(), Counter()
    for group in adapter.read(adapter.default_source_path(), ReadLog()):
        good = [c for c in group.candidates if c.label == "No-error"]
        for low in (c for c in group.candidates if c.label != "No-error"):
            all_pairs[low.label] += len(good)
            same_text[low.label] += sum(high.text == low.text for high in good)
    assert all_pairs == {"Major": 8559, "Minor": 9163}
    suite = wmt_mqm_suite
    degenerate = Counter(p.label for p in suite.pairs if p.high.text == p.low.text)
    assert degenerate == same_text
    assert sum(degenerate.values()) == suite.manifest.counts.degenerate_pairs == 2080


def test_judging_identical_translations_together(tmp_path, capsys):
    stats = cli_stats(["--option", "judge_identical_together=true"], tmp_path / "m", capsys)
    assert stats["pairs"] == 8508
    assert stats["breakdowns"]["severity"] == {"Major": 4435, "Minor": 4073}
    assert stats["skipped"] == {}


def write(path: Path, rows: list[str], header: str = HEADER) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def row(system, seg, target, category, severity, source="Guten Tag.", rater="rater1"):
    return "\t".join([system, "doc1", "1", seg, rater, source, target, category, severity])


def test_newstest_layout_without_comment_column_and_name_language_pair(tmp_path):
    # newstest2020 style: 9 columns, lower-case no-error, Non-translation!, Source error, Neutral,
    # several raters per segment; quotes are text (the files are not CSV-quoted).
    path = write(
        tmp_path / "mqm_newstest2020_zhen.tsv",
        [
            row("A.1", "1", 'Good "day".', "no-error", "no-error"),
            row("B.2", "1", "Bad <v>day</v>.", "Fluency/Punctuation", "Minor"),
            row("B.2", "1", "Bad <v>day</v>.", "Style/Awkward", "Minor", rater="rater2"),
            row("C.3", "1", "xx", "Non-translation!", "Major"),
            row("C.3", "1", "<v>xx</v>", "Accuracy/Omission", "Major"),
            row("D.4", "1", "Hello.", "Source error", "Minor"),
            row("E.5", "1", "Hi.", "Style/Awkward", "Neutral"),
            row("F.6", "1", "Good day!", "No-error", "No-error"),
            row("F.6", "1", "Good day!", "Source error", "Minor", rater="rater2"),
        ],
    )
    suite = build_suite("wmt_mqm", path)
    lows = {p.low.systems[0]: p for p in suite.pairs}
    assert set(lows) == {"B.2", "C.3"}
    assert {p.high.text for p in suite.pairs} == {'Good "day".'}
    # the worst error decides: Minor Style (1) over Minor Punctuation (0.1); Non-translation (25)
    assert lows["B.2"].category_path == ["Style", "Awkward"] and lows["B.2"].label == "Minor"
    assert lows["B.2"].low.text == "Bad day."
    assert lows["C.3"].category == "Non-translation!" and lows["C.3"].label == "Major"
    assert suite.pairs[0].context == {
        "source": "Guten Tag.",
        "source_language": "zh",
        "target_language": "en",
    }
    assert suite.stats()["skipped"] == {
        "annotation row ignored: Neutral severity (weight 0, a preference)": 1,
        "annotation row ignored: source error, not a translation error": 2,
        "candidate with only source-error or Neutral rows: neither error-free nor in error": 3,
    }
    # each ignored row named by its line (header: line 1)
    examples = {s.reason: s.examples for s in suite.manifest.skipped}
    assert examples["annotation row ignored: source error, not a translation error"] == [
        f"{path.name}:7",
        f"{path.name}:10",
    ]
    assert examples["annotation row ignored: Neutral severity (weight 0, a preference)"] == [
        f"{path.name}:8"
    ]


def test_language_pair_option_and_missing_pair(tmp_path):
    path = write(tmp_path / "ratings.tsv", [row("A", "1", "Hallo.", "No-error", "No-error")])
    with pytest.raises(SourceFormatError, match="language_pair=en-de"):
        build_suite("wmt_mqm", path)
    adapter = get_adapter("wmt_mqm")(language_pair="en-ru")
    group = next(adapter.read(path, ReadLog()))
    assert (group.context["source_language"], group.context["target_language"]) == ("en", "ru")


def test_source_marks_are_removed_from_the_context(tmp_path):
    path = write(
        tmp_path / "mqm_ted_ende.tsv",
        [
            row("A", "7", "Hallo.", "No-error", "No-error", source="Hello."),
            row("B", "7", "Hal.", "Accuracy/Omission", "Major", source="<v>Hello</v>."),
        ],
    )
    (pair,) = build_suite("wmt_mqm", path).pairs
    assert pair.context["source"] == "Hello."


@pytest.mark.parametrize(
    ("bad_row", "reason"),
    [
        (row("A", "1", "x", "Style/Awkward", "Huge"), "unknown severity 'Huge'"),
        (row("A", "1", "x", "Style/Awkward", "Minor") + "\tnote\textra", "row has 11"),
        (row("", "1", "x", "No-error", "No-error"), "empty field(s) ['system']"),
    ],
)
def test_malformed_rows_are_reported_with_line_numbers(tmp_path, capsys, bad_row, reason):
    good = [row("G", "1", "Gut.", "No-error", "No-error"), row("B", "1", "Schl.", "Other", "Minor")]
    header = HEADER + "\tcomment"
    path = write(tmp_path / "mqm_ted_ende.tsv", [*good, bad_row], header=header)
    with pytest.raises(SourceFormatError) as error:
        build_suite("wmt_mqm", path)
    assert error.value.line == 4 and reason in str(error.value)
    out = tmp_path / "suite"
    assert (
        main(["build", "wmt_mqm", "--source", str(path), "--out", str(out)])
        == SourceFormatError.exit_status
    )
    assert f"mqm_ted_ende.tsv:4: {reason}"[:40] in capsys.readouterr().err
    assert not out.exists()
    stats = cli_stats(["--source", str(path), "--skip-malformed"], out, capsys)
    assert stats["pairs"] == 1
    manifest = json.loads((out / "manifest.json").read_text())
    (record,) = [s for s in manifest["skipped"] if s["reason"].startswith("malformed row")]
    assert record["count"] == 1 and record["examples"] == ["mqm_ted_ende.tsv:4"]


@pytest.mark.parametrize(
    ("damaged", "reason"),
    [
        (row("A", "1", "Tag.", "Accuracy/Omission", "Majr"), "unknown severity 'Majr'"),
        (row("A", "1", "Tag.", "", "Major"), "empty field(s) ['category']"),
        (row("", "1", "Tag.", "Accuracy/Omission", "Major"), "empty field(s) ['system']"),
        # the wrong number of fields: system and segment come first, and the segment is in the
        # file, so the row is A's
        (row("A", "1", "Tag.\tx", "Accuracy/Omission", "Major"), "row has 10 tab-separated"),
        (row("A", "1", "Tag.", "Accuracy/Omission", "Major")[:-16], "row has 8 tab-separated"),
    ],
)
def test_a_candidate_with_a_malformed_row_is_left_out_whole(tmp_path, damaged, reason):
    # A's Major error row is malformed, its other rater found no error: judged on the rows left,
    # A passed as No-error and beat B (a Minor error) with exit 0, a test the raters never made
    rows = [
        damaged,
        row("A", "1", "Tag.", "No-error", "No-error", rater="rater2"),
        row("B", "1", "Tak.", "Fluency/Spelling", "Minor"),
        row("C", "1", "Guten Tag.", "No-error", "No-error"),
        row("D", "2", "Gut.", "No-error", "No-error", source="Good."),
        row("E", "2", "Gud.", "Fluency/Spelling", "Minor", source="Good."),
    ]
    path = write(tmp_path / "mqm_ted_ende.tsv", rows)
    with pytest.raises(SourceFormatError, match=re.escape(reason)):
        build_suite("wmt_mqm", path)
    suite = build_suite("wmt_mqm", path, skip_malformed=True)
    tests = [(p.high.systems, p.low.systems) for p in suite.pairs]
    skipped = suite.stats()["skipped"]
    (malformed,) = [r for r in skipped if r.startswith("malformed row")]
    assert malformed.startswith(f"malformed row: {reason}") and skipped[malformed] == 1
    (whole,) = [r for r in skipped if r.startswith("candidate left out whole")]
    # C (No-error) beats B, and A (told by its translation where the row names no system) is in
    # no test
    assert tests == [(["C"], ["B"]), (["D"], ["E"])] and skipped[whole] == 1


def test_an_option_given_twice_is_refused(tmp_path, capsys):
    argv = [
        "build",
        "wmt_mqm",
        "--option",
        "language_pair=en-de",
        "--option",
        "language_pair=zh-en",
    ]
    assert main([*argv, "--out", str(tmp_path / "s")]) == NNDError.exit_status
    assert "--option: 'language_pair' given twice ('en-de' and 'zh-en')" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("damaged", "reason"),
    [
        (row("A", "1", "Tag.", "Accuracy/Omission", "Major").replace("\t", " ", 1), "row has 8"),
        (row("A\tx", "1", "Tag.", "Accuracy/Omission", "Major"), "row has 10"),
        (row("A", "", "Tag.", "Accuracy/Omission", "Major"), "empty field(s) ['seg_id']"),
        (row("", "1", "", "Accuracy/Omission", "Major"), "empty field(s) ['system']"),
    ],
)
def test_a_malformed_row_whose_candidate_cannot_be_told_stops_the_build(tmp_path, damaged, reason):
    # Left out alone, A's Major error row would leave A judged on rater2's No-error row: A would
    # beat B (a Minor error) with exit 0. Fields out of their columns (a tab missing or added
    # before the segment's last field), or no segment, name no candidate to leave out with it.
    rows = [
        damaged,
        row("A", "1", "Tag.", "No-error", "No-error", rater="rater2"),
        row("B", "1", "Tak.", "Fluency/Spelling", "Minor"),
    ]
    path = write(tmp_path / "mqm_ted_ende.tsv", rows)
    with pytest.raises(SourceFormatError, match=rf"tsv:2: {re.escape(reason)}.*cannot be told"):
        build_suite("wmt_mqm", path, skip_malformed=True)


def test_an_error_category_written_two_ways_is_named_not_read_as_two(tmp_path):
    """MQM's error paths come from the data: 'accuracy/omission' beside 'Accuracy/Omission'
    made two error categories (exit 0), where a source.yaml's rows are refused."""
    path = write(
        tmp_path / "mqm_ted_ende.tsv",
        [
            row("A", "1", "Gut.", "No-error", "No-error"),
            row("B", "1", "Gu.", "Accuracy/Omission", "Major"),
            row("A", "2", "Tag.", "No-error", "No-error", source="Day."),
            row("B", "2", "Ta.", "accuracy/omission", "Major", source="Day."),
        ],
    )
    with pytest.raises(SourceFormatError) as raised:
        build_suite("wmt_mqm", path)
    message = str(raised.value)
    assert "category 'accuracy/omission' is 'Accuracy/Omission'" in message, message
    assert "mqm_ted_ende.tsv:5" in message and "(first at mqm_ted_ende.tsv:3" in message
    assert "write each category one way in the source" in message
