"""Human scores per system, checked against figures counted here from the raw candidates."""

from __future__ import annotations

import json
import re

import pytest

from nnd_suites import build_suite
from nnd_suites.cli import main
from nnd_suites.human.scores import human_scores, human_scores_markdown
from nnd_suites.quality_map import QualityMap
from nnd_suites.suite import Suite

QUIZ_SYSTEMS = ["bartb_sup", "bartl_sup", "dgpt2_sup", "gpt2b_sup", "gpt2m_sup", "mixqg"]


def _of(suite, system):
    return [c for c in suite.candidates if system in c.systems]


@pytest.mark.parametrize("system", ["mixqg", "dgpt2_sup", "prophetnet"])
def test_quiz_design_top_tier_share_and_errors(quiz_design_suite, system):
    scores = human_scores(quiz_design_suite)
    mine = _of(quiz_design_suite, system)
    result = scores.systems[system]
    assert result.candidates == len(mine) == 452
    no_error = sum(c.label == "No error" for c in mine)
    assert result.human_score == pytest.approx(no_error / 452)
    for error in ("disfluent", "off_target", "wrong_context"):
        without = sum(c.label != error for c in mine)
        assert result.by_category[error] == pytest.approx(without / 452)
    assert scores.categories == {e: "error" for e in ("wrong_context", "off_target", "disfluent")}


def test_quiz_design_figures(quiz_design_suite):
    scores = human_scores(quiz_design_suite)
    assert sorted(scores.systems) == sorted([*QUIZ_SYSTEMS, "prophetnet"])
    assert next(iter(scores.systems)) == "mixqg"  # best first
    assert round(scores.systems["mixqg"].human_score, 3) == 0.684
    assert round(scores.systems["dgpt2_sup"].human_score, 3) == 0.334


def test_challenge300_credit_one_per_question_category(challenge300_suite):
    scores = human_scores(challenge300_suite)
    assert set(scores.categories.values()) == {"context"}
    roots = QualityMap.load("challenge300").category_path
    for system in ("Macaw-11B", "GPT3-davinci", "T5-XXL-SSM-NQ"):
        mine = _of(challenge300_suite, system)
        full = [c.ratings["credit"] == [1.0] for c in mine]
        result = scores.systems[system]
        assert result.candidates == len(mine) == 300
        # partial credit (0.5) is not credit 1: it stays in the denominator
        assert result.human_score == pytest.approx(sum(full) / 300)
        creativity = [
            c.ratings["credit"] == [1.0] for c in mine if roots("", c.category)[0] == "Creativity"
        ]
        assert result.by_category["Creativity"] == pytest.approx(sum(creativity) / len(creativity))
    assert round(scores.systems["Macaw-11B"].human_score, 3) == 0.723


def test_likert_scores_are_mean_ratings():
    suite = build_suite(
        "summeval", "adapters/summeval/fixtures/model_annotations.aligned.paired.sample.jsonl"
    )
    scores = human_scores(suite)
    assert scores.measure == "mean rating over the aspects"
    mine = _of(suite, "M0")
    assert len(mine) == scores.systems["M0"].candidates == 2
    coherence = [sum(c.ratings["coherence"]) / len(c.ratings["coherence"]) for c in mine]
    assert scores.systems["M0"].by_category["coherence"] == pytest.approx(
        sum(coherence) / len(coherence)
    )
    every = [sum(v) / len(v) for c in suite.candidates for v in (c.ratings or {}).values()]
    assert scores.score_range == (min(every), max(every))  # mean ratings lie within
    assert human_scores(build_suite("quiz_design")).score_range == (0.0, 1.0)  # a share


