"""The built-in suites reproduce the published figures from the shipped annotation files."""

from __future__ import annotations

import json

import pytest

from nnd_suites.cli import main


def build_and_stats(adapter: str, out, capsys) -> dict:
    assert main(["build", adapter, "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["stats", str(out), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_quiz_design_figures(tmp_path, capsys):
    stats = build_and_stats("quiz_design", tmp_path / "qd", capsys)
    assert stats["pairs"] == 2686
    assert stats["breakdowns"]["category"] == {
        "wrong_context": 1085,
        "off_target": 890,
        "disfluent": 711,
    }
    assert stats["groups"] == 452
    assert stats["candidates"] == 2458


def test_challenge300_figures(tmp_path, capsys):
    stats = build_and_stats("challenge300", tmp_path / "c3", capsys)
    assert stats["pairs"] == 807
    assert stats["breakdowns"]["group"] == {
        "Common Sense": 518,
        "Science": 193,
        "Entity": 47,
        "Creativity": 34,
        "Comparison": 15,
    }
    # The category of a Challenge 300 test is its question's group (hierarchy root).
    assert stats["breakdowns"]["category"] == stats["breakdowns"]["group"]
    assert sum(stats["breakdowns"]["question_category"].values()) == 807
    # Partial credit and uncredited systems are counted, never dropped silently.
    assert stats["skipped"]["credit 0.5 takes no part (quality map challenge300)"] == 81
    assert stats["skipped"]["credit 0.2 takes no part (quality map challenge300)"] == 5
    assert stats["skipped"]["credit 0.66 takes no part (quality map challenge300)"] == 2
    uncredited = [r for r in stats["skipped"] if r.startswith("system output without a credit")]
    assert len(uncredited) == 6
    assert all(stats["skipped"][r] == 300 for r in uncredited)


def test_challenge300_keeps_the_judged_empty_answer(challenge300_suite):
    empty = [p for p in challenge300_suite.pairs if p.low.text == ""]
    assert len(empty) == 1
    assert empty[0].high.text == "No."
    assert empty[0].low.systems == ["T5-XXL-SSM-NQ"]


def test_quiz_design_pairs_keep_structured_context(quiz_design_suite):
    pair = quiz_design_suite.pairs[0]
    assert set(pair.context) == {"answer", "paragraph"}
    assert pair.high.label == "No error"
    assert pair.label == pair.low.label == pair.category
    assert quiz_design_suite.manifest.default_template == "{answer} \n {paragraph}"
    assert "macaw" in quiz_design_suite.manifest.templates
    # Systems that produced the same question were merged upstream ("a|b"): kept as a list.
    assert any(len(p.high.systems) > 1 for p in quiz_design_suite.pairs)


def test_suites_are_deterministic(quiz_design_suite):
    from nnd_suites import build_suite

    again = build_suite("quiz_design")
    assert again.manifest.content_hash == quiz_design_suite.manifest.content_hash
    assert [p.id for p in again.pairs] == [p.id for p in quiz_design_suite.pairs]


@pytest.mark.parametrize("name", ["quiz_design", "challenge300"])
def test_manifest_provenance(name, tmp_path):
    from nnd_suites import build_suite

    suite = build_suite(name, out=tmp_path / name)
    manifest = suite.manifest
    assert manifest.adapter.name == name
    assert manifest.quality_map.name == name
    assert len(manifest.sources) == 1 and len(manifest.sources[0].sha256) == 64
    assert manifest.sources[0].bytes > 0
    assert manifest.license and manifest.citation.startswith("@")
