"""A declared table is read where releases put it: gzip-compressed (by its name), as a member of
a tar or zip archive (``file.member``: ``--source`` is then the archive), in another encoding."""

from __future__ import annotations

import csv
import gzip
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.declarative.plugin import declared_adapter
from nnd_suites.errors import DeclarationError, SourceFormatError
from nnd_suites.sources import ReadLog

FIXTURE = ADAPTERS.get("simpeval_2022").folder() / "fixtures" / "simpeval_2022_sample.csv"
PAIRS = build_suite("simpeval_2022", FIXTURE).stats()["pairs"]


def _with_file_spec(tmp_path: Path, spec: str) -> object:
    """simpeval_2022's declaration with another ``file:`` part, as an adapter instance."""
    text = ADAPTERS.get("simpeval_2022").declared.path.read_text("utf-8")
    head, _, rest = text.partition("file:\n")
    rest = rest.split("group:", 1)[1]
    folder = tmp_path / "declared"
    folder.mkdir(parents=True)
    (folder / "source.yaml").write_text(f"{head}file: {spec}\ngroup:{rest}", "utf-8")
    cls = declared_adapter("declared_copy", folder)
    cls.name = "simpeval_2022"  # what registering it would set
    return cls()


def test_a_gzip_table_is_read_as_it_is(tmp_path):
    packed = tmp_path / "simpeval.csv.gz"
    packed.write_bytes(gzip.compress(FIXTURE.read_bytes()))
    assert build_suite("simpeval_2022", packed).stats()["pairs"] == PAIRS


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_a_member_of_an_archive_is_read(tmp_path, kind):
    archive = tmp_path / f"release.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as handle:
            handle.write(FIXTURE, "release/data/simpeval.csv")
    else:
        with tarfile.open(archive, "w:gz") as handle:
            handle.add(FIXTURE, "release/data/simpeval.csv")
    adapter = _with_file_spec(tmp_path, "{format: csv, member: data/simpeval.csv}")
    assert type(adapter).source_kind == "folder"
    assert build_suite(adapter, archive).stats()["pairs"] == PAIRS
    wrong = _with_file_spec(tmp_path / "w", "{format: csv, member: data/other.csv}")
    with pytest.raises(SourceFormatError, match="no member 'data/other.csv'"):
        build_suite(wrong, archive)


def test_a_member_may_name_the_archives_top_folder_and_a_missing_one_lists_the_files(tmp_path):
    # "the table's path inside the archive": release/data/... was refused, as the extraction
    # hands on the archive's single top folder, and the error did not say so
    archive = tmp_path / "release.tar.gz"
    with tarfile.open(archive, "w:gz") as handle:
        handle.add(FIXTURE, "release/data/simpeval.csv")
    adapter = _with_file_spec(tmp_path, "{format: csv, member: release/data/simpeval.csv}")
    assert build_suite(adapter, archive).stats()["pairs"] == PAIRS
    wrong = _with_file_spec(tmp_path / "w", "{format: csv, member: release/simpeval.csv}")
    with pytest.raises(SourceFormatError, match=r"the files there are: data/simpeval\.csv \("):
        build_suite(wrong, archive)


def test_a_declared_encoding_is_used_and_a_wrong_one_names_the_line(tmp_path):
    text = FIXTURE.read_text("utf-8").replace("Muss", "Müss")
    latin = tmp_path / "latin.csv"
    latin.write_bytes(text.encode("latin-1"))
    adapter = _with_file_spec(tmp_path / "a", "{format: csv, encoding: latin-1}")
    systems = {c.systems[0] for g in adapter.read(latin, ReadLog()) for c in g.candidates}
    assert "Müss" in systems
    with pytest.raises(SourceFormatError, match=r"latin.csv:2: not utf-8 text: invalid start byte"):
        build_suite("simpeval_2022", latin)


def _semicolons(path: Path) -> Path:
    """The fixture as a spreadsheet of a decimal-comma locale saves it: ';' between fields."""
    with FIXTURE.open(newline="", encoding="utf-8") as source, path.open("w", newline="") as out:
        csv.writer(out, delimiter=";").writerows(csv.reader(source))
    return path


def test_a_semicolon_table_is_read_with_its_declared_delimiter(tmp_path):
    table = _semicolons(tmp_path / "simpeval.csv")
    adapter = _with_file_spec(tmp_path, '{format: csv, delimiter: ";"}')
    assert build_suite(adapter, table).stats()["pairs"] == PAIRS
    # undeclared: the header was one column, and every column "not in" the file
    with pytest.raises(SourceFormatError) as caught:
        build_suite("simpeval_2022", table)
    assert str(caught.value) == (
        f"{table}:1: the header is one field holding ';': the file looks separated by ';', "
        "not ',' (declare file.delimiter: ';' in source.yaml)"
    )


@pytest.mark.parametrize(
    ("spec", "refusal"),
    [
        ('{format: tsv, delimiter: ";"}', "'delimiter' is for csv files, not tsv"),
        ('{format: csv, delimiter: ";;"}', "at most 1 character"),
        ("{format: csv, delimiter: x}", "delimiter 'x' cannot separate fields"),
    ],
)
def test_a_delimiter_is_one_punctuation_mark_of_a_csv_file(tmp_path, spec, refusal):
    with pytest.raises(DeclarationError, match=refusal):
        _with_file_spec(tmp_path, spec)