@pytest.mark.usefixtures("builtin_names_give_session_builds")  # the command, not the build
def test_systems_command(capsys):
    assert main(["systems", "challenge300", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["systems"]["GPT3-davinci"]) >= {"human_score", "candidates", "by_category"}
    assert data["systems"]["GPT3-davinci"]["candidates"] == 300
    assert main(["systems", "quiz_design"]) == 0
    out = capsys.readouterr().out
    assert "| mixqg | 452 | 68.4% |" in out


def test_a_system_name_with_a_pipe_stays_in_its_cell(quiz_design_suite):
    """`systems` wrote its rows by hand, so a source's system name holding `|` split its row
    into one cell too many; every cell now goes through the one cell writer."""
    candidates = [
        c.model_copy(update={"systems": ["mix|qg" if s == "mixqg" else s for s in c.systems]})
        for c in quiz_design_suite.candidates
    ]
    renamed = Suite(quiz_design_suite.manifest, quiz_design_suite.pairs, candidates)
    lines = human_scores_markdown(human_scores(renamed)).splitlines()
    header = next(line for line in lines if line.startswith("| system |"))
    (mixqg,) = [line for line in lines if line.startswith("| mix")]
    assert mixqg.startswith("| mix\\|qg | 452 | 68.4% |")
    cells = re.compile(r"(?<!\\)\|")
    assert len(cells.findall(mixqg)) == len(cells.findall(header)) == 7


def test_empty_outputs_left_out_of_the_tests_are_said_where_they_are_counted(tmp_path, capsys):
    """A candidate with an empty text, left out of the tests, was still among the "12
    candidates" of the build summary and the card, and among its system's candidates and human
    score in `systems`, with nothing saying so. The counts say "read"; `systems` keeps the
    empty outputs (a system's human score is about all its judged outputs) and says so."""
    import csv

    from nnd_suites.builder.adapter import ADAPTERS
    from nnd_suites.suite.stats_text import stats_lines

    fixture = next((ADAPTERS.get("simpeval_2022").folder() / "fixtures").glob("*.csv"))
    rows = list(csv.DictReader(fixture.open(encoding="utf-8", newline="")))
    for row in rows:  # the raters saw copy's output empty, and rated it 0
        if row["system"] == "copy":
            row |= {"generation": "", "rating_1": "0", "rating_2": "0", "rating_3": "0"}
    with (tmp_path / "s.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    suite = build_suite("simpeval_2022", tmp_path / "s.csv", tmp_path / "suite")
    assert stats_lines(suite.stats())[0].endswith("from 3 groups, 12 candidates read")
    assert suite.stats()["skipped"] == {"empty candidate text": 3}
    scores = human_scores(suite)
    assert scores.empty_texts == 3
    assert scores.systems["copy"].candidates == 3 and scores.systems["copy"].human_score == 0.0
    assert (
        "3 candidate(s) with an empty text are in no test but in their system's candidates and "
        "score, as the raters judged them."
    ) in human_scores_markdown(scores)
    assert main(["export", str(tmp_path / "suite"), "--to", str(tmp_path / "ds")]) == 0
    card = (tmp_path / "ds" / "README.md").read_text("utf-8")
    assert "6 tests from 3 groups and 12 candidates read; 0 groups gave no test" in card


def test_a_numeric_suite_built_before_texts_were_pooled_is_scored_as_it_was_built():
    # format 2.3 brought identical_texts: pool; a suite built before it judged each identical
    # text on its own ratings, but its systems were scored on pooled ones (the map's default)
    from nnd_suites.builder.adapter import ADAPTERS

    fixture = next((ADAPTERS.get("simpeval_past").folder() / "fixtures").glob("*.csv"))
    suite = build_suite("simpeval_past", fixture)
    assert suite.stats()["pooled_texts"]["scored_differently"] == 1
    manifest = suite.manifest
    older = manifest.model_copy(update={"format_version": "2.2"})
    rule = {**manifest.quality_map.definition["rating_rule"], "identical_texts": "separate"}
    definition = {**manifest.quality_map.definition, "rating_rule": rule}
    separate = manifest.model_copy(
        update={"quality_map": manifest.quality_map.model_copy(update={"definition": definition})}
    )
    as_built = human_scores(Suite(older, suite.pairs, suite.candidates))
    assert as_built == human_scores(Suite(separate, suite.pairs, suite.candidates))
    assert as_built != human_scores(suite)
