"""summeval_experts: the fixture's tests by hand, each system's expert mean per aspect equal to
the articles file's averages (SummEval's Table 2 on the real file), and damaged copies."""

from __future__ import annotations

import json
import shutil
import statistics
from collections.abc import Callable
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.cli import main
from nnd_suites.errors import SourceFormatError

SAMPLE = get_adapter("summeval_experts").folder() / "fixtures" / "sample"
RATINGS = "cnndm_THumB-1.0.jsonl"
ASPECTS = ("coherence", "consistency", "fluency", "relevance")


def test_fixture_counts_by_hand():
    """Majority of 3 experts at 5 -> high, per aspect; high beats low within an article.
    Article aaa: M0 (Lead-3), M22 (BART), M17 (T5), M23 (Pegasus-huge-news, same text as M22).
      coherence: M0 high, M17 low; M22 low and M23 high share a text: both left out -> 1
      consistency: M0, M22, M23 high, M17 low -> 3; fluency: M22, M17, M23 high, M0 low -> 3
      relevance: M22, M23 high, M0, M17 low -> 4
    Article bbb: M0 high in every aspect; coherence and relevance: M22, M17 low -> 2 + 2;
      consistency and fluency: M0, M22 high, M17 low -> 2 + 2.
    19 tests; Pegasus-dynamic-mix (1 row) and Human-H (2 rows) are no SummEval systems."""
    stats = build_suite("summeval_experts", SAMPLE).stats()
    assert stats["pairs"] == 19
    assert stats["breakdowns"]["aspect"] == {
        "coherence": 1 + 2,
        "consistency": 3 + 2,
        "fluency": 3 + 2,
        "relevance": 4 + 2,
    }


def article_means(folder: Path) -> dict[str, dict[str, float]]:
    articles = [json.loads(line) for line in (folder / "summeval_articles.jsonl").open()]
    models = {model for article in articles for model in article["sys_summs"]}
    return {
        model: {
            aspect: statistics.fmean(
                a["sys_summs"][model]["scores"][aspect] for a in articles if model in a["sys_summs"]
            )
            for aspect in ASPECTS
        }
        for model in models
    }


def system_means(folder: Path, tmp_path: Path, capsys) -> dict[str, dict[str, float]]:
    out = tmp_path / "suite"
    assert main(["build", "summeval_experts", "--source", str(folder), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["systems", str(out), "--json"]) == 0
    systems = json.loads(capsys.readouterr().out)["systems"]
    return {name: row["by_category"] for name, row in systems.items()}


def test_system_means_equal_the_articles_file(tmp_path, capsys):
    got = system_means(SAMPLE, tmp_path, capsys)
    expected = article_means(SAMPLE)
    assert set(got) == {"M0", "M17", "M22", "M23"}
    for model, means in expected.items():
        assert got[model] == pytest.approx(means, abs=1e-12)
    assert got["M22"]["fluency"] == pytest.approx((5 + 13 / 3) / 2)  # [5,5,5] and [5,5,3]


def damaged(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "damaged"
    shutil.copytree(SAMPLE, folder)
    lines = (folder / RATINGS).read_text("utf-8").splitlines()
    (folder / RATINGS).write_text("\n".join(edit(lines)) + "\n", "utf-8")
    return folder


def edit_record(index: int, change: Callable[[dict], object]) -> Callable[[list[str]], list[str]]:
    def edit(lines: list[str]) -> list[str]:
        record = json.loads(lines[index])
        change(record)
        return [*lines[:index], json.dumps(record), *lines[index + 1 :]]

    return edit


def test_truncated_copy_is_an_error_naming_the_line(tmp_path):
    folder = damaged(tmp_path, lambda lines: [*lines[:4], lines[4][:100]])
    with pytest.raises(SourceFormatError, match=rf"{RATINGS}:5: "):
        build_suite("summeval_experts", folder)


def test_missing_field_is_an_error_naming_it(tmp_path):
    folder = damaged(tmp_path, edit_record(1, lambda r: r.pop("expert_annotations")))
    with pytest.raises(SourceFormatError, match=rf"{RATINGS}:2: .*expert_annotations"):
        build_suite("summeval_experts", folder)


def test_score_out_of_range_is_an_error_naming_the_line(tmp_path):
    def six(record: dict) -> None:
        record["expert_annotations"][2]["fluency"] = 6

    folder = damaged(tmp_path, edit_record(2, six))
    expected = rf"{RATINGS}:3: annotation 2: fluency: 6 out of range \[1, 5\]"
    with pytest.raises(SourceFormatError, match=expected):
        build_suite("summeval_experts", folder)


def test_a_system_read_as_the_wrong_model_is_an_error(tmp_path):
    """THumB's names are mapped to SummEval ids; the articles file's means catch a wrong one."""
    folder = damaged(tmp_path, edit_record(0, lambda r: r.update(SYS="BART")))
    with pytest.raises(SourceFormatError, match=r"BART \(M22\): expert mean consistency"):
        build_suite("summeval_experts", folder)


def test_unknown_system_and_unknown_article_are_errors(tmp_path):
    folder = damaged(tmp_path, edit_record(0, lambda r: r.update(SYS="Pegasus-large")))
    with pytest.raises(SourceFormatError, match=r":1: unknown system 'Pegasus-large'"):
        build_suite("summeval_experts", folder)
    shutil.rmtree(folder)
    folder = damaged(tmp_path, edit_record(1, lambda r: r.update(seg_id="c" * 40)))
    with pytest.raises(SourceFormatError, match=r":2: seg_id c+ names no article"):
        build_suite("summeval_experts", folder)


def test_skip_malformed_accounts_for_every_row(tmp_path):
    folder = damaged(tmp_path, lambda lines: [*lines[:4], lines[4][:100], *lines[5:]])
    stats = build_suite("summeval_experts", folder, skip_malformed=True).stats()
    left_out = sum(stats["skipped"].values()) - stats["skipped"].get(
        "same text given conflicting labels [coherence]", 0
    )
    # line 5 (Pegasus-dynamic-mix) is the malformed one: 7 candidates + 2 Human-H rows + 1
    assert stats["candidates"] + left_out == 10
    assert sum(n for reason, n in stats["skipped"].items() if "malformed" in reason) == 1
