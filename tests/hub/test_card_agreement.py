"""The dataset card's human agreement section: the raters' leave-one-out agreement of each config
whose tests carry at least two votes, read back from the exported votes column. The SummEval
fixture (28 tests, 3 experts each; 53 of 73 compared votes agree, derived by hand in
tests/evaluation/test_agreement_summeval.py) has one; Challenge 300 (no raters) has none."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from datasets import Features

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.hub import export_suites
from nnd_suites.hub.card_agreement import config_agreement
from nnd_suites.hub.configs import describe_config
from nnd_suites.hub.layout import CARD_FILE
from nnd_suites.human.agreement import rater_agreement
from nnd_suites.suite import storage
from nnd_suites.suite.storage import data_files

SOURCE = (
    get_adapter("summeval").folder() / "fixtures" / "model_annotations.aligned.paired.sample.jsonl"
)


@pytest.fixture(scope="module")
def summeval():
    return build_suite("summeval", SOURCE)


def test_the_card_shows_the_agreement_of_suites_with_votes(summeval, challenge300_suite, tmp_path):
    folder = tmp_path / "nnd"
    export_suites([summeval, challenge300_suite], folder, repo_id="org/nnd")
    card = (folder / CARD_FILE).read_text("utf-8")
    expected = rater_agreement([v.prefers for v in p.votes] for p in summeval.pairs)
    assert (expected.tests, expected.cases, expected.agreed) == (28, 73, 53)
    found = describe_config(folder / "summeval").agreement
    assert found == expected  # read back from the exported votes column alone
    low, high = found.ci
    section = card[card.index("## Human agreement") : card.index("## How to use")]
    assert f"| `summeval` | 28 | 73 | 72.6% [{100 * low:.1f}, {100 * high:.1f}] |" in section
    assert "`summeval`: 12 tie votes among the compared ones; 11 votes whose others" in section
    assert "challenge300" not in section  # no raters, no row
    assert describe_config(folder / "challenge300").agreement is None


def test_no_section_without_votes(challenge300_suite, tmp_path):
    folder = tmp_path / "nnd"
    export_suites([challenge300_suite], folder)
    assert "## Human agreement" not in (folder / CARD_FILE).read_text("utf-8")


def test_files_without_a_votes_column_have_no_agreement(summeval, tmp_path):
    folder = tmp_path / "nnd"
    export_suites([summeval], folder)
    shard = data_files(folder / "summeval")[0]
    older = tmp_path / "older.parquet"
    pq.write_table(pq.read_table(shard).drop_columns(["votes"]), older)
    assert config_agreement([pq.read_table(older)]) is None
    assert config_agreement([pq.read_table(shard)]).agreed == 53


def test_describing_a_config_reads_each_data_file_once(summeval, tmp_path, monkeypatch):
    """A config kept in a dataset folder is described each time a suite is written into it: its
    data files were read five times each (schema, row count, table, features, votes)."""
    folder = tmp_path / "nnd"
    export_suites([summeval], folder)
    shard = data_files(folder / "summeval")[0]  # two shards, as `datasets` may write them
    table = pq.read_table(shard)
    pq.write_table(table.slice(0, 10), shard.with_name("test-00000-of-00002.parquet"))
    pq.write_table(table.slice(10), shard.with_name("test-00001-of-00002.parquet"))
    shard.unlink()
    read = []
    opened = storage.parquet_buffer
    monkeypatch.setattr(
        storage, "parquet_buffer", lambda path, *a: read.append(path) or opened(path, *a)
    )
    info = describe_config(folder / "summeval")
    shards = data_files(folder / "summeval")
    assert sorted(read) == shards  # each once
    assert info.num_examples == 28
    assert info.num_bytes == sum(pq.read_table(shard).nbytes for shard in shards)
    assert info.features == Features.from_arrow_schema(table.schema)
    assert info.agreement == rater_agreement([v.prefers for v in p.votes] for p in summeval.pairs)
