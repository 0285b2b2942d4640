"""The WebNLG-shaped source of issue 22 written with the public API only: 16 systems, per-system
output and rating files, inputs as HTML tables inside a JSON object, five 0-100 aspects, 2-3
raters, "better by more than 20 points per aspect"; the harness passes on it."""

from __future__ import annotations

import ast
import functools
import importlib.util
import itertools
import json
import shutil
import statistics
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from nnd_suites import SourceFormatError, build_suite
from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.cli import main
from nnd_suites.scaffold import harness

FOLDER = Path(__file__).with_name("webnlg_ratings")
RELEASE = FOLDER / "fixtures" / "release"
ASPECTS = ("fluency", "grammar", "semantics", "correctness", "data_coverage")


@pytest.fixture
def webnlg(monkeypatch):
    """Register the fixture adapter for one test, then restore the registry as it was."""
    ADAPTERS.names()
    saved = {k: dict(getattr(ADAPTERS, k)) for k in ("_classes", "_origins", "_aliases")}
    spec = importlib.util.spec_from_file_location("webnlg_ratings_adapter", FOLDER / "adapter.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # the harness finds the folder by it
    spec.loader.exec_module(module)
    yield module.WebNLGRatingsAdapter
    for name, value in saved.items():
        setattr(ADAPTERS, name, value)


def _hand_count(gap_counts) -> Counter:
    """Tests per aspect counted from the raw JSON alone: rated candidates of one input whose mean
    ratings differ by a gap ``gap_counts`` accepts. Means are exact fractions: in floats one
    gap of 20 reads 20.000000000000004, which the rule's tolerance (GAP_TOLERANCE) takes as 20."""
    outputs = {f.stem: json.loads(f.read_text()) for f in (RELEASE / "outputs").glob("*.json")}
    ratings = {f.stem: json.loads(f.read_text()) for f in (RELEASE / "ratings").glob("*.json")}
    found: Counter = Counter()
    for item in json.loads((RELEASE / "inputs.json").read_text()):
        rated = [s for s in outputs if item in outputs[s] and item in ratings[s]]
        for aspect in ASPECTS:
            means = {
                s: statistics.mean(Fraction(r[aspect]) for r in ratings[s][item].values())
                for s in rated
            }
            found[aspect] += sum(
                gap_counts(means[a] - means[b]) for a, b in itertools.permutations(rated, 2)
            )
    return found


def test_the_adapter_is_short_public_and_passes_the_harness(webnlg, tmp_path):
    code = (FOLDER / "adapter.py").read_text()
    assert len(code.splitlines()) <= 80
    imports = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.ImportFrom)]
    names = [f"{n.module}.{a.name}" for n in imports for a in n.names]
    assert not [name for name in names if "._" in name or name.split(".")[-1].startswith("_")]
    assert harness.check_fixture(webnlg, tmp_path) == []
    assert harness.readme_problems(FOLDER) == []


def test_tests_are_the_hand_count_of_more_than_20_points(webnlg, tmp_path):
    suite = build_suite("webnlg_ratings", RELEASE, tmp_path / "strict")
    strict = _hand_count(lambda gap: gap > 20)
    assert Counter(p.aspect for p in suite.pairs) == strict and sum(strict.values()) == 598
    # sys01 and sys02 wrote the same Id2 text with the same scores: one test per candidate
    on_id2 = Counter(p.high.systems[0] for p in suite.pairs if p.group_id == "Id2")
    assert on_id2["sys01"] == on_id2["sys02"] == 19
    assert {(p.high.label, p.low.label) for p in suite.pairs} == {("better", "worse")}
    assert all(p.score_gap > 20 for p in suite.pairs)
    # "at least 20" also keeps the gaps of exactly 20 (sys01/sys02 at 85 against sys03 at 65)
    loose = tmp_path / "loose.yaml"
    loose.write_text(
        (FOLDER / "quality_map.yaml").read_text().replace("minimum_gap_exclusive", "minimum_gap")
    )
    at_least = build_suite("webnlg_ratings", RELEASE, tmp_path / "loose", quality_map=loose)
    assert Counter(p.aspect for p in at_least.pairs) == _hand_count(lambda gap: gap >= 20)
    assert len(at_least) > len(suite)


def test_a_bad_score_names_file_line_and_key(webnlg, tmp_path):
    release = tmp_path / "release"
    shutil.copytree(RELEASE, release)
    ratings = release / "ratings" / "sys04.json"
    data = json.loads(ratings.read_text())
    data["Id2"]["w1"]["grammar"] = 185
    ratings.write_text(json.dumps(data, indent=1))
    line = ratings.read_text().splitlines().index(' "Id2": {') + 1
    with pytest.raises(
        SourceFormatError,
        match=rf"sys04\.json:{line}: Id2\.w1\.grammar: 185 out of range \[0, 100\]",
    ):
        build_suite("webnlg_ratings", release, tmp_path / "out")


