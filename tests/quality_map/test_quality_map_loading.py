"""Loading quality maps: the generated schema, located errors, repeated keys, long orders."""

from __future__ import annotations

import json
import textwrap
import time
from importlib import resources
from itertools import pairwise
from pathlib import Path

import jsonschema
import pytest

from nnd_suites import QualityMap, QualityMapError
from nnd_suites.cli import main
from nnd_suites.errors import OutputFolderError
from nnd_suites.evaluation.report_schemas import report_schemas
from nnd_suites.quality_map import (
    Assessment,
    GradedRule,
    builtin_quality_maps,
    generate_schema,
)
from nnd_suites.quality_map.model import SCHEMA_FILE


def quality_map_schema() -> dict:
    """The checked-in schema (what editors and the pre-commit hook use)."""
    text = resources.files("nnd_suites.schemas").joinpath(SCHEMA_FILE).read_text("utf-8")
    return json.loads(text)


GRADED = """\
name: g
description: d
labels: [correct, incorrect]
tiers:
  - [correct]
  - [incorrect]
rating_rule:
  kind: graded
  rating: credit
  levels: {LEVELS}
"""


def write(tmp_path, text: str, name: str = "m.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_checked_in_schema_is_generated_from_the_models():
    assert quality_map_schema() == generate_schema(), (
        "nnd_suites/schemas/quality_map.schema.json is out of date; regenerate it: "
        "nnd-suites schema --quality-map"  # the command test_schema_command_writes_... runs
    )


def test_schema_command_writes_the_quality_map_schema(tmp_path, capsys):
    assert main(["schema", "--quality-map", "--out", str(tmp_path)]) == 0
    written = json.loads((tmp_path / "quality_map.schema.json").read_text())
    assert written == generate_schema()
    assert main(["schema", "--out", str(tmp_path / "all")]) == 0
    names = sorted(p.name for p in (tmp_path / "all").iterdir())
    assert "quality_map.schema.json" in names
    assert set(report_schemas()) <= set(names)  # and every report kind's, from the one table


def test_shipped_maps_match_the_schema_and_the_rules_are_typed():
    validator = jsonschema.Draft202012Validator(quality_map_schema())
    for name, path in builtin_quality_maps().items():
        quality_map = QualityMap.load(name)
        assert not list(validator.iter_errors(quality_map.data)), path
    assert isinstance(QualityMap.load("challenge300").rule, GradedRule)


def test_unknown_key_in_a_rating_rule_is_named_with_file_and_line(tmp_path):
    text = GRADED.replace("{LEVELS}", '{"1": correct, "0": incorrect}') + "  levls: 1\n"
    path = write(tmp_path, text)
    with pytest.raises(QualityMapError) as info:
        QualityMap.load(path)
    message = str(info.value)
    assert f"{path}:11, at rating_rule.levls" in message
    assert "unknown key 'levls'; remove it or fix the spelling" in message
    assert "allowed: kind, rating, levels, exclude" in message
    # The generated schema (editors, the pre-commit hook) names the key as well.
    data = QualityMap.load("challenge300").data
    bad = {**data, "rating_rule": {**data["rating_rule"], "levls": 1}}
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(quality_map_schema()).iter_errors(bad)
    )
    assert "'levls' was unexpected" in error.message


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ({"kind": "graded", "levels": {"1": "good"}}, "missing required key 'rating'; add it"),
        ({"kind": "likert"}, "unknown kind 'likert'; use one of 'majority_top', 'graded'"),
        ({"rating": "x"}, "a rating_rule needs a 'kind'; add one"),
    ],
)
def test_rating_rule_errors_say_what_to_do(rule, expected):
    data = {"name": "t", "description": "d", "labels": ["good"], "rating_rule": rule}
    with pytest.raises(QualityMapError, match=rf"<dict>, at rating_rule\S*: .*{expected}"):
        QualityMap.from_dict(data)


def test_an_unquoted_yes_read_as_a_boolean_is_explained(tmp_path):
    path = write(tmp_path, "name: yn\ndescription: d\nlabels: [good, no]\ntiers: [[good], [no]]\n")
    with pytest.raises(QualityMapError) as info:
        QualityMap.load(path)
    assert f"{path}:3, at labels.1" in str(info.value)
    assert "YAML reads an unquoted yes, no, on, off, true or false as a boolean" in str(info.value)


