"""Mapping errors of a declarative source name the source.yaml line or the data line and what to
do; the schema is the generated one; a declaration no adapter was made from fails the harness."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.builder.pairs import build_pairs
from nnd_suites.declarative.model import SCHEMA_FILE, schema_text
from nnd_suites.declarative.plugin import declared_adapter, register_declared
from nnd_suites.errors import DeclarationError, SourceFormatError
from nnd_suites.plugins.harness import plugin_problems
from nnd_suites.plugins.registry import Registry
from nnd_suites.quality_map import QualityMap
from nnd_suites.sources import ReadLog

REPO = Path(__file__).resolve().parents[2]
HEADER = """\
name: tiny
quality_map: tiny
metadata:
  task: simplification
  languages: [en]
  annotation_type: numeric
  license: MIT
  citation: "@misc{x}"
  source_urls: [https://example.org]
  description: tiny
"""
RATED = """\
file: {format: csv}
group:
  key: [original_id]
  context: {original: original}
template: "{original}"
candidates:
  text: generation
  system: system
  ratings:
    rating: [rating_1, rating_2]
"""
TABLE = "original_id,original,generation,system,rating_1,rating_2\n"


def _read(tmp_path: Path, body: str, table: str, **log: bool) -> list:
    (tmp_path / "source.yaml").write_text(HEADER + textwrap.dedent(body), "utf-8")
    (tmp_path / "table.csv").write_text(table, "utf-8")
    return list(_adapter(tmp_path).read(tmp_path / "table.csv", ReadLog(**log)))


def _adapter(folder: Path):
    cls = declared_adapter("tests_tiny", folder)
    cls.name = "tiny"  # what registering it would set
    return cls()


def test_a_good_table_gives_groups_with_every_rater(tmp_path):
    groups = _read(tmp_path, RATED, TABLE + "1,o,a,s1,10,20\n1,o,b,s2,30,50\n")
    assert [(c.text, c.systems, c.ratings) for c in groups[0].candidates] == [
        ("a", ["s1"], {"rating": [10.0, 20.0]}),
        ("b", ["s2"], {"rating": [30.0, 50.0]}),
    ]


def test_a_column_that_does_not_exist_names_the_yaml_line_and_the_data_line(tmp_path):
    body = RATED.replace("rating: [rating_1, rating_2]", "rating: [rating_1, rating_3]")
    with pytest.raises(DeclarationError) as caught:
        _read(tmp_path, body, TABLE + "1,o,a,s1,10,20\n")
    message = str(caught.value)
    assert f"{tmp_path / 'source.yaml'}:20:" in message  # the line of `rating: [...]`
    assert "column 'rating_3' is not in table.csv:2" in message
    assert "fix the column name" in message


def test_a_rating_that_is_not_a_number_names_the_data_line_or_is_counted(tmp_path):
    table = TABLE + "1,o,a,s1,10,20\n1,o,b,s2,ten,50\n1,o,c,s3,1,2\n"
    with pytest.raises(SourceFormatError) as caught:
        _read(tmp_path, RATED, table)
    assert str(caught.value).startswith(f"{tmp_path / 'table.csv'}:3: column 'rating_1'")
    assert "source.yaml:20" in str(caught.value) and "fix the value" in str(caught.value)
    log = ReadLog(skip_malformed=True)
    (tmp_path / "table.csv").write_text(table, "utf-8")
    groups = list(_adapter(tmp_path).read(tmp_path / "table.csv", log))
    assert [c.text for c in groups[0].candidates] == ["a", "c"]
    assert sum(log.skipped.counts.values()) == 1


def test_malformed_rows_left_out_make_no_group_and_no_key_error(tmp_path):
    # group 2: both rows malformed; group 3: one left; group 4: its first row malformed
    table = TABLE + (
        "1,o,a,s1,10,20\n1,o,b,s2,30,50\n"
        "2,p,a,s1,x,20\n2,p,b,s2,y,50\n"
        "3,q,a,s1,x,20\n3,q,b,s2,30,50\n"
        "4,r,a,s1,x,20\n4,r,b,s2,30,50\n4,r,c,s3,1,2\n"
    )
    log = ReadLog(skip_malformed=True)
    (tmp_path / "source.yaml").write_text(HEADER + textwrap.dedent(RATED), "utf-8")
    (tmp_path / "table.csv").write_text(table, "utf-8")
    groups = list(_adapter(tmp_path).read(tmp_path / "table.csv", log))
    assert [(g.id, [c.text for c in g.candidates]) for g in groups] == [
        ("1", ["a", "b"]),
        ("4", ["b", "c"]),
    ]
    # one reason whatever the value ('x' or 'y'), each example showing its own
    assert log.skipped.counts == {
        "malformed row: column 'rating_1': value is not a number": 4,
        "group with one candidate once its malformed rows are left out": 1,
    }
    assert log.skipped.examples["malformed row: column 'rating_1': value is not a number"] == [
        "table.csv:4 ('x')",
        "table.csv:5 ('y')",
        "table.csv:6 ('x')",
        "table.csv:8 ('x')",
    ]
    assert log.skipped.examples[
        "group with one candidate once its malformed rows are left out"
    ] == ["table.csv:7"]


@pytest.mark.parametrize("bad", ["2,p,b,s2,30,50,extra", "2,p,b"])
def test_a_row_of_the_wrong_width_is_named_as_why_its_group_is_short(tmp_path, bad):
    """A row with too many or too few fields, left out with --skip-malformed, left its group
    one candidate: the build blamed group.key in source.yaml (a DeclarationError) instead."""
    table = TABLE + f"1,o,a,s1,10,20\n1,o,b,s2,30,50\n2,p,a,s1,10,20\n{bad}\n"
    log = ReadLog(skip_malformed=True)
    (tmp_path / "source.yaml").write_text(HEADER + textwrap.dedent(RATED), "utf-8")
    (tmp_path / "table.csv").write_text(table, "utf-8")
    groups = list(_adapter(tmp_path).read(tmp_path / "table.csv", log))
    assert [g.id for g in groups] == ["1"]
    fields = len(bad.split(","))
    assert log.skipped.counts == {
        f"malformed row: row has {fields} fields, the header 6": 1,
        "group with one candidate once its malformed rows are left out": 1,
    }
    assert log.skipped.examples[
        "group with one candidate once its malformed rows are left out"
    ] == ["table.csv:4 (its other rows may be the unreadable row left out at table.csv:5)"]
    # more short groups than unreadable rows: a key fault still, named as one
    with pytest.raises(DeclarationError, match=r"source.yaml:13: group '2' \(table.csv:4\)"):
        _read(tmp_path, RATED, table + "3,q,a,s1,1,2\n", skip_malformed=True)


def test_a_group_with_one_candidate_names_the_group_key_line(tmp_path):
    table = TABLE + "1,o,a,s1,10,20\n1,o,b,s2,30,50\n2,p,c,s1,1,2\n"
    with pytest.raises(DeclarationError, match=r"source.yaml:13: group '2' \(table.csv:4\)"):
        _read(tmp_path, RATED, table)
    body = RATED.replace("template:", "  single_candidate: skip\ntemplate:")
    log = ReadLog()
    (tmp_path / "source.yaml").write_text(HEADER + body, "utf-8")
    groups = list(_adapter(tmp_path).read(tmp_path / "table.csv", log))
    assert len(groups) == 1 and log.skipped.counts == {"group with one candidate": 1}


def test_rows_of_several_raters_without_a_rater_column_say_to_declare_it(tmp_path):
    """A table of one row per (rater, output), declared without candidates.rater (as
    new-adapter proposes it: a `rater` column is listed as not read), was refused with "duplicate
    candidate: system 's1' gives the same text twice ... remove the repeated row", though no row
    is repeated. The refusal now says how such rows make one candidate."""
    body = RATED.replace("rating: [rating_1, rating_2]", "rating: rating_1")
    table = TABLE + "1,o,a,s1,10,0\n1,o,a,s1,30,0\n1,o,b,s2,50,0\n"
    with pytest.raises(SourceFormatError) as raised:
        build_pairs(_read(tmp_path, body, table), QualityMap.load("simpeval_2022"))
    assert str(raised.value) == (
        "table.csv:3: duplicate candidate: system 's1' gives the same text twice in group '1' "
        "(first at table.csv:2) (remove the repeated row; where each such row is another "
        "rater's rating of that output, gather them into one candidate (a source.yaml: name "
        "the rater column in candidates.rater))"
    )


COMPARED = """\
file: {format: csv}
filters:
  - {column: winner, not: "", reason: no judgment}
group:
  key: [sentence_id, aspect]
  context: {source: source}
template: "{source}"
comparisons:
  text_a: a
  text_b: b
  winner: winner
  verdicts: {asset: a, other: b, similar: tie}
  category: aspect
"""
PAIRS = "sentence_id,aspect,source,a,b,winner\n"


def test_key_values_holding_the_separator_give_two_group_ids_and_plain_ones_stay(tmp_path):
    # joined as they were, ('a | b', 'c') and ('a', 'b | c') were one id: the build stopped
    # with "group id 'a | b | c' repeats the group" on valid data
    body = RATED.replace("key: [original_id]", "key: [original_id, original]")
    table = TABLE + "".join(
        f"{key},{original},{text},{system},{rating},{rating}\n"
        for key, original in (("a | b", "c"), ("a", "b | c"), ("x", "y"))
        for text, system, rating in (("t1", "s1", 10), ("t2", "s2", 90))
    )
    groups = _read(tmp_path, body, table)
    assert [g.id for g in groups] == ["a \\| b | c", "a | b \\| c", "x | y"]
    result = build_pairs(groups, QualityMap.load("simpeval_2022"))
    assert len(result.pairs) == 3


def test_an_empty_system_cell_is_the_rows_fault_named_at_its_line(tmp_path):
    """A rated table's empty system cell was refused at the table's last line (where the group
    was built), even with --skip-malformed; a compared table's made a system named ''."""
    table = TABLE + "1,o,a,,10,20\n1,o,b,s2,30,50\n1,o,c,s3,1,2\n"
    with pytest.raises(SourceFormatError) as caught:
        _read(tmp_path, RATED, table)
    assert str(caught.value).startswith(
        f"{tmp_path / 'table.csv'}:2: empty system cell (column 'system', named at "
        f"{tmp_path / 'source.yaml'}:18)"
    )
    groups = _read(tmp_path, RATED, table, skip_malformed=True)
    assert [c.systems for c in groups[0].candidates] == [["s2"], ["s3"]]
    body = COMPARED.replace("  winner: winner", "  system_a: sa\n  winner: winner")
    pairs = "sentence_id,aspect,source,a,b,winner,sa\n1,fluency,s,x,y,asset, \n"
    with pytest.raises(SourceFormatError, match=r"table.csv:2: empty system cell \(column 'sa'"):
        _read(tmp_path, body, pairs)


def test_a_winner_value_not_declared_names_the_verdicts_line(tmp_path):
    table = PAIRS + "1,fluency,s,x,y,asset\n1,meaning,s,x,y,hsplit\n"
    with pytest.raises(DeclarationError) as caught:
        _read(tmp_path, COMPARED, table)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'source.yaml'}:22: table.csv:3: winner 'hsplit'")
    assert "declare what it means" in message