def test_systems_names_the_measure_the_aspects_and_unrated(webnlg, tmp_path, capsys):
    build = functools.partial(build_suite, "webnlg_ratings", RELEASE)
    build(tmp_path / "suite")
    assert main(["systems", str(tmp_path / "suite")]) == 0
    text = capsys.readouterr().out
    assert "mean mean" not in text and "(in)" not in text
    assert "Human score: mean over raters, averaged over aspects and candidates." in text
    header = next(line for line in text.splitlines() if line.startswith("| system"))
    assert header.startswith("| system | candidates | unrated | human score | ")
    row = next(line for line in text.splitlines() if line.startswith("| sys15 |"))
    assert row.split(" | ")[1:3] == ["3", "1"]  # three texts, one (Id1) never rated
    # the never-rated text is in no mean (not a 0): ratings/sys15.json by hand, each text's mean
    # over its 2 raters and 5 aspects: Id2 (360 + 365) / 10 = 72.5, Id3 (295 + 290) / 10 = 58.5
    assert main(["systems", str(tmp_path / "suite"), "--json"]) == 0
    sys15 = json.loads(capsys.readouterr().out)["systems"]["sys15"]
    assert sys15["human_score"] == pytest.approx((72.5 + 58.5) / 2)


def test_kept_conflicts_of_scores_are_called_conflicting_ratings(webnlg, tmp_path, capsys):
    release = tmp_path / "release"
    shutil.copytree(RELEASE, release)
    copied = release / "outputs" / "sys05.json"
    texts = json.loads(copied.read_text())
    texts["Id1"] = json.loads((RELEASE / "outputs" / "sys04.json").read_text())["Id1"]
    copied.write_text(json.dumps(texts))
    keep = tmp_path / "keep.yaml"
    separate = (
        (FOLDER / "quality_map.yaml")
        .read_text()
        .replace("  low_label: worse\n", "  low_label: worse\n  identical_texts: separate\n")
    )
    keep.write_text(separate + "conflicting_labels: keep\n")
    build_suite("webnlg_ratings", release, tmp_path / "suite", quality_map=keep)
    assert main(["stats", str(tmp_path / "suite")]) == 0
    printed = capsys.readouterr().out
    assert "conflicting labels" not in printed
    for aspect in ASPECTS:
        assert (
            f"kept by the quality map: same text given conflicting ratings [{aspect}]: 1" in printed
        )


def test_identical_texts_are_pooled_by_default(webnlg, tmp_path):
    """sys05 given sys04's Id1 text: pooled (the default), the text's score is the mean over its
    raters of each rater's mean of the two ratings; separate, both candidates are conflicts."""
    release = tmp_path / "release"
    shutil.copytree(RELEASE, release)
    copied = release / "outputs" / "sys05.json"
    texts = json.loads(copied.read_text())
    texts["Id1"] = json.loads((RELEASE / "outputs" / "sys04.json").read_text())["Id1"]
    copied.write_text(json.dumps(texts))
    ratings = {f.stem: json.loads(f.read_text()) for f in (RELEASE / "ratings").glob("*.json")}
    ratings = {system: by_item["Id1"] for system, by_item in ratings.items() if "Id1" in by_item}
    given = ratings.pop("sys04"), ratings.pop("sys05")
    # e.g. fluency: w1 (45 + 95) / 2 = 70, w2 (35 + 95) / 2 = 65 -> 67.5
    pooled_mean = {
        aspect: statistics.mean(
            statistics.mean(Fraction(g[rater][aspect]) for g in given) for rater in given[0]
        )
        for aspect in ASPECTS
    }
    assert pooled_mean["fluency"] == Fraction(135, 2)
    others = {  # the other systems rated on Id1 (sys15's text was never rated)
        system: {a: statistics.mean(Fraction(r[a]) for r in by.values()) for a in ASPECTS}
        for system, by in ratings.items()
    }
    expected = Counter()  # the pooled text's tests: its two candidates against each other text
    for aspect in ASPECTS:
        for means in others.values():
            gap = pooled_mean[aspect] - means[aspect]
            expected[aspect] += 2 * ((gap > 20) + (-gap > 20))
    pooled = build_suite("webnlg_ratings", release, tmp_path / "pooled")
    mine = [
        p
        for p in pooled.pairs
        if p.group_id == "Id1" and {"sys04", "sys05"} & {*p.high.systems, *p.low.systems}
    ]
    assert Counter(p.aspect for p in mine) == expected and sum(expected.values()) > 0
    for pair in mine:
        side = pair.high if {"sys04", "sys05"} & set(pair.high.systems) else pair.low
        assert side.score == pytest.approx(float(pooled_mean[pair.aspect]))
        assert [vote.rater for vote in pair.votes] == ["w1", "w2"]
    assert pooled.manifest.conflicts == [] and "conflicting" not in str(pooled.manifest.skipped)
    separate_map = tmp_path / "separate.yaml"
    separate_map.write_text(
        (FOLDER / "quality_map.yaml")
        .read_text()
        .replace("  low_label: worse\n", "  low_label: worse\n  identical_texts: separate\n")
    )
    separate = build_suite("webnlg_ratings", release, tmp_path / "sep", quality_map=separate_map)
    skipped = {s.reason: s.count for s in separate.manifest.skipped}
    assert all(skipped[f"same text given conflicting ratings [{a}]"] == 2 for a in ASPECTS)
    assert len(pooled) - len(separate) == len(mine)
