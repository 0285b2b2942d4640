"""Raters, votes and margins survive a suite folder and a Hub export (issue 22 §2)."""

from __future__ import annotations

from typing import get_args

import datasets
import pyarrow.parquet as pq

from nnd_suites import Suite, build_suite, load_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.hub import export_suites
from nnd_suites.records.margins import MARGIN_MEANINGS, MarginKind
from nnd_suites.records.votes import Vote
from nnd_suites.suite import CANDIDATES_FILE

SUMMEVAL = (
    get_adapter("summeval").folder() / "fixtures" / "model_annotations.aligned.paired.sample.jsonl"
)
EXPERTS = ["expert1", "expert2", "expert3"]


def test_raters_votes_and_margins_round_trip_through_folder_and_export(tmp_path):
    suite = build_suite("summeval", SUMMEVAL, tmp_path / "summeval")
    assert {tuple(c.raters or ()) for c in suite.candidates} == {tuple(EXPERTS)}
    # the candidates file holds the raters column as written
    stored = pq.read_table(tmp_path / "summeval" / CANDIDATES_FILE).to_pylist()
    assert [row["raters"] for row in stored] == [EXPERTS] * len(suite.candidates)
    loaded = Suite.load(tmp_path / "summeval")
    assert loaded == suite and loaded.manifest.margin_kind == "rater_share"
    first = next(p for p in loaded.pairs if p.aspect == "consistency")
    assert first.votes == [
        Vote(rater="expert1", prefers="high", strength=2.0),
        Vote(rater="expert2", prefers="tie", strength=0.0),
        Vote(rater="expert3", prefers="tie", strength=0.0),
    ]
    folder = tmp_path / "nnd"
    export_suites([suite], folder)
    exported = load_suite(folder, "summeval")
    assert exported == suite
    assert [c.raters for c in exported.candidates] == [EXPERTS] * len(suite.candidates)
    assert [(p.votes, p.margin) for p in exported.pairs] == [
        (p.votes, p.margin) for p in suite.pairs
    ]
    rows = datasets.load_dataset(str(folder), "summeval", split="test", cache_dir=str(tmp_path))
    assert rows[0]["votes"] == [v.model_dump() for v in suite.pairs[0].votes]
    assert rows["margin"] == [p.margin for p in suite.pairs]


def test_the_dataset_card_says_what_each_margin_kind_means(tmp_path):
    assert set(MARGIN_MEANINGS) == set(get_args(MarginKind))  # a new kind must be described
    suite = build_suite("summeval", SUMMEVAL, tmp_path / "summeval")
    export_suites([suite], tmp_path / "nnd")
    card = (tmp_path / "nnd" / "README.md").read_text()
    assert "Human margin of each test: `rater_share`, the share of raters' votes" in card
    assert "`votes`, `margin`" in card