@pytest.mark.parametrize(
    ("verdicts", "message"),
    [
        (  # YAML reads 0 and 1 as numbers: the schema wanted texts, said "fix the value"
            "{0: a, 1: b}",
            r":22, at comparisons\.verdicts\.0\.\[key\]: .*key 0 is a text here, but YAML "
            r'reads it unquoted as a number; quote the keys \("0": \.\.\.\)',
        ),
        (
            '{"0": a, "1": b, yes: tie}',
            r":22, at comparisons\.verdicts\.1\.\[key\]: .*YAML reads it unquoted as the "
            r'boolean true .*quote the key as written \("yes": \.\.\.\)',
        ),
        (  # 1 and yes (true) are one key once read: was "key True appears twice (lines 22, 22)"
            "{0: a, 1: b, yes: tie}",
            r":22: cannot parse the YAML: keys '1' \(line 22\) and 'yes' \(line 22\) are one "
            r'key once YAML reads them unquoted .*quote the keys \("1": \.\.\., "yes": \.\.\.\)',
        ),
    ],
)
def test_unquoted_verdict_keys_say_to_quote_them_at_their_line(tmp_path, verdicts, message):
    body = COMPARED.replace("{asset: a, other: b, similar: tie}", verdicts)
    with pytest.raises(DeclarationError, match=re.escape(str(tmp_path / "source.yaml")) + message):
        _read(tmp_path, body, PAIRS + "1,fluency,s,x,y,0\n")


