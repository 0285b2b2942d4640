"""Credit levels read as numbers one way (issue 33 §6): Challenge 300's ``-0`` was refused as a
level of its own while a full-width ``１`` read as 1. Every credit cell and every level a map
writes is now read by :func:`nnd_suites.sources.read_number`: NFKC-normalised (full-width digits,
signs and points read as ASCII) and negative zero is zero."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.errors import QualityMapError, SourceFormatError
from nnd_suites.quality_map import QualityMap, level_key
from nnd_suites.sources import read_number

FIXTURE = get_adapter("challenge300").folder() / "fixtures" / "challenge300_sample.tsv"
#: fixture line 3 (challenge300-probes-v1-2) credits Macaw-11B 0, Macaw-answer-11B 1, ...
SPELLINGS = {"0": "-0", "1": "１"}


def respelled(path: Path, spellings: dict[str, str]) -> Path:
    """The fixture with every credit of its second question written as ``spellings`` say."""
    with FIXTURE.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    credits = [i for i, name in enumerate(rows[0]) if name.startswith("credit-")]
    for i in credits:
        rows[2][i] = spellings.get(rows[2][i], rows[2][i])
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, delimiter="\t", quoting=csv.QUOTE_ALL).writerows(rows)
    return path


def shape(suite) -> list[tuple]:
    return [(p.group_id, p.high.systems, p.low.systems, p.label) for p in suite.pairs]


def test_minus_zero_and_full_width_credits_read_as_zero_and_one(tmp_path):
    plain = build_suite("challenge300", FIXTURE)
    spelt = build_suite("challenge300", respelled(tmp_path / "c3.tsv", SPELLINGS))
    assert shape(spelt) == shape(plain) and len(spelt.pairs) == 40  # expected_stats' figure
    question = [c for c in spelt.candidates if c.group_id == "challenge300-probes-v1-2"]
    assert [c.ratings["credit"] for c in question] == [[0.0], [1.0], [1.0], [0.0], [0.0]]
    assert all(str(c.ratings["credit"][0]) != "-0.0" for c in question)  # stored as 0


def test_one_reading_for_cells_and_map_levels():
    assert [read_number(s) for s in ("-0", "１", "０．５", "－１", " 1 ")] == [0, 1, 0.5, -1, 1]
    assert str(read_number("-0")) == "0.0"
    assert [level_key(s) for s in ("-0", "-0.0", "１", "０．５", 0.0, -0.0)] == [
        "0", "0", "1", "0.5", "0", "0"
    ]  # fmt: skip
    # exact: a credit of 0.9999999 is no level 1, and 0.5000004 no level 0.5
    assert [level_key(s) for s in ("0.9999999", 0.5000004, "4e-07", "1e20")] == [
        "0.9999999", "0.5000004", "4e-07", "1e+20"
    ]  # fmt: skip
    with pytest.raises(ValueError):
        read_number("yes")


MAP = """\
name: credit_levels
description: Credit 1 beats credit 0.
labels: [correct, incorrect]
tiers: [[correct], [incorrect]]
rating_rule: {{kind: graded, rating: credit, levels: {levels}, exclude: {exclude}}}
"""


def test_a_map_writing_minus_zero_means_zero(tmp_path):
    path = tmp_path / "minus.yaml"
    path.write_text(MAP.format(levels='{"１": correct, "-0": incorrect}', exclude="[０.５]"))
    assert QualityMap.load(path).rule.levels == {"1": "correct", "0": "incorrect"}
    spelt = build_suite("challenge300", respelled(tmp_path / "c3.tsv", SPELLINGS), quality_map=path)
    assert shape(spelt) == shape(build_suite("challenge300", FIXTURE))


@pytest.mark.parametrize(
    ("levels", "exclude", "message"),
    [
        (
            '{"1": correct, "0": incorrect, "-0": incorrect}',
            "[]",
            "credit level 0 is written twice",
        ),
        ('{"1": correct, "0": incorrect}', '["-0"]', r"credit level\(s\) \['0'\] are both"),
    ],
)
def test_zero_written_twice_is_refused_naming_the_map(tmp_path, levels, exclude, message):
    path = tmp_path / "twice.yaml"
    path.write_text(MAP.format(levels=levels, exclude=exclude))
    with pytest.raises(QualityMapError, match=rf"twice\.yaml.*{message}") as raised:
        QualityMap.load(path)
    assert "\n" not in str(raised.value)


def test_a_credit_level_the_map_does_not_know_is_the_rows_fault(tmp_path):
    # a typo (0.7 for 1) in one row stopped the whole build as a fault of the map (exit 4),
    # which --skip-malformed could not skip
    typo = respelled(tmp_path / "c3.tsv", {"1": "0.7"})
    with pytest.raises(SourceFormatError, match=r"c3\.tsv:3: a credit level the quality map") as e:
        build_suite("challenge300", typo)
    assert "(credit-Macaw-answer-11B: 0.7)" in str(e.value)
    suite = build_suite("challenge300", typo, skip_malformed=True)
    plain = build_suite("challenge300", FIXTURE)
    assert shape(suite) == [p for p in shape(plain) if p[0] != "challenge300-probes-v1-2"]
    (skipped,) = [s for s in suite.manifest.skipped if s.reason.startswith("malformed row")]
    assert skipped.count == 1 and skipped.examples == ["c3.tsv:3 (credit-Macaw-answer-11B: 0.7)"]
    # the build's map decides: one that excludes 0.7 takes the row
    path = tmp_path / "seven.yaml"
    path.write_text(MAP.format(levels='{"1": correct, "0": incorrect}', exclude="[0.5, 0.7]"))
    skipped = build_suite("challenge300", typo, quality_map=path).stats()["skipped"]
    assert skipped["credit 0.7 takes no part (quality map credit_levels)"] == 2