def test_repeated_yaml_key_is_refused_naming_it_and_its_lines(tmp_path):
    path = write(
        tmp_path,
        """\
        name: q
        description: d
        labels: [good, bad]
        tiers:
          - [good]
          - [bad]
        tiers:
          - [bad]
          - [good]
        """,
    )
    with pytest.raises(QualityMapError, match=rf"{path}:7: .*key 'tiers' appears twice \(lines 4"):
        QualityMap.load(path)


def test_repeated_json_key_is_refused(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{"name": "q", "name": "r", "description": "d", "labels": ["a"]}')
    with pytest.raises(QualityMapError, match=r"m.json: cannot parse: key\(s\) \['name'\] appear"):
        QualityMap.load(path)


@pytest.mark.parametrize(
    ("levels", "spellings"),
    [
        ('{"1": correct, "1.0": incorrect}', "'1' and '1.0'"),
        ('{1: correct, "1": incorrect}', "1 and '1'"),
    ],
)
def test_graded_level_written_two_ways_is_an_error(tmp_path, levels, spellings):
    path = write(tmp_path, GRADED.replace("{LEVELS}", levels))
    with pytest.raises(QualityMapError, match=rf"credit level 1 is written twice, as {spellings}"):
        QualityMap.load(path)


def test_graded_levels_written_as_numbers_load():
    rule = {"kind": "graded", "rating": "credit", "levels": {1: "correct", 0: "incorrect"}}
    data = {"name": "g", "description": "d", "labels": ["correct", "incorrect"]}
    m = QualityMap.from_dict({**data, "tiers": [["correct"], ["incorrect"]], "rating_rule": rule})
    assert m.rule.levels == {"1": "correct", "0": "incorrect"}


def test_label_in_no_order_is_named(tmp_path):
    path = write(
        tmp_path,
        """\
        name: q
        description: d
        labels: [good, bad, meh]
        tiers:
          - [good]
          - [bad]
        """,
    )
    with pytest.raises(QualityMapError) as info:
        QualityMap.load(path)
    assert f"({path}:3, at labels): label(s) ['meh'] take part in no order" in str(info.value)
    assert "order it (tiers or better_than) or declare it in 'exclude'" in str(info.value)
    assert info.value.labels == ["meh"]


def test_quiz_design_map_leaving_labels_unordered_stops_the_build(tmp_path, capsys):
    # Before: this map built 711 pairs (only 'disfluent' ordered) instead of 2,686, silently.
    text = builtin_quality_maps()["quiz_design"].read_text()
    path = tmp_path / "qd.yaml"
    path.write_text(text.replace("[disfluent, off_target, wrong_context]", "[disfluent]"))
    argv = ["build", "quiz_design", "--quality-map", str(path), "--out", str(tmp_path / "s")]
    assert main(argv) == 4  # QualityMapError
    err = capsys.readouterr().err
    assert "label(s) ['off_target', 'wrong_context'] take part in no order" in err
    assert not (tmp_path / "s").exists()


def chain(n: int, close: bool = False) -> dict:
    labels = [f"l{i:04d}" for i in range(n)]
    edges = [list(edge) for edge in pairwise(labels)]
    if close:
        edges.append([labels[-1], labels[0]])
    return {"name": "chain", "description": "d", "labels": labels, "better_than": edges}


def test_a_3000_label_chain_loads_without_recursion():
    started = time.process_time()  # CPU time: a busy machine does not stretch it
    m = QualityMap.from_dict(chain(3000))
    assert m.better(Assessment(label="l0000"), Assessment(label="l2999"))
    assert m.better(Assessment(label="l1500"), Assessment(label="l1501"))
    assert not m.better(Assessment(label="l2999"), Assessment(label="l0000"))
    assert time.process_time() - started < 5


def test_a_cycle_closing_a_3000_label_chain_is_named_shortened():
    with pytest.raises(QualityMapError) as info:
        QualityMap.from_dict(chain(3000, close=True))
    message = str(info.value)
    head = "cycle in the order: l0000 > l0001 > l0002 > l0003 > l0004 > ... (2991 more) > "
    assert head in message
    assert "> l2998 > l2999 > l0000; remove one of its edges" in message
    assert len(info.value.labels) == 3000


def test_long_hierarchy_chain_and_its_cycle():
    parents = {f"c{i}": f"c{i + 1}" for i in range(3000)}
    data = {"name": "h", "description": "d", "labels": ["a", "b"], "tiers": [["a"], ["b"]]}
    m = QualityMap.from_dict({**data, "hierarchy": {"parents": parents}})
    assert len(m.category_path("b", "c0")) == 3001
    parents["c3000"] = "c0"
    with pytest.raises(QualityMapError, match=r"cycle in the hierarchy: c0 -> c1 .* more\)"):
        QualityMap.from_dict({**data, "hierarchy": {"parents": parents}})


def test_cycle_error_points_at_the_edges_line(tmp_path):
    path = write(
        tmp_path,
        """\
        name: c
        description: d
        labels: [a, b]
        better_than:
          - [a, b]
          - [b, a]
        """,
    )
    with pytest.raises(QualityMapError, match=rf"quality map c \({path}:4, at better_than\)"):
        QualityMap.load(path)


@pytest.mark.parametrize(("text", "found"), [("", "empty"), ("- a\n", "a list")])
def test_a_map_that_is_not_a_mapping_is_named(tmp_path, text, found):
    path = write(tmp_path, text)
    with pytest.raises(QualityMapError, match=rf"{path}: is {found}, not a mapping of keys"):
        QualityMap.load(path)


def test_aliases_are_refused_so_an_alias_bomb_costs_nothing(tmp_path):
    bomb = ["name: x", "description: y", "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    bomb += [f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]"
             for p, c in zip("abcdefgh", "bcdefghi", strict=True)]  # fmt: skip
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join([*bomb, "labels: *i"]) + "\n")
    with pytest.raises(QualityMapError, match=r"bomb\.yaml:4.*alias \*a is not allowed"):
        QualityMap.load(path)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"name: x\ndescription: \xff\n", r"bad\.yaml:2.*not UTF-8"),
        (b"name: x\x00\n", r"bad\.yaml:1.*cannot parse"),
        (b"name: x\n? [a, b]\n: c\n", r"bad\.yaml:2.*a key must be a plain name"),
        (b"name: x\ndescription: y\nlabels: [a, b]\nhierarchy: {separator: null}\n", "labels"),
    ],
)
def test_damaged_bytes_and_odd_yaml_are_located_errors(tmp_path, content, expected):
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    with pytest.raises(QualityMapError, match=expected):
        QualityMap.load(path)


