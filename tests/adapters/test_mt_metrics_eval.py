"""mt_metrics_eval: the fixture's tests by hand, every system's MQM score equal to the release's
``*.mqm.sys.score``, and damaged copies of the year folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from skipped_rows import assert_one_row_left_out, from_candidate

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.cli import main
from nnd_suites.errors import SourceFormatError

SAMPLE = get_adapter("mt_metrics_eval").folder() / "fixtures" / "wmt_sample"
SCORES = Path("human-scores") / "en-de.mqm.seg.score"


def build(folder: Path = SAMPLE, **options):
    return build_suite("mt_metrics_eval", folder, language_pair="en-de", **options)


def test_fixture_counts_by_hand():
    """Scores (sysA, sysB, refA) per segment; a test where they differ by at least 5:
    1: 0, -5, None -> sysA > sysB (accuracy/mistranslation); refA unrated, skipped
    2: all None -> no group, skipped
    3: -10, -0.1, 0 -> sysB > sysA, refA > sysA (sysA's two Major errors tie: the first,
       fluency/grammar); sysB - refA is 0.1
    4: 0, -5, -5; sysA and sysB wrote the same text: sysA > sysB (degenerate, style/awkward),
       sysA > refA (terminology: its source issue is no translation error); sysB = refA
    5 tests, 1 of them with the same text on both sides."""
    suite = build()
    found = sorted(
        (p.group_id, p.high.systems[0], p.low.systems[0], "/".join(p.category_path))
        for p in suite.pairs
    )
    assert found == [
        ("en-de:1", "sysA", "sysB", "accuracy/mistranslation"),
        ("en-de:3", "refA", "sysA", "fluency/grammar"),
        ("en-de:3", "sysB", "sysA", "fluency/grammar"),
        ("en-de:4", "sysA", "refA", "terminology/inconsistent"),
        ("en-de:4", "sysA", "sysB", "style/awkward"),
    ]
    assert suite.stats()["degenerate_pairs"] == 1


def test_system_scores_equal_the_released_system_scores(tmp_path, capsys):
    out = tmp_path / "suite"
    args = ["build", "mt_metrics_eval", "--source", str(SAMPLE), "--out", str(out)]
    assert main([*args, "--option", "language_pair=en-de"]) == 0
    capsys.readouterr()
    assert main(["systems", str(out), "--json"]) == 0
    systems = json.loads(capsys.readouterr().out)["systems"]
    released = {
        system: float(score)
        for system, score in (
            line.split("\t")
            for line in (SAMPLE / "human-scores" / "en-de.mqm.sys.score").read_text().splitlines()
        )
    }
    assert {name: row["human_score"] for name, row in systems.items()} == pytest.approx(
        released, abs=1e-12
    )


def damaged(tmp_path: Path, relative: Path, edit) -> Path:
    folder = tmp_path / "damaged"
    shutil.copytree(SAMPLE, folder)
    file = folder / relative
    file.write_text(edit(file.read_text("utf-8")), "utf-8")
    return folder


def test_output_file_one_line_short_is_an_error_naming_it(tmp_path):
    output = Path("system-outputs") / "en-de" / "sysB.txt"
    folder = damaged(tmp_path, output, lambda text: "\n".join(text.splitlines()[:3]) + "\n")
    with pytest.raises(SourceFormatError, match=r"sysB\.txt:3: 3 lines; the sources have 4"):
        build(folder)


def test_truncated_scores_are_an_error_naming_file_and_line(tmp_path):
    folder = damaged(tmp_path, SCORES, lambda text: "\n".join(text.splitlines()[:-1]) + "\n")
    with pytest.raises(SourceFormatError, match=r"seg\.score:11: refA has 3 lines"):
        build(folder)


def test_score_out_of_range_is_an_error_naming_the_line(tmp_path):
    folder = damaged(tmp_path, SCORES, lambda text: text.replace("sysB\t-5.0", "sysB\t5.0", 1))
    with pytest.raises(SourceFormatError, match=r"seg\.score:5: '5\.0' out of range"):
        build(folder)


def test_a_column_missing_is_an_error_naming_the_line(tmp_path):
    folder = damaged(tmp_path, SCORES, lambda text: text.replace("sysA\t0.0\n", "0.0\n", 1))
    with pytest.raises(SourceFormatError, match=r"seg\.score:1: expected 'system<TAB>value'"):
        build(folder)


def test_span_ratings_that_are_not_json_are_an_error(tmp_path):
    ratings = Path("human-scores") / "en-de.mqm.merged.seg.rating"
    folder = damaged(tmp_path, ratings, lambda text: text.replace('{"errors": []}', "{x", 1))
    with pytest.raises(SourceFormatError, match=r"merged\.seg\.rating:1: not an MQM rating"):
        build(folder)


def _rating(*errors: tuple[str, float]) -> str:
    spans = [
        {
            "start": 0,
            "end": 1,
            "category": c,
            "severity": "major",
            "score": s,
            "is_source_error": False,
        }
        for c, s in errors
    ]
    return json.dumps({"errors": spans})


def _rater_file(folder: Path, rater: str, by_system: dict[str, list[str | None]]) -> None:
    lines = [
        f"{system}\t{rating if rating is not None else 'None'}"
        for system, ratings in by_system.items()
        for rating in ratings
    ]
    path = folder / "human-scores" / f"en-de.mqm.{rater}.seg.rating"
    path.write_text("\n".join(lines) + "\n", "utf-8")


def _per_rater_sample(tmp_path: Path, rater2_sysb: str) -> Path:
    """The fixture released as WMT23 zh-en is: one span file per rater, segment 3 rated by two
    raters, whose scores average to the released ones (sysA -10, sysB -0.1, refA 0)."""
    folder = tmp_path / "per_rater"
    shutil.copytree(SAMPLE, folder)
    (folder / "human-scores" / "en-de.mqm.merged.seg.rating").unlink()
    grammar, omission = ("fluency/grammar", 5), ("accuracy/omission", 5)
    mistranslation, awkward = ("accuracy/mistranslation", 5), ("style/awkward", 5)
    clean = _rating()
    _rater_file(folder, "rater1", {
        "sysA": [clean, None, _rating(grammar, omission, ("other", 5)), clean],
        "sysB": [_rating(mistranslation), None, clean, _rating(awkward)],
        "refA": [None, None, clean, _rating(("terminology/inconsistent", 5))],
        "synthetic_ref": [None] * 4,
    })  # fmt: skip
    _rater_file(folder, "rater2", {
        "sysA": [None, None, _rating(grammar), None],
        "sysB": [None, None, rater2_sysb, None],
        "refA": [None, None, clean, None],
        "synthetic_ref": [None] * 4,
    })  # fmt: skip
    return folder


def test_per_rater_span_files_give_each_test_its_raters_votes(tmp_path):
    """Segment 3's tests get a vote from each of its two raters (rater1: sysA -15, sysB 0, refA
    0; rater2: sysA -5, sysB -0.2, refA 0); the others one vote; the tests are the fixture's."""
    suite = build(_per_rater_sample(tmp_path, _rating(("fluency/punctuation", 0.2))))
    votes = {
        (p.group_id, p.high.systems[0], p.low.systems[0]): [(v.rater, v.prefers) for v in p.votes]
        for p in suite.pairs
    }
    assert votes == {
        ("en-de:1", "sysA", "sysB"): [("rater1", "high")],
        ("en-de:3", "refA", "sysA"): [("rater1", "high"), ("rater2", "high")],
        ("en-de:3", "sysB", "sysA"): [("rater1", "high"), ("rater2", "high")],
        ("en-de:4", "sysA", "refA"): [("rater1", "high")],
        ("en-de:4", "sysA", "sysB"): [("rater1", "high")],
    }
    sys_b = next(p for p in suite.pairs if p.group_id == "en-de:3" and p.high.systems == ["sysB"])
    assert sys_b.high.score == pytest.approx(-0.1)  # the raters' mean, the released score