def test_a_tag_other_than_the_plain_ones_is_refused_at_its_line(tmp_path):
    # !!set read group.key as a set: accepted, its columns' order (the group ids) lost
    body = COMPARED.replace("key: [sentence_id, aspect]", "key: !!set {sentence_id, aspect}")
    with pytest.raises(DeclarationError, match=r"source\.yaml:15: .*tag !!set is not allowed"):
        _read(tmp_path, body, PAIRS + "1,fluency,s,x,y,asset\n")
    plain = COMPARED.replace("key: [sentence_id, aspect]", "key: [!!str sentence_id, aspect]")
    assert len(_read(tmp_path, plain, PAIRS + "1,fluency,s,x,y,asset\n")) == 1


def test_filters_count_what_they_leave_out_and_verdicts_become_judgments(tmp_path):
    log = ReadLog()
    table = PAIRS + "1,fluency,s,x,y,asset\n1,meaning,s,x,y,\n2,fluency,t,u,v,similar\n"
    (tmp_path / "source.yaml").write_text(HEADER + COMPARED, "utf-8")
    (tmp_path / "table.csv").write_text(table, "utf-8")
    groups = list(_adapter(tmp_path).read(tmp_path / "table.csv", log))
    assert [(g.id, [j.verdict for j in g.judgments]) for g in groups] == [
        ("1 | fluency", ["a"]),
        ("2 | fluency", ["tie"]),
    ]
    assert log.skipped.counts == {"filtered out: no judgment": 1}