def test_schema_command_replaces_only_its_own_schemas(tmp_path, capsys):
    """``schema --out DIR`` wrote over any file of a schema's name; every file is now checked
    before any is written, and only a JSON Schema of the same title is replaced."""
    folder = tmp_path / "schemas"
    assert main(["schema", "--out", str(folder)]) == 0
    assert main(["schema", "--out", str(folder)]) == 0  # its own files: replaced
    capsys.readouterr()
    theirs = folder / "verify.schema.json"
    theirs.write_text('{"title": "my own verify format"}')
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    (folder / "quality_map.schema.json").unlink()
    assert main(["schema", "--out", str(folder)]) == OutputFolderError.exit_status
    err = capsys.readouterr().err.strip()
    assert "verify.schema.json: exists and is not the JSON Schema VerifyReport" in err
    assert "\n" not in err
    assert not (folder / "quality_map.schema.json").exists()  # nothing written: checked first
    assert theirs.read_bytes() == before["verify.schema.json"]


@pytest.mark.parametrize("top", [".nan", ".inf", "-.inf"])
def test_a_top_score_that_is_no_finite_number_is_refused_at_its_line(tmp_path, top):
    """`top: .nan` in summeval's majority_top rule loaded, and no rating equals nan: every
    candidate was rated low, as minimum_gap: .nan is refused."""
    shipped = Path(QualityMap.load("summeval").origin).read_text("utf-8")
    assert "  top: 5\n" in shipped
    path = tmp_path / "nan_top.yaml"
    path.write_text(shipped.replace("  top: 5\n", f"  top: {top}\n"), "utf-8")
    line = shipped[: shipped.index("  top: 5\n")].count("\n") + 1
    with pytest.raises(
        QualityMapError, match=rf"nan_top.yaml:{line}, at rating_rule.top: .*finite"
    ):
        QualityMap.load(path)
    assert QualityMap.load("summeval").rule.rate([5.0, 5.0, 4.0], "consistency").label != (
        QualityMap.load("summeval").rule.rate([4.0, 4.0, 5.0], "consistency").label
    )
