"""frank: NoE rule, roll-up, split file and CNN/DM filter, with counts derived by hand."""

from __future__ import annotations

import json

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.errors import QualityMapError, SourceFormatError

FIXTURES = get_adapter("frank").folder() / "fixtures"
SOURCE = FIXTURES / "human_annotations_sentence.json"
frank_module = __import__(get_adapter("frank").__module__, fromlist=["summary_label"])


def test_rule_on_the_fixture_matches_counts_derived_by_hand():
    # Test split, CNN/DM articles of the fixture (3 annotators per sentence):
    #  article 3ca9...: bart NoE (every sentence has 2+ NoE); pegasus EntE (EntE x2);
    #    bus CorefE (CorefE x2 > LinkE x1); pgn OutE (OutE/GramE tie: OutE seen first);
    #    bert_sum OtherE -> left out.  1 NoE x 3 errors = 3 tests.
    #  article a1b2...: bart, pegasus NoE (2 NoE + CircE); bus CircE (x2 > RelE);
    #    pgn GramE (second sentence).  2 x 2 = 4 tests.
    #  article 0f1e...: bart NoE; bus NoE (3 NoE, LinkE too); pegasus EntE (x2 > RelE).
    #    2 x 1 = 2 tests.
    #  article 9e8d... is in the validation split, article 34567890 is XSum: left out.
    suite = build_suite("frank", SOURCE)
    stats = suite.stats()
    assert stats["pairs"] == 3 + 4 + 2
    assert stats["breakdowns"]["label"] == {
        "EntE": 1 + 2,
        "CircE": 2,
        "GramE": 2,
        "CorefE": 1,
        "OutE": 1,
    }
    assert stats["breakdowns"]["category"] == {
        "Semantic Frame": 5,
        "Verifiability": 3,
        "Discourse": 1,
    }
    assert stats["skipped"] == {
        "article not in the test split": 2,
        "label 'OtherE' takes no part (quality map frank)": 1,
        "xsum article (dataset=cnndm)": 2,
    }
    assert all(p.high.label == "NoE" for p in suite.pairs)
    coref = next(p for p in suite.pairs if p.label == "CorefE")
    assert coref.category_path == ["Discourse", "CorefE"]
    assert coref.context["article"].startswith("The city of Springfield")


def test_split_and_dataset_options():
    # all articles: + validation article (1 NoE x EntE) + XSum article (1 NoE x RelE)
    everything = build_suite("frank", SOURCE, split="all", dataset="all").stats()
    assert everything["pairs"] == 9 + 1 + 1
    assert everything["breakdowns"]["label"]["RelE"] == 1
    xsum = build_suite("frank", SOURCE, dataset="xsum").stats()
    assert xsum["pairs"] == 1 and xsum["groups"] == 1
    validation = build_suite("frank", SOURCE, split="validation").stats()
    assert validation["pairs"] == 1
    explicit = build_suite("frank", SOURCE, split_file=str(FIXTURES / "validation_split.txt"))
    assert explicit.stats()["pairs"] == 1


def test_missing_split_file_says_what_to_do(tmp_path):
    source = tmp_path / "human_annotations_sentence.json"
    source.write_text(SOURCE.read_text())
    with pytest.raises(SourceFormatError, match="split_file=PATH_OR_URL"):
        build_suite("frank", source)
    assert build_suite("frank", source, split="all").stats()["pairs"] == 10


@pytest.mark.parametrize(
    ("sentences", "label"),
    [
        ([{"a": ["NoE"], "b": ["NoE"], "c": ["RelE"]}], "NoE"),
        ([{"a": ["NoE"], "b": ["LinkE"], "c": ["CorefE"]}], "LinkE"),
        ([{"a": ["NoE"], "b": ["NoE"]}, {"a": ["GramE"], "b": ["NoE"]}], "GramE"),
        ([{"a": ["NoE"]}], None),
    ],
)
def test_summary_label(sentences, label):
    assert frank_module.summary_label(sentences) == label


def test_bad_items_are_reported(tmp_path):
    items = json.loads(SOURCE.read_text())
    del items[3]["summary"]
    path = tmp_path / "human_annotations_sentence.json"
    path.write_text(json.dumps(items))
    with pytest.raises(SourceFormatError, match=r"item 3.*summary"):
        build_suite("frank", path, split="all")
    items = json.loads(SOURCE.read_text())
    items[0]["summary_sentences_annotations"] = [{"a1": ["Typo"], "a2": ["Typo"], "a3": ["NoE"]}]
    path.write_text(json.dumps(items))
    with pytest.raises(QualityMapError, match="'Typo'"):
        build_suite("frank", path, split="all")
    path.write_text("{not json")
    with pytest.raises(SourceFormatError, match="not a JSON document"):
        build_suite("frank", path, split="all")
