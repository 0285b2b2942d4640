"""wmt23_sxs_ende / wmt23_sxs_zhen: the published counts of rated items (104 en-de, 377 zh-en),
every count again straight from the shipped archives, and damaged copies."""

from __future__ import annotations

import io
import re
import shutil
import tarfile
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.errors import SourceFormatError

#: Song et al. (2025), arXiv 2502.17797: paragraphs rated by 3 raters for each of 10 systems.
PUBLISHED_ITEMS = {"ende": 104, "zhen": 377}
MARKS = re.compile(r"</?v>")
WEIGHTS = {"Minor": 1.0, "Major": 5.0, "Critical": 25.0}
HOTW_REASON = "HOTW-test row: an attention check (a planted error), not a rating"


def release(pair: str) -> Path:
    cls = get_adapter(f"wmt23_sxs_{pair}")
    return cls.default_source_path()


def fixture(pair: str) -> Path:
    return get_adapter(f"wmt23_sxs_{pair}").folder() / "fixtures" / "sample"


def rows_of(text: str) -> list[list[str]]:
    lines = text.split("\n")
    assert lines[0].split("\t")[-1].startswith("# Documentation:")
    return [line.split("\t") for line in lines[1:] if line]


def count(rows: list[list[str]]) -> dict:
    """The wmt_mqm rule, counted here from the raw rows: per paragraph and system, a candidate
    with only No-error rows beats every candidate with a translation error; the worst error
    (MQM weight) gives the label; source errors are no translation errors."""
    hotw = sum(row[8] == "HOTW-test" for row in rows)
    by_candidate: dict[str, dict[str, list[list[str]]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row[8] != "HOTW-test":
            by_candidate[row[3]][row[0]].append(row)
    labels: Counter = Counter()
    raters: Counter = Counter()
    pairs = skipped = 0
    for systems in by_candidate.values():
        clean, worst = 0, []
        for candidate_rows in systems.values():
            raters[len({row[4] for row in candidate_rows})] += 1
            errors = [
                (weight(row), row[8])
                for row in candidate_rows
                if row[8] in WEIGHTS and not row[7].lower().startswith("source")
            ]
            if errors:
                worst.append(max(errors, key=lambda error: error[0])[1])
            elif all(row[8] == "No-error" for row in candidate_rows):
                clean += 1
            else:
                skipped += 1
        pairs += clean * len(worst)
        for label in worst:
            labels[label] += clean
    return {
        "items": len(by_candidate),
        "hotw": hotw,
        "pairs": pairs,
        "labels": dict(labels),
        "skipped": skipped,
        "raters": raters,
    }


def weight(row: list[str]) -> float:
    if row[7].lower().startswith("non-translation"):
        return 25.0
    if row[8] == "Minor" and row[7].lower() == "fluency/punctuation":
        return 0.1
    return WEIGHTS[row[8]]


@pytest.mark.parametrize("pair", ["ende", "zhen"])
def test_shipped_release_gives_the_published_items_and_the_rule_counts(pair):
    with tarfile.open(release(pair)) as archive:
        (member,) = archive.getmembers()
        text = io.TextIOWrapper(archive.extractfile(member), encoding="utf-8").read()
    expected = count(rows_of(text))
    assert expected["items"] == PUBLISHED_ITEMS[pair]
    assert expected["raters"] == {3: 10 * PUBLISHED_ITEMS[pair]}  # 3 raters x 10 systems
    suite = build_suite(f"wmt23_sxs_{pair}")
    stats = suite.stats()
    assert stats["groups"] == PUBLISHED_ITEMS[pair]
    assert stats["pairs"] == expected["pairs"]
    assert stats["breakdowns"]["label"] == expected["labels"]
    assert stats["candidates"] == 10 * PUBLISHED_ITEMS[pair] - expected["skipped"]
    hotw = stats["skipped"][HOTW_REASON]
    assert hotw == expected["hotw"] == {"ende": 245, "zhen": 461}[pair]
    assert suite.manifest.license == "Apache-2.0"
    assert suite.manifest.margin_kind == "rater_share"


@pytest.mark.parametrize("pair", ["ende", "zhen"])
def test_fixture_counts_from_its_rows(pair):
    """The fixture (3 paragraphs of the release, metadata emptied) counted from its rows."""
    (table,) = fixture(pair).glob("*.tsv")
    expected = count(rows_of(table.read_text("utf-8")))
    suite = build_suite(f"wmt23_sxs_{pair}", fixture(pair))
    stats = suite.stats()
    assert (stats["groups"], stats["pairs"]) == (3, expected["pairs"])
    # each attention check left out is named by its line (header: line 1)
    checks = [
        f"{table.name}:{number}"
        for number, line in enumerate(table.read_text("utf-8").split("\n"), start=1)
        if line.split("\t")[8:9] == ["HOTW-test"]
    ]
    examples = {s.reason: s.examples for s in suite.manifest.skipped}
    assert checks and examples[HOTW_REASON] == checks
    assert stats["breakdowns"]["label"] == expected["labels"]


def damaged(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "damaged"
    shutil.copytree(fixture("ende"), folder)
    (table,) = folder.glob("*.tsv")
    lines = table.read_text("utf-8").split("\n")
    table.write_text("\n".join(edit(lines)), "utf-8")
    return folder


def test_truncated_copy_is_an_error_naming_file_and_line(tmp_path):
    folder = damaged(tmp_path, lambda lines: [*lines[:40], lines[40][:60]])
    with pytest.raises(SourceFormatError, match=r"3ratingsPerSegment\.tsv:41: "):
        build_suite("wmt23_sxs_ende", folder)


def test_missing_column_is_an_error_naming_it(tmp_path):
    def drop_rater(lines: list[str]) -> list[str]:
        return ["\t".join(f for i, f in enumerate(line.split("\t")) if i != 4) for line in lines]

    with pytest.raises(SourceFormatError, match=r"3ratingsPerSegment\.tsv:1: .*rater"):
        build_suite("wmt23_sxs_ende", damaged(tmp_path, drop_rater))


def severe(lines: list[str]) -> list[str]:
    """The rows with line 10's severity misspelt."""
    fields = lines[9].split("\t")
    fields[8] = "Severe"
    return [*lines[:9], "\t".join(fields), *lines[10:]]


def test_unknown_severity_is_an_error_naming_the_line(tmp_path):
    with pytest.raises(SourceFormatError, match=r"\.tsv:10: unknown severity 'Severe'"):
        build_suite("wmt23_sxs_ende", damaged(tmp_path, severe))


def test_skip_malformed_accounts_for_every_row(tmp_path):
    folder = damaged(tmp_path, lambda lines: [*lines[:40], lines[40][:60], *lines[41:]])
    stats = build_suite("wmt23_sxs_ende", folder, skip_malformed=True).stats()
    malformed = {r: n for r, n in stats["skipped"].items() if r.startswith("malformed row")}
    assert sum(malformed.values()) == 1
    # the row cut short still names its system and paragraph (they come first), so the
    # paragraph's translation by that system is left out with it, not judged on its other rows
    whole = [n for r, n in stats["skipped"].items() if r.startswith("candidate left out whole")]
    assert whole == [1]


def test_the_other_pairs_release_is_refused():
    with pytest.raises(SourceFormatError, match="names the pair zh-en, adapter wmt23_sxs_ende"):
        build_suite("wmt23_sxs_ende", release("zhen"))
