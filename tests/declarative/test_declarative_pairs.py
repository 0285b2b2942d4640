"""What a declared table's suite holds, pair by pair: every verdict on one pair of responses to
one context is combined by the map's rule, every rating of an output counts."""

from __future__ import annotations

from pathlib import Path

from nnd_suites import build_suite
from nnd_suites.declarative.plugin import declared_adapter

HEADER = """\
name: pairs
quality_map: rule.yaml
metadata:
  task: code completion
  languages: [en]
  annotation_type: pairwise
  license: MIT
  citation: "@misc{x}"
  source_urls: [https://example.org]
  description: pairs
file: {format: csv}
"""
PREFERENCE = """\
name: pairs
description: the accepted completion beats the other one
labels: [accepted, other]
tiers: [[accepted], [other]]
pairwise: {high_label: accepted, low_label: other, combine: majority, ties: abstain}
"""


def _suite(tmp_path: Path, body: str, rule: str, rows: str):
    (tmp_path / "source.yaml").write_text(HEADER + body, "utf-8")
    (tmp_path / "rule.yaml").write_text(rule, "utf-8")
    (tmp_path / "rows.csv").write_text(rows, "utf-8")
    cls = declared_adapter("tests_pairs", tmp_path)
    cls.name = "pairs"  # what registering it would set
    return build_suite(cls(), tmp_path / "rows.csv")


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