def test_a_decimal_comma_and_a_gzip_file_named_csv_say_what_they_are(tmp_path):
    rows = list(csv.reader(FIXTURE.open(newline="", encoding="utf-8")))
    rows[1][rows[0].index("rating_3")] = "4,5"  # as a decimal-comma locale writes it
    commas = tmp_path / "commas.csv"
    with commas.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows(rows)
    with pytest.raises(
        SourceFormatError,
        match=r"commas\.csv:2: column 'rating_3': '4,5' is not "
        r"a number \(a decimal comma is not read: write 4\.5\)",
    ):
        build_suite("simpeval_2022", commas)
    packed = tmp_path / "simpeval.csv"  # gzip data, named without .gz
    packed.write_bytes(gzip.compress(FIXTURE.read_bytes()))
    with pytest.raises(SourceFormatError) as caught:
        build_suite("simpeval_2022", packed)
    assert "it starts as gzip data does" in str(caught.value)
    assert "name it simpeval.csv.gz" in str(caught.value)


def test_a_json_list_written_on_one_line_gives_the_suite_of_the_shipped_file(tmp_path):
    """Every item of a minified JSON list starts on line 1: two identical outputs of one input
    (same text, no system) were taken for one row, and SF restaurants stopped with "group ...
    has one candidate; check group.key"."""
    shipped = build_suite("sfres")
    items = json.loads(ADAPTERS.get("sfres").default_source_path().read_text("utf-8"))
    minified = tmp_path / "sfres.json"
    minified.write_text(json.dumps(items), "utf-8")
    suite = build_suite("sfres", minified)
    assert suite.stats()["pairs"] == shipped.stats()["pairs"] == 1051
    assert suite.stats()["candidates"] == shipped.stats()["candidates"] == 1181


def test_each_item_of_a_json_list_on_one_line_is_named_by_its_index(tmp_path):
    # every bad item of a minified list was named 'sfres.json:1', so the error and the skipped
    # rows' examples could not tell which item to mend
    sample = ADAPTERS.get("sfres").folder() / "fixtures" / "sfres_sample.json"
    items = json.loads(sample.read_text("utf-8"))
    items[3]["scores"]["overall"], items[7]["scores"]["overall"] = "x", 99
    minified = tmp_path / "sfres.json"
    minified.write_text(json.dumps(items), "utf-8")
    with pytest.raises(SourceFormatError, match=r"sfres\.json:1 \(item 3\): column 'scores\.o"):
        build_suite("sfres", minified)
    suite = build_suite("sfres", minified, skip_malformed=True)
    examples = [
        e for s in suite.manifest.skipped for e in s.examples if s.reason.startswith("malformed")
    ]
    assert examples == ["sfres.json:1 (item 3) ('x')", "sfres.json:1 (item 7) (99)"]
    # written one item a line, each is named by its line alone
    minified.write_text("[\n" + ",\n".join(json.dumps(item) for item in items) + "\n]", "utf-8")
    with pytest.raises(SourceFormatError, match=r"sfres\.json:5: column 'scores\.overall'"):
        build_suite("sfres", minified)


@pytest.mark.parametrize(
    ("adapter", "source"),
    [("sfres", "data/sfres.json"), ("copilot_arena", "fixtures/copilot_arena_sample.csv")],
)
def test_a_row_repeated_exactly_without_a_rater_column_is_the_rows_fault(tmp_path, adapter, source):
    # with no rater column a copied row was pooled as an identical output (sfres: its ratings
    # counted twice in the mean) or taken as a second vote (copilot_arena), exit 0, no word
    shipped = ADAPTERS.get(adapter).folder() / source
    if source.endswith(".json"):
        items = json.loads(shipped.read_text("utf-8"))
        text, first = json.dumps(items + items[1:2], indent=1), "sfres.json:13"
    else:
        with shipped.open(encoding="utf-8", newline="") as rows, io.StringIO() as again:
            csv.writer(again).writerow(list(csv.reader(rows))[1])
            text = shipped.read_bytes().decode() + again.getvalue()
        first = "copilot_arena.csv:2"
    copy = tmp_path / f"{adapter}{shipped.suffix}"
    copy.write_bytes(text.encode())
    with pytest.raises(
        SourceFormatError, match=r"this row repeats an earlier row in every cell"
    ) as caught:
        build_suite(adapter, copy)
    assert f"(first at {first})" in str(caught.value)
    suite, whole = build_suite(adapter, copy, skip_malformed=True), build_suite(adapter, shipped)
    assert [(p.high.text, p.low.text, len(p.votes)) for p in suite.pairs] == [
        (p.high.text, p.low.text, len(p.votes)) for p in whole.pairs
    ]
    assert suite.stats()["candidates"] == whole.stats()["candidates"]
    [skipped] = [s for s in suite.manifest.skipped if "repeats an earlier row" in s.reason]
    assert skipped.count == 1 and skipped.examples[0].endswith(f"(first at {first})")


def test_a_table_with_a_header_and_no_data_rows_is_said_to_be_one(tmp_path):
    """A header alone got "no pair built: read 0 row(s) giving 0 group(s) ...; 0 group(s) had
    no two candidates of different quality (check ... that its labels differ within groups)": a
    hint about labels for a file with nothing to label. It now says the file has no data rows."""
    header_only = tmp_path / "header_only.csv"
    header_only.write_text(FIXTURE.read_text("utf-8").splitlines()[0] + "\n", "utf-8")
    with pytest.raises(SourceFormatError) as caught:
        build_suite("simpeval_2022", header_only)
    message = str(caught.value)
    assert message.startswith(f"{header_only}: no pair built: read 0 row(s): ")
    assert "the file holds no data rows (a header alone, or nothing)" in message
    assert "labels differ" not in message
