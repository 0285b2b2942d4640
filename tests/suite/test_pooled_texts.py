"""What a numeric map's ``identical_texts: pool`` merged is counted where a user looks at a
suite: ``Suite.stats()``, the lines ``build`` and ``stats`` print, and ``stats --json``."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.cli import main
from nnd_suites.records.texts import equivalence_key
from nnd_suites.suite import Suite, SuiteCandidate
from nnd_suites.suite.stats_text import stats_lines

REPO = Path(__file__).resolve().parents[2]


def shared_texts(suite: Suite) -> list[list[SuiteCandidate]]:
    """The candidates table grouped by (group, text): each text several candidates share."""
    by_text = defaultdict(list)
    for candidate in suite.candidates:
        by_text[candidate.group_id, equivalence_key(candidate.text)].append(candidate)
    return [same for same in by_text.values() if len(same) > 1]


def counted_by_hand(suite: Suite) -> dict[str, int]:
    """The shared texts, their candidates, and the texts whose candidates' own mean ratings
    differ in some aspect (sfhot and sfres maps: mean over raters, three aspects)."""
    shared = shared_texts(suite)
    aspects = suite.manifest.quality_map.definition["rating_rule"]["aspects"]
    differing = [
        same
        for same in shared
        if any(len({statistics.fmean(c.ratings[a]) for c in same}) > 1 for a in aspects)
    ]
    return {
        "candidates": sum(len(same) for same in shared),
        "texts": len(shared),
        "scored_differently": len(differing),
    }


@pytest.mark.parametrize(("name", "shared"), [("sfhot", 68), ("sfres", 76)])
def test_stats_count_the_identical_texts_a_numeric_map_pooled(shipped_suite_builds, name, shared):
    # sfhot pooled 68 of its 875 candidates into 34 texts and said nothing: the manifest's
    # skipped, conflicts and conflicting_texts were empty, and build and stats printed no line
    suite = shipped_suite_builds[name]
    pooled = suite.stats()["pooled_texts"]
    assert pooled == counted_by_hand(suite)
    assert pooled["candidates"] == shared and pooled["texts"] == shared // 2
    assert 0 < pooled["scored_differently"] <= pooled["texts"]
    line = (
        f"  pooled (identical_texts: pool): {shared} candidates share their text with another "
        f"of their group: {shared // 2} texts, {pooled['scored_differently']} of them scored "
        "differently by their own ratings, now one pooled score each"
    )
    assert line in stats_lines(suite.stats())


def test_build_stats_and_stats_json_show_the_pooled_count(shipped_suite_builds, tmp_path, capsys):
    expected = counted_by_hand(shipped_suite_builds["sfhot"])
    assert main(["build", "sfhot", "--out", str(tmp_path / "sfhot")]) == 0
    built = capsys.readouterr().out
    assert main(["stats", str(tmp_path / "sfhot")]) == 0
    shown = capsys.readouterr().out
    for output in (built, shown):
        assert f"  pooled (identical_texts: pool): {expected['candidates']} candidates" in output
    assert main(["stats", str(tmp_path / "sfhot"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pooled_texts"] == expected


def test_a_map_that_does_not_pool_shows_no_pooled_count(shipped_suite_builds, tmp_path):
    shipped = (REPO / "quality_maps" / "sfhot.yaml").read_text("utf-8")
    separate = tmp_path / "sfhot_separate.yaml"
    separate.write_text(
        shipped.replace("  kind: numeric\n", "  kind: numeric\n  identical_texts: separate\n"),
        "utf-8",
    )
    suite = build_suite("sfhot", quality_map=separate)
    stats = suite.stats()
    assert stats["pooled_texts"] is None
    assert not any("pooled" in line for line in stats_lines(stats))
    # what the pooled count calls scored differently is what a separate rule excludes as
    # conflicts: per aspect, every candidate of a text whose candidates' own scores differ
    pooled = shipped_suite_builds["sfhot"]
    aspects = pooled.manifest.quality_map.definition["rating_rule"]["aspects"]
    differing = {
        aspect: sum(
            len(same)
            for same in shared_texts(pooled)
            if len({statistics.fmean(c.ratings[aspect]) for c in same}) > 1
        )
        for aspect in aspects
    }
    skipped = {
        a: stats["skipped"].get(f"same text given conflicting ratings [{a}]", 0) for a in aspects
    }
    assert skipped == differing and sum(differing.values()) > 0
    # a map without a rating rule (labels) pools nothing either
    wmt = shipped_suite_builds["wmt_mqm"].stats()
    assert wmt["pooled_texts"] is None
    assert not any("pooled" in line for line in stats_lines(wmt))


def test_a_suite_built_before_texts_were_pooled_shows_no_pooled_count(shipped_suite_builds):
    # format 2.3 brought identical_texts; a numeric map's suite built before it scored each
    # identical text on its own (conflicts excluded and counted in skipped), whatever the default
    sfhot = shipped_suite_builds["sfhot"]
    older = sfhot.manifest.model_copy(update={"format_version": "2.2"})
    assert Suite(older, sfhot.pairs, sfhot.candidates).stats()["pooled_texts"] is None