def test_a_json_rating_that_is_null_a_boolean_or_a_list_names_its_row_and_column(tmp_path):
    # null, true and [1] once raised UnboundLocalError (a traceback): the scale was read only
    # for numbers and strings
    body = RATED.replace("{format: csv}", "{format: jsonl}")
    (tmp_path / "source.yaml").write_text(HEADER + textwrap.dedent(body), "utf-8")
    row = {"original_id": "1", "original": "o", "generation": "a", "system": "s", "rating_1": 1}
    row["rating_2"] = 2
    for value in (None, True, [1]):
        table = json.dumps(row) + "\n" + json.dumps({**row, "rating_1": value}) + "\n"
        (tmp_path / "table.jsonl").write_text(table, "utf-8")
        with pytest.raises(SourceFormatError) as caught:
            list(_adapter(tmp_path).read(tmp_path / "table.jsonl", ReadLog()))
        message = str(caught.value)
        assert "table.jsonl:2: column 'rating_1'" in message, message
        assert f"a rating declared at {tmp_path / 'source.yaml'}:20" in message, message


def test_a_filter_reads_json_null_and_booleans_and_counts_a_bad_cell(tmp_path):
    body = COMPARED.replace("{format: csv}", "{format: jsonl}").replace(
        "filters:\n", 'filters:\n  - {column: checked, equals: "true", reason: unchecked}\n'
    )
    rows = [
        {"winner": "asset", "checked": True},
        {"winner": None, "checked": True},  # no judgment: null is the empty text
        {"winner": "similar", "checked": False},
        {"winner": "other", "checked": [1]},  # no text: this row's fault
    ]
    table = "".join(
        json.dumps({"sentence_id": "1", "aspect": "f", "source": "s", "a": "x", "b": "y", **row})
        + "\n"
        for row in rows
    )
    (tmp_path / "source.yaml").write_text(HEADER + body, "utf-8")
    (tmp_path / "table.jsonl").write_text(table, "utf-8")
    with pytest.raises(SourceFormatError, match=r"table\.jsonl:4: column 'checked' .* holds list"):
        list(_adapter(tmp_path).read(tmp_path / "table.jsonl", ReadLog()))
    log = ReadLog(skip_malformed=True)
    groups = list(_adapter(tmp_path).read(tmp_path / "table.jsonl", log))
    assert [[j.verdict for j in g.judgments] for g in groups] == [["a"]]
    assert log.skipped.counts == {
        "filtered out: unchecked": 1,
        "filtered out: no judgment": 1,
        "malformed row: column 'checked' (named at "
        f"{tmp_path / 'source.yaml'}:13) holds list, not a text": 1,
    }


def test_an_unknown_key_names_its_yaml_line(tmp_path):
    body = RATED.replace("  system: system\n", "  system: system\n  sytem: x\n")
    with pytest.raises(DeclarationError) as caught:
        _read(tmp_path, body, TABLE)
    assert f"{tmp_path / 'source.yaml'}:19" in str(caught.value)
    assert "unknown key 'sytem'" in str(caught.value)