def test_rater_scores_that_do_not_average_to_the_released_one_leave_the_released_score(tmp_path):
    """rater2 gives sysB -5 in segment 3: the raters' mean (-2.5) is not the released -0.1, so
    sysB keeps the released score alone, with no rater named, and its test no votes; the tests
    do not change."""
    suite = build(_per_rater_sample(tmp_path, _rating(("style/awkward", 5))))
    sys_b = next(p for p in suite.pairs if p.group_id == "en-de:3" and p.high.systems == ["sysB"])
    assert sys_b.high.score == pytest.approx(-0.1) and sys_b.votes == []
    assert len(suite.pairs) == 5


RATINGS = Path("human-scores") / "en-de.mqm.merged.seg.rating"
NOT_A_RATING = "not an MQM rating {'errors': [...]}: "


@pytest.mark.parametrize(
    ("file", "line", "edit", "reason"),
    [
        (SCORES, 1, ("sysA\t0.0", "sysA\tabc"), "'abc' is not a number"),
        (SCORES, 3, ("sysA\t-10.0", "sysA\t5"), "'5' out of range [-inf, 0]"),
        (
            RATINGS,
            3,
            ('"category": "fluency/grammar"', '"category": 5'),
            f"{NOT_A_RATING}category 5 is not a JSON string",
        ),
        (
            RATINGS,
            1,
            ('{"errors": []}', "{x"),
            f"{NOT_A_RATING}Expecting property name enclosed in double quotes: line 1 column 2 "
            "(char 1)",
        ),
    ],
)
def test_skip_malformed_leaves_out_the_one_candidate_of_a_faulty_line(
    tmp_path, file, line, edit, reason
):
    # these stopped the build even with --skip-malformed; a score or span rating line is one
    # system's candidate on one segment (sysA's on segment 1 or 3): that candidate is left out,
    # not judged without its score, category or rater scores
    folder = damaged(tmp_path, file, lambda text: text.replace(*edit, 1))
    assert_one_row_left_out(
        lambda **flag: build(folder, **flag),
        f"{file.name}:{line}",
        reason,
        build(),
        from_candidate(f"en-de:{line}", "sysA"),
    )
