"""gpt3_summ: the published 205 (CNN) and 208 (BBC) tests on the shipped archive, counted again
here straight from the JSON, the fixture's counts by hand, and damaged copies."""

from __future__ import annotations

import itertools
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.errors import SourceFormatError

FOLDER = Path(get_adapter("gpt3_summ").folder())
ARCHIVE = FOLDER / "data" / "human_annotations.zip"
SAMPLE = FOLDER / "fixtures" / "sample"


def count_tests(records: dict, first_only: bool) -> int:
    """Pairs of one article's summaries whose vote totals differ by at least 2."""
    tests = 0
    for record in records.values():
        score = {"gpt3": 0, "t0": 0, "brio": 0}
        for annotator in record["annotators"]:
            best, worst = annotator["best_summary"], annotator["worst_summary"]
            for system in best[:1] if first_only else best:
                score[system] += 1
            for system in worst[:1] if first_only else worst:
                score[system] -= 1
        tests += sum(abs(score[a] - score[b]) >= 2 for a, b in itertools.combinations(score, 2))
    return tests


@pytest.mark.parametrize(
    ("dataset", "votes", "published"),
    [("cnn", "first", 205), ("bbc", "first", 208), ("cnn", "all", None), ("bbc", "all", None)],
)
def test_shipped_archive_gives_the_published_counts(dataset, votes, published):
    with zipfile.ZipFile(ARCHIVE) as archive:
        records = json.loads(archive.read(f"human_annotations/{dataset}_human.json"))
    expected = count_tests(records, first_only=votes == "first")
    if published is not None:  # NND_Summarization_GPT3.ipynb prints 205 and 208
        assert expected == published
    suite = build_suite("gpt3_summ", dataset=dataset, votes=votes)
    stats = suite.stats()
    assert (stats["pairs"], stats["groups"], stats["candidates"]) == (expected, 100, 300)
    assert stats["skipped"] == {}
    assert suite.manifest.license == "CC-BY-4.0"
    assert suite.manifest.margin_kind == "rater_share"


def test_reading_every_listed_system_changes_the_counts():
    """votes=all differs from the published reading: 203 (CNN) and 212 (BBC) tests."""
    pairs = {
        dataset: build_suite("gpt3_summ", dataset=dataset, votes="all").stats()["pairs"]
        for dataset in ("cnn", "bbc")
    }
    assert pairs == {"cnn": 203, "bbc": 208 + 4}


def test_fixture_counts_by_hand():
    """Articles 0-3 of cnn_human.json. Votes (best +1, worst -1, first listed only):
    0: gpt3 +2, brio +1, t0 -3 -> gpt3>t0, brio>t0 (gpt3-brio gap 1): 2 tests
    1: brio +2, gpt3 +1, t0 -3 -> brio>t0, gpt3>t0: 2
    2: annotator 1 lists [brio, gpt3] as best (brio counts), annotator 3 gpt3 as best and worst:
       gpt3 +1+1-1 = 1, brio +1, t0 -2 -> gpt3>t0, brio>t0: 2
    3: t0 +2, gpt3 -2+1 = -1, brio -1 -> t0>gpt3, t0>brio: 2
    8 tests over 4 articles, 12 summaries."""
    records = json.loads((SAMPLE / "human_annotations" / "cnn_human.json").read_text("utf-8"))
    assert count_tests(records, first_only=True) == 8
    suite = build_suite("gpt3_summ", SAMPLE)
    highs = sorted((p.group_id, p.high.systems[0], p.low.systems[0]) for p in suite.pairs)
    assert highs == [
        ("0", "brio", "t0"),
        ("0", "gpt3", "t0"),
        ("1", "brio", "t0"),
        ("1", "gpt3", "t0"),
        ("2", "brio", "t0"),
        ("2", "gpt3", "t0"),
        ("3", "t0", "brio"),
        ("3", "t0", "gpt3"),
    ]


def damaged(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "damaged"
    shutil.copytree(SAMPLE, folder)
    file = folder / "human_annotations" / "cnn_human.json"
    file.write_text(edit(file.read_text("utf-8")), "utf-8")
    return folder


def test_truncated_copy_is_an_error_naming_the_file(tmp_path):
    folder = damaged(tmp_path, lambda text: text[: len(text) // 2])
    with pytest.raises(SourceFormatError, match=r"cnn_human\.json:1: "):
        build_suite("gpt3_summ", folder)


def test_missing_field_is_an_error_naming_the_article(tmp_path):
    def drop_annotators(text: str) -> str:
        records = json.loads(text)
        del records["2"]["annotators"]
        return json.dumps(records)

    with pytest.raises(SourceFormatError, match=r"cnn_human\.json:1: 2: no 'annotators' field"):
        build_suite("gpt3_summ", damaged(tmp_path, drop_annotators))


@pytest.mark.parametrize(
    ("annotators", "message"),
    [
        ([{"best_summary": ["gpt4"], "worst_summary": ["t0"]}] * 3, r"best_summary is \['gpt4'\]"),
        ([{"best_summary": [], "worst_summary": ["t0"]}] * 3, r"best_summary is \[\]"),
        ([{"best_summary": ["gpt3"], "worst_summary": ["t0"]}] * 2, r"a list of 3 annotators"),
    ],
)
def test_vote_out_of_range_is_an_error_naming_the_annotator(tmp_path, annotators, message):
    def replace(text: str) -> str:
        records = json.loads(text)
        records["3"]["annotators"] = annotators
        return json.dumps(records)

    with pytest.raises(SourceFormatError, match=r"cnn_human\.json:1: 3\.annotators.*" + message):
        build_suite("gpt3_summ", damaged(tmp_path, replace))


def test_a_release_without_the_dataset_file_is_an_error(tmp_path):
    with pytest.raises(SourceFormatError, match=r"no human_annotations/bbc_human\.json"):
        build_suite("gpt3_summ", SAMPLE, dataset="bbc")