def test_may_be_empty_names_a_context_field_or_its_yaml_line(tmp_path):
    body = RATED.replace(
        "  context: {original: original}\n",
        "  context: {original: original}\n  may_be_empty: [orignal]\n",
    )
    with pytest.raises(DeclarationError) as caught:
        _read(tmp_path, body, TABLE)
    assert f"{tmp_path / 'source.yaml'}:" in str(caught.value)
    assert "may_be_empty names ['orignal'], not context fields ['original']" in str(caught.value)


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ('"{original.__class__}"', r"\{original\.__class__\} is not allowed"),
        ('"{orignal}"', r"unknown context field\(s\) \['orignal'\]"),
    ],
)
def test_a_bad_template_names_the_declaration_and_its_line(tmp_path, template, message):
    # the registry's own check named neither file nor adapter, and stopped every command
    body = RATED.replace('template: "{original}"', f"template: {template}")
    with pytest.raises(DeclarationError, match=message) as caught:
        _read(tmp_path, body, TABLE)
    assert str(caught.value).startswith(f"{tmp_path / 'source.yaml'}:15: template ")


@pytest.mark.parametrize(
    ("old", "new", "place"),
    [  # pydantic's loc names the union branch tried (float, constrained-str, Fixed): not a key
        (
            "    rating: [rating_1, rating_2]\n",
            "    rating: [rating_1]\n  low: abc\n",
            r":21, at candidates\.low:",
        ),
        ("system: system", "system: 5", r":18, at candidates\.system:"),
        # an aspect whose name starts like a branch's ('str...') was cut from the path
        ("rating: [rating_1, rating_2]", "strength: 5", r":20, at candidates\.ratings\.strength:"),
    ],
    ids=["float", "Fixed", "strength"],
)
def test_a_bad_value_of_a_union_is_placed_at_its_key_not_its_branch(tmp_path, old, new, place):
    with pytest.raises(DeclarationError, match=r"source\.yaml" + place + " does not match"):
        _read(tmp_path, RATED.replace(old, new), TABLE)


@pytest.mark.parametrize(
    ("new", "said"),
    [
        ("system: {value: ' '}", ":18, at candidates.system.value: .* is only spaces; write what"),
        ("system: 5", ":18, at candidates.system: .*: takes a text or a mapping \\(keys: value\\)"),
        (
            "system: {value: sys, column: x}",
            ":18, at candidates.system.column: .*'column'.*allowed: value\\)",
        ),
    ],
    ids=["spaces", "a number", "another key"],
)
def test_a_union_given_a_mapping_says_what_its_mapping_takes_at_the_users_path(tmp_path, new, said):
    """`system: {value: ' '}` said "Input should be a valid string" (the message of the union's
    first branch, a column) and `system: 5` only that: each now names the key by the file's own
    path and says what is wrong there, or what the key takes."""
    with pytest.raises(DeclarationError) as caught:
        _read(tmp_path, RATED.replace("system: system", new), TABLE)
    assert re.search(r"source\.yaml" + said, str(caught.value)), str(caught.value)
    assert "valid string" not in str(caught.value)


@pytest.mark.parametrize(
    ("old", "new", "place"),
    [
        ("task: simplification", "task: ' '", ":4, at metadata.task"),
        ('citation: "@misc{x}"', "citation: '  '", ":8, at metadata.citation"),
        ("description: tiny", "description: ' '", ":10, at metadata.description"),
        ("quality_map: tiny", "quality_map: ' '", ":2, at quality_map"),
        ("file: {format: csv}", "file: {format: csv, shipped: ' '}", ":11, at file.shipped"),
        (
            "file: {format: csv}",
            "file: {format: csv}\nfilters: [{column: system, equals: s1, reason: ' '}]",
            ":12, at filters.0.reason",
        ),
    ],
    ids=["task", "citation", "description", "quality_map", "shipped", "reason"],
)
def test_a_value_of_only_spaces_is_refused_at_its_line(tmp_path, old, new, place):
    (tmp_path / "source.yaml").write_text((HEADER + RATED).replace(old, new), "utf-8")
    with pytest.raises(DeclarationError) as caught:
        _adapter(tmp_path)
    assert f"source.yaml{place}: " in str(caught.value)
    assert "is only spaces; write what it is" in str(caught.value)


