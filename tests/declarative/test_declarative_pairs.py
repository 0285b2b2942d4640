"""What a declared table's suite holds, pair by pair: every verdict on one pair of responses to
one context is combined by the map's rule, every rating of an output counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.cli import main
from nnd_suites.declarative.plugin import declared_adapter
from nnd_suites.declarative.reader import GATHERED_LEFT_OUT
from nnd_suites.errors import DeclarationError, QualityMapError, SourceFormatError

REPO = Path(__file__).resolve().parents[2]

HEADER = """\
name: pairs
quality_map: rule.yaml
metadata:
  task: code completion
  languages: [en]
  annotation_type: {annotation}
  license: MIT
  citation: "@misc{{x}}"
  source_urls: [https://example.org]
  description: pairs
file: {{format: csv}}
"""
PREFERENCE = """\
name: pairs
description: the accepted completion beats the other one
labels: [accepted, other]
tiers: [[accepted], [other]]
pairwise: {high_label: accepted, low_label: other, combine: majority, ties: abstain}
"""


def _suite(tmp_path: Path, body: str, rule: str, rows: str, **build: bool):
    annotation = "pairwise" if "comparisons:" in body else "numeric"
    (tmp_path / "source.yaml").write_text(HEADER.format(annotation=annotation) + body, "utf-8")
    (tmp_path / "rule.yaml").write_text(rule, "utf-8")
    (tmp_path / "rows.csv").write_text(rows, "utf-8")
    cls = declared_adapter("tests_pairs", tmp_path)
    cls.name = "pairs"  # what registering it would set
    return build_suite(cls(), tmp_path / "rows.csv", **build)


def test_verdicts_on_one_pair_of_one_context_combine_without_a_group_key(tmp_path):
    # Three developers judged the same two completions of the same code, shown either way
    # round: one preferred x, two y. Each row its own group, the suite held x > y and y > x
    # twice (opposite tests of one pair, the majority rule never applied), with exit 0.
    body = (
        'group: {context: {prefix: prefix}}\ntemplate: "{prefix}"\n'
        "comparisons: {text_a: a, text_b: b, system_a: sa, system_b: sb, winner: w, "
        'rater: r, verdicts: {"0": a, "1": b}}\n'
    )
    rows = (
        "prefix,a,b,sa,sb,w,r\n"
        "def f():,x,y,S1,S2,0,r1\n"
        "def f():,y,x,S2,S1,0,r2\n"
        "def f():,x,y,S1,S2,1,r3\n"
        "def g():,u,v,S1,S2,0,r1\n"
    )
    suite = _suite(tmp_path, body, PREFERENCE, rows)
    tests = sorted((p.context["prefix"], p.high.text, p.low.text) for p in suite.pairs)
    assert tests == [("def f():", "y", "x"), ("def g():", "u", "v")]
    assert suite.manifest.counts.groups == 2


MEAN_FLUENCY = """\
name: pairs
description: better by at least 1 in mean fluency
labels: [better, rated]
tiers: [[better], [rated]]
rating_rule: {kind: numeric, rating: fluency, aggregate: mean, minimum_gap: 1, low_label: rated}
"""


def test_an_aspect_written_two_ways_is_a_malformed_row_not_a_second_aspect(tmp_path):
    # r2 wrote 'Fluency': read as an aspect of its own, which the map never reads, x was judged
    # on r1 and r3 alone (mean 4.5) and beat y (3.5), where all three ratings give x 3.3 and y 4
    body = (
        'group: {key: [doc], context: {document: doc}}\ntemplate: "{document}"\n'
        "candidates: {text: out, system: sys, rater: r, aspect_column: aspect, value: score}\n"
    )
    rows = "doc,out,sys,r,aspect,score\n" + "".join(
        f"d,{out},S{out},{rater},{aspect},{score}\n"
        for out, second, ratings in [
            ("x", "Fluency ", (5, 1, 4)),
            ("y", "Fluency ", (3, 5, 4)),
            ("z", "fluency", (1, 1, 1)),
            ("w", "fluency", (5, 5, 5)),
        ]
        for rater, aspect, score in zip(
            ("r1", "r2", "r3"), ("fluency", second, "fluency"), ratings, strict=True
        )
    )
    with pytest.raises(
        SourceFormatError, match=r"rows\.csv:3: an aspect .*\('Fluency ' is 'fluency', first at"
    ):
        _suite(tmp_path, body, MEAN_FLUENCY, rows)
    suite = _suite(tmp_path, body, MEAN_FLUENCY, rows, skip_malformed=True)
    assert [(p.high.text, p.low.text) for p in suite.pairs] == [("w", "z")]
    skipped = {item.reason: item.count for item in suite.manifest.skipped}
    assert skipped[GATHERED_LEFT_OUT] == 2


def test_a_scale_where_lower_is_better_is_declared_and_its_pairs_point_the_right_way(tmp_path):
    # errors per output: fewer is better. With no way to say so, a contributor's numeric map
    # made every test prefer the output with more errors (the pairs swapped, exit 0).
    body = (
        'group: {key: [doc], context: {document: doc}}\ntemplate: "{document}"\n'
        "candidates: {text: out, system: sys, ratings: {errors: errors}, low: 0, high: 10, "
        "better: lower}\n"
    )
    rule = MEAN_FLUENCY.replace("rating: fluency", "rating: errors")
    rows = "doc,out,sys,errors\nd,clean,A,0\nd,sloppy,B,4\nd,broken,C,10\n"
    suite = _suite(tmp_path, body, rule, rows)
    tests = sorted((p.high.text, p.low.text, p.high.score, p.low.score) for p in suite.pairs)
    assert tests == [
        ("clean", "broken", 0.0, -10.0),
        ("clean", "sloppy", 0.0, -4.0),
        ("sloppy", "broken", -4.0, -10.0),
    ]
    # the declared bounds are the file's own scale: 11 errors is out of range, not -11
    with pytest.raises(SourceFormatError, match=r"rows\.csv:4: column 'errors': '11' out of range"):
        _suite(tmp_path, body, rule, rows.replace(",10\n", ",11\n"))


def test_verdicts_on_different_aspects_of_one_pair_are_never_combined(tmp_path):
    # one rater preferred x for fluency and y for meaning and simplicity: combined into one
    # majority, the suite held y > x as a 'meaning' test of three votes, fluency's test lost
    body = (
        'group: {key: [id], context: {prompt: prompt}}\ntemplate: "{prompt}"\n'
        "comparisons: {text_a: a, text_b: b, winner: w, rater: r, category: aspect, "
        'verdicts: {"0": a, "1": b}}\n'
    )
    rows = (
        "id,prompt,a,b,w,r,aspect\n"
        "1,p,x,y,0,r1,fluency\n"
        "1,p,x,y,1,r1,meaning\n"
        "1,p,y,x,0,r1,simplicity\n"
    )
    suite = _suite(tmp_path, body, PREFERENCE, rows)
    tests = sorted((p.category, p.high.text, p.low.text, len(p.votes)) for p in suite.pairs)
    assert tests == [
        ("fluency", "x", "y", 1),
        ("meaning", "y", "x", 1),
        ("simplicity", "y", "x", 1),
    ]


def test_one_raters_verdicts_on_several_undeclared_aspects_point_to_comparisons_category(tmp_path):
    # ASSET's table (a row per worker, pair and aspect) declared without `category`: the error
    # said only "keep one of the two rows", which would throw away the other aspects' verdicts
    body = (
        'group: {key: [id], context: {prompt: prompt}}\ntemplate: "{prompt}"\n'
        'comparisons: {text_a: a, text_b: b, winner: w, rater: r, verdicts: {"0": a, "1": b}}\n'
    )
    rows = "id,prompt,a,b,w,r,aspect\n1,p,x,y,0,r1,fluency\n1,p,x,y,1,r1,meaning\n"
    with pytest.raises(
        SourceFormatError,
        match=r"rows\.csv:3: a rater judged .*; if they judge "
        r"different aspects, name that column comparisons\.category\)$",
    ):
        _suite(tmp_path, body, PREFERENCE, rows)
    # declared, a rater's true repeat within one aspect is not sent there
    declared = body.replace("rater: r,", "rater: r, category: aspect,")
    with pytest.raises(SourceFormatError) as repeat:
        _suite(tmp_path, declared, PREFERENCE, rows + "1,p,x,y,0,r1,fluency\n")
    assert "rows.csv:4: a rater judged" in str(repeat.value)
    assert "comparisons.category" not in str(repeat.value)


def test_a_rater_judging_one_pair_twice_is_a_malformed_row_not_a_second_vote(tmp_path):
    # r1's row repeated: counted twice, r1 outvoted r2 (2 to 1) where the raters tie 1 to 1
    body = (
        'group: {key: [id], context: {prompt: prompt}}\ntemplate: "{prompt}"\n'
        'comparisons: {text_a: a, text_b: b, winner: w, rater: r, verdicts: {"0": a, "1": b}}\n'
    )
    rows = "id,prompt,a,b,w,r\n1,p,x,y,0,r1\n1,p,y,x,0,r2\n1,p,y,x,1,r1\n2,q,u,v,0,r1\n"
    with pytest.raises(
        SourceFormatError,
        match=r"rows\.csv:4: a rater judged these two responses again \(rater 'r1', first at "
        r"rows\.csv:2\)",
    ):
        _suite(tmp_path, body, PREFERENCE, rows)
    # two more repeats, of other raters and rows: one reason counts all three (each repeat's
    # "first at" was in the reason, a manifest line per repeated row), the places its examples
    rows += "2,q,u,v,0,r1\n1,p,x,y,1,r2\n"
    suite = _suite(tmp_path, body, PREFERENCE, rows, skip_malformed=True)
    assert [(p.high.text, p.low.text) for p in suite.pairs] == [("u", "v")]
    assert [(s.reason, s.count, s.examples) for s in suite.manifest.skipped] == [
        (
            "malformed row: a rater judged these two responses again",
            3,
            [
                "rows.csv:4 (rater 'r1', first at rows.csv:2)",
                "rows.csv:6 (rater 'r1', first at rows.csv:5)",
                "rows.csv:7 (rater 'r2', first at rows.csv:3)",
            ],
        ),
        ("no majority (majority)", 2, ["rows.csv:2"]),
    ]


@pytest.mark.parametrize(
    ("adapter", "fixture", "other_map", "line", "fault"),
    [
        ("sfhot", "sfhot_sample.json", "copilot_arena", 28, "declares candidates (ratings), but"),
        (
            "copilot_arena",
            "copilot_arena_sample.csv",
            "sfhot",
            32,
            "declares comparisons (judged pairs), but quality map sfhot",
        ),
    ],
)
def test_a_declaration_and_a_map_of_the_other_kind_is_a_declaration_fault(
    tmp_path, capsys, adapter, fixture, other_map, line, fault
):
    # was exit 2 (usage), found only once the first group was read
    source = REPO / "adapters" / adapter / "fixtures" / fixture
    argv = ["build", adapter, "--source", str(source), "--quality-map", other_map]
    assert main([*argv, "--out", str(tmp_path / "out")]) == DeclarationError.exit_status == 3
    error = capsys.readouterr().err
    assert f"adapters/{adapter}/source.yaml:{line}: the source {fault}" in error
    assert not (tmp_path / "out").exists()


def test_a_class_adapter_and_a_pairwise_map_is_the_maps_mismatch_either_way(tmp_path):
    source = REPO / "adapters" / "summeval" / "fixtures"
    with pytest.raises(
        QualityMapError, match=r"copilot_arena judges pairs, so the adapter must emit"
    ):
        build_suite("summeval", next(source.glob("*.jsonl")), quality_map="copilot_arena")


def test_a_row_with_an_empty_group_key_is_malformed_at_its_own_line(tmp_path):
    # a key of one column empty: the error named the table's last row (rows.csv:5, read when
    # the group was made), and --skip-malformed stopped there too; a key of two columns both
    # empty made one group ' | ' of every such row (a build of exit 0)
    body = (
        'group: {key: [doc, part], context: {document: doc}}\ntemplate: "{document}"\n'
        "candidates: {text: out, system: sys, ratings: {fluency: score}}\n"
    )
    rows = "doc,part,out,sys,score\n,,x,A,5\n,,y,B,1\nd,1,x,A,5\nd,1,y,B,1\n"
    with pytest.raises(SourceFormatError) as caught:
        _suite(tmp_path, body, MEAN_FLUENCY, rows)
    assert str(caught.value).endswith(
        "rows.csv:2: the group key ['doc', 'part'] is empty (fill it in, or leave such rows out "
        "with a filter (--skip-malformed counts them))"
    )
    suite = _suite(tmp_path, body, MEAN_FLUENCY, rows, skip_malformed=True)
    assert [(p.group_id, p.high.text, p.low.text) for p in suite.pairs] == [("d | 1", "x", "y")]
    (skipped,) = suite.manifest.skipped
    assert (skipped.count, skipped.examples) == (2, ["rows.csv:2", "rows.csv:3"])
    one_column = body.replace("[doc, part]", "[doc]")
    with pytest.raises(SourceFormatError, match=r"rows\.csv:2: the group key \['doc'\] is empty"):
        _suite(tmp_path, one_column, MEAN_FLUENCY, rows)


def test_a_declared_winner_with_stray_spaces_is_that_rows_fault(tmp_path):
    """A winner cell '0 ' where verdicts declare '0' stopped the build as a fault of
    source.yaml, which --skip-malformed cannot skip: it is a typo in that row, named at its
    line, and skipped and counted with --skip-malformed; an undeclared value stays the
    declaration's fault."""
    body = (
        'group: {key: [id], context: {prompt: prompt}}\ntemplate: "{prompt}"\n'
        'comparisons: {text_a: a, text_b: b, winner: w, verdicts: {"0": a, "1": b}}\n'
    )
    rows = 'id,prompt,a,b,w\n1,p,x,y,0\n2,q,u,v,"0 "\n3,r,s,t," 1"\n'
    with pytest.raises(SourceFormatError, match=r"rows\.csv:3: winner value with spaces") as e:
        _suite(tmp_path, body, PREFERENCE, rows)
    assert "'0 '" in str(e.value) and "--skip-malformed" in str(e.value)
    suite = _suite(tmp_path, body, PREFERENCE, rows, skip_malformed=True)
    assert [(p.high.text, p.low.text) for p in suite.pairs] == [("x", "y")]
    (skipped,) = suite.manifest.skipped
    assert skipped.count == 2 and skipped.examples == ["rows.csv:3 ('0 ')", "rows.csv:4 (' 1')"]
    with pytest.raises(DeclarationError, match=r"winner '2' \(column 'w'\) is not declared"):
        _suite(tmp_path, body, PREFERENCE, rows.replace('" 1"', "2"), skip_malformed=True)


def test_a_group_key_with_stray_spaces_beside_its_own_is_that_rows_fault(tmp_path):
    # A developer's verdict keyed '1 ' beside '1' (same prompt, same two completions) made a
    # group apart: the suite held x > y and y > x, two opposite tests of one pair, with exit 0
    # (a rater or system cell so written was refused already)
    body = (
        'group: {key: [id], context: {prompt: prompt}}\ntemplate: "{prompt}"\n'
        'comparisons: {text_a: a, text_b: b, winner: w, rater: r, verdicts: {"0": a, "1": b}}\n'
    )
    rows = 'id,prompt,a,b,w,r\n1,p,x,y,0,r1\n1,p,x,y,0,r2\n"1 ",p,x,y,1,r3\n'
    with pytest.raises(SourceFormatError, match=r"rows\.csv:4: group key \['1 '\] differs") as e:
        _suite(tmp_path, body, PREFERENCE, rows)
    assert "from that of rows.csv:2 (['1'])" in str(e.value), e.value
    suite = _suite(tmp_path, body, PREFERENCE, rows, skip_malformed=True)
    assert [(p.high.text, p.low.text) for p in suite.pairs] == [("x", "y")]
    (skipped,) = suite.manifest.skipped
    assert skipped.count == 1 and skipped.examples[0].startswith("rows.csv:4")
    # keys whose cells are written with the same spaces each time are read as written
    spaced = rows.replace("\n1,", '\n"1 ",')
    assert [
        (p.high.text, p.low.text) for p in _suite(tmp_path, body, PREFERENCE, spaced).pairs
    ] == [("x", "y")]


@pytest.mark.parametrize("other", ["Fluency", "fluency ", "fluency", "Meaning"])
def test_a_category_written_another_way_is_that_rows_fault(tmp_path, other):
    # r3 wrote 'Fluency' (or 'fluency ') where r1 and r2 wrote 'fluency': a category of its own
    # with exit 0, its test of x and y counted apart from fluency's
    body = (
        'group: {key: [id], context: {prompt: prompt}}\ntemplate: "{prompt}"\n'
        "comparisons: {text_a: a, text_b: b, winner: w, rater: r, category: aspect, "
        'verdicts: {"0": a, "1": b}}\n'
    )
    rows = "id,prompt,a,b,w,r,aspect\n1,p,x,y,0,r1,fluency\n1,p,x,y,0,r2,fluency\n"
    rows += f"1,p,x,y,1,r3,{other}\n"
    if other in ("fluency", "Meaning"):  # one way throughout: read as written
        categories = {p.category for p in _suite(tmp_path, body, PREFERENCE, rows).pairs}
        assert categories == {"fluency", other}
        return
    with pytest.raises(
        SourceFormatError, match=r"rows\.csv:4: a category \(column 'aspect'\) written another"
    ) as e:
        _suite(tmp_path, body, PREFERENCE, rows)
    assert f"({other!r} is 'fluency', first at rows.csv:2)" in str(e.value), e.value
    suite = _suite(tmp_path, body, PREFERENCE, rows, skip_malformed=True)
    assert [(p.category, p.high.text, p.low.text) for p in suite.pairs] == [("fluency", "x", "y")]
    (skipped,) = suite.manifest.skipped
    assert skipped.count == 1 and skipped.examples[0].startswith("rows.csv:4")


def test_a_system_or_rater_cell_with_stray_spaces_is_that_rows_fault(tmp_path):
    # 'S1 ' beside 'S1' made a system of its own (one output, its own human score) and a rater
    # 'r1 ' beside 'r1' a second rater whose repeated verdict was a second vote, with exit 0
    body = (
        'group: {key: [doc], context: {document: doc}}\ntemplate: "{document}"\n'
        "candidates: {text: out, system: sys, ratings: {fluency: score}}\n"
    )
    rows = "doc,out,sys,score\nd,x,S1,5\nd,y,S2,3\nd,z,S3,1\ne,u,S1 ,4\ne,v,S2,2\ne,w,S3,1\n"
    with pytest.raises(SourceFormatError, match=r"rows\.csv:5: system cell with spaces") as e:
        _suite(tmp_path, body, MEAN_FLUENCY, rows)
    assert "(column 'sys', named at " in str(e.value) and "('S1 ')" in str(e.value)
    suite = _suite(tmp_path, body, MEAN_FLUENCY, rows, skip_malformed=True)
    assert {s for p in suite.pairs for c in (p.high, p.low) for s in c.systems} == {
        "S1",
        "S2",
        "S3",
    }
    (skipped,) = suite.manifest.skipped
    assert skipped.count == 1 and skipped.examples == ["rows.csv:5 ('S1 ')"]
    body = (
        'group: {key: [id], context: {prompt: prompt}}\ntemplate: "{prompt}"\n'
        'comparisons: {text_a: a, text_b: b, winner: w, rater: r, verdicts: {"0": a, "1": b}}\n'
    )
    rows = 'id,prompt,a,b,w,r\n1,p,x,y,0,r1\n1,p,y,x,0,r2\n1,p,x,y,0,"r1 "\n'
    with pytest.raises(SourceFormatError, match=r"rows\.csv:4: rater cell with spaces.*'r1 '"):
        _suite(tmp_path, body, PREFERENCE, rows)