def test_a_rating_range_upside_down_names_its_line(tmp_path):
    body = RATED.replace(
        "    rating: [rating_1, rating_2]\n",
        "    rating: [rating_1, rating_2]\n  low: 100\n  high: 0\n",
    )
    with pytest.raises(DeclarationError, match=r"low \(100\) must be below high \(0\)"):
        _read(tmp_path, body, TABLE)


def test_the_shipped_schema_is_the_generated_one():
    shipped = (REPO / "nnd_suites" / "schemas" / SCHEMA_FILE).read_text("utf-8")
    assert shipped == schema_text()


def test_a_declaration_no_adapter_was_made_from_fails_the_harness(tmp_path, monkeypatch):
    package = tmp_path / "planted_declarations"
    (package / "ok").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "ok" / "__init__.py").write_text("")
    for folder in ("ok", "unregistered"):
        (package / folder).mkdir(exist_ok=True)
        (package / folder / "README.md").write_text("# x\n")
        source = (HEADER + RATED).replace("name: tiny", f"name: {folder}")
        (package / folder / "source.yaml").write_text(source)
    (package / "ok" / "fixtures").mkdir()
    (package / "ok" / "fixtures" / "expected_stats.json").write_text(json.dumps({}))
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry(
        "adapter",
        "nnd_suites.planted",
        base=ADAPTERS.base_class,
        builtin_package="planted_declarations",
        declare=lambda module: register_declared(module, registry.register),
    )
    problems = plugin_problems(registry)
    for name in [m for m in sys.modules if m.startswith("planted_declarations")]:
        monkeypatch.delitem(sys.modules, name)
    assert any(
        "planted_declarations/unregistered/source.yaml is registered as no adapter" in p
        for p in problems
    )
    assert not any("planted_declarations/ok/source.yaml" in p for p in problems)


def test_every_shipped_declaration_passes_the_json_schema_and_a_typo_does_not():
    import jsonschema  # 0.1 s to import: only this test needs it

    schema = json.loads((REPO / "nnd_suites" / "schemas" / SCHEMA_FILE).read_text("utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    declarations = sorted((REPO / "adapters").glob("*/source.yaml"))
    assert len(declarations) >= 7
    for path in declarations:
        assert list(validator.iter_errors(yaml.safe_load(path.read_text("utf-8")))) == [], path
    typo = yaml.safe_load(declarations[0].read_text("utf-8"))
    typo["group"]["kye"] = ["x"]
    assert any("'kye' was unexpected" in e.message for e in validator.iter_errors(typo))


@pytest.mark.parametrize(
    ("key", "line", "value"),
    [
        ("shipped", 11, "../../elsewhere/table.csv"),
        ("shipped", 11, "/abs/table.csv"),
        ("member", 11, "release/../../table.csv"),
        ("quality_map", 2, "../maps/tiny.yaml"),
    ],
)
def test_a_path_that_leaves_the_adapters_folder_is_refused_at_its_line(tmp_path, key, line, value):
    # `shipped: ../../x.csv` or an absolute path built from a file outside the package (read
    # on the author's machine, missing from every install; `member` read outside the archive)
    if key == "quality_map":
        text = HEADER.replace("quality_map: tiny", f"quality_map: {value}") + RATED
    else:
        text = HEADER + RATED.replace("{format: csv}", f"{{format: csv, {key}: {value}}}")
    (tmp_path / "source.yaml").write_text(text, "utf-8")
    with pytest.raises(DeclarationError, match=rf"source\.yaml:{line}, at .*{key}.*leaves"):
        _adapter(tmp_path)


def test_a_shipped_file_linked_from_outside_the_adapters_folder_is_refused(tmp_path):
    outside = tmp_path / "downloads" / "table.csv"
    outside.parent.mkdir()
    outside.write_text(TABLE + "1,o,a,s1,10,20\n1,o,b,s2,30,50\n", "utf-8")
    folder = tmp_path / "adapter"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "table.csv").symlink_to(outside)
    body = RATED.replace("{format: csv}", "{format: csv, shipped: table.csv}")
    (folder / "source.yaml").write_text(HEADER + body, "utf-8")
    adapter = _adapter(folder)
    with pytest.raises(DeclarationError, match=r"source\.yaml:11: .*links to .*downloads"):
        list(adapter.read(folder / "data" / "table.csv", ReadLog()))


def test_bounds_give_an_aspect_its_own_scale_and_name_only_rated_aspects(tmp_path):
    body = RATED.replace(
        "    rating: [rating_1, rating_2]\n",
        "    rating: [rating_1, rating_2]\n    useful: use\n  low: 1\n  high: 100\n"
        "  bounds: {useful: [0, 1]}\n",
    )
    table = "original_id,original,generation,system,rating_1,rating_2,use\n"
    groups = _read(tmp_path, body, table + "1,o,a,s1,10,20,0\n1,o,b,s2,30,50,1\n")
    assert [c.ratings["useful"] for c in groups[0].candidates] == [[0.0], [1.0]]
    with pytest.raises(
        SourceFormatError, match=r"table.csv:3: column 'use': '30' out of range \[0, 1\]"
    ):
        _read(tmp_path, body, table + "1,o,a,s1,10,20,0\n1,o,b,s2,30,50,30\n")
    with pytest.raises(
        SourceFormatError, match=r"table.csv:2: column 'rating_1': '0' out of range \[1, 100\]"
    ):
        _read(tmp_path, body, table + "1,o,a,s1,0,20,0\n1,o,b,s2,30,50,1\n")
    with pytest.raises(DeclarationError, match=r"bounds names \['usefl'\], not aspects of"):
        _read(tmp_path, body.replace("{useful: [0, 1]}", "{usefl: [0, 1]}"), table)
    with pytest.raises(DeclarationError, match=r"low \(1\) must be below high \(0\) of 'useful'"):
        _read(tmp_path, body.replace("{useful: [0, 1]}", "{useful: [1, 0]}"), table)


@pytest.mark.parametrize(
    ("old", "new", "line", "said"),
    [
        (
            "rating: [rating_1, rating_2]",
            "rating: [rating_1, rating_1, rating_2]",
            ":20, at candidates.ratings.rating",
            "['rating_1'] listed more than once: that rater's ratings would weigh twice in "
            "the mean",
        ),
        (
            "    rating: [rating_1, rating_2]\n",
            "    rating: [rating_1, rating_2]\n    overall: rating_2\n",
            ":21, at candidates.ratings.overall",
            "column 'rating_2' is read by aspects 'rating' and 'overall'",
        ),
        (
            "key: [original_id]",
            "key: [original_id, original_id]",
            ":13, at group.key",
            "['original_id'] listed more than once",
        ),
        (
            "context: {original: original}",
            "context: {original: original}\n  may_be_empty: [original, original]",
            ":15, at group.may_be_empty",
            "['original'] listed more than once",
        ),
        (
            "file: {format: csv}",
            "file: {format: csv}\nfilters: [{column: system, in: [s1, s1]}]",
            ":12, at filters.0.in",
            "['s1'] listed more than once",
        ),
    ],
    ids=["rater column", "two aspects", "key column", "may_be_empty", "filter value"],
)
def test_a_column_or_value_listed_twice_is_refused_at_its_line(tmp_path, old, new, line, said):
    """`ratings: {r: [r1, r1, r2, r3]}` was accepted and r1's rater counted twice in each mean
    (5, 5, 2, 2 against 1, 1, 3, 3: a pair the three raters' 3.0 against 2.33 does not make at a
    gap of 1, exit 0). Each list of source.yaml names an item once, and a column one aspect."""
    table = TABLE + "1,o,a,s1,10,20\n1,o,b,s2,30,50\n"
    with pytest.raises(DeclarationError) as caught:
        _read(tmp_path, RATED.replace(old, new), table)
    message = str(caught.value)
    assert f"{tmp_path / 'source.yaml'}{line}: " in message, message
    assert said in message, message
    assert "list each once" in message or "give each aspect its own column" in message, message
    assert "(and " not in message  # one problem, said once


def test_the_json_schema_refuses_a_column_listed_twice():
    import jsonschema

    schema = json.loads((REPO / "nnd_suites" / "schemas" / SCHEMA_FILE).read_text("utf-8"))
    doubled = yaml.safe_load(HEADER + RATED.replace("rating_2]", "rating_1]"))
    problems = jsonschema.Draft202012Validator(schema).iter_errors(doubled)
    said = [c.message for p in problems for c in [p, *p.context]]  # context: a union's branches
    assert "['rating_1', 'rating_1'] has non-unique elements" in said
