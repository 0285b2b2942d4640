"""The raters' agreement ceiling and the human margin bands in the leaderboard (leaderboard.json
and leaderboard.md): two tiny local models scored on the SummEval fixture (28 tests, each with
the votes of 3 experts; ceiling 53 of 73 votes, derived by hand in test_agreement_summeval.py)."""

from __future__ import annotations

import json
import re
from importlib import resources

import jsonschema
import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.evaluation.agreement_markdown import ceiling_gap
from nnd_suites.evaluation.leaderboard import leaderboard
from nnd_suites.evaluation.leaderboard_agreement import REFERENCE
from nnd_suites.evaluation.multi import evaluate_models, leaderboard_markdown
from nnd_suites.human.agreement import agreement_ceiling

SOURCE = (
    get_adapter("summeval").folder() / "fixtures" / "model_annotations.aligned.paired.sample.jsonl"
)


def check_tables(text: str) -> None:
    """Every row of a table (the reference row included) has as many cells as its header."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---"):
            width = _cells(lines[i - 1])
            for following in lines[i + 1 :]:
                if not following.startswith("|"):
                    break
                assert _cells(following) == width, (lines[i - 1], following)


def _cells(line: str) -> int:
    return len(re.split(r"(?<!\\)\|", line.strip())) - 2


@pytest.fixture(scope="module")
def summeval():
    return build_suite("summeval", SOURCE)


@pytest.fixture(scope="module")
def board(summeval, tiny_causal_model, tiny_seq2seq_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("board") / "run"
    models = [str(tiny_causal_model), str(tiny_seq2seq_model)]
    found = evaluate_models(models, summeval, out=out, progress=False, cache=False)
    return found, out


def test_the_ceiling_and_bands_in_leaderboard_json(board, summeval):
    found, out = board
    labels = [m.label for m in found.models]
    saved = json.loads((out / "leaderboard.json").read_text())
    schema = json.loads(
        resources.files("nnd_suites.schemas").joinpath("leaderboard.schema.json").read_text()
    )
    jsonschema.validate(saved, schema)
    ceilings = saved["agreement"][summeval.name]
    assert list(ceilings) == labels
    for label, report in zip(labels, found.reports, strict=True):
        own = report.suites[summeval.name]
        # each model's ceiling is its report's: on the 28 tests it rated, 53 of 73 votes
        assert ceilings[label] == own.agreement_ceiling.model_dump(mode="json")
        assert (ceilings[label]["tests"], ceilings[label]["agreed"]) == (28, 53)
        assert ceilings[label]["difference"] == pytest.approx(own.overall.pass_rate - 53 / 73)
        bands = saved["by_margin"][summeval.name]["bands"]
        assert [b["label"] for b in bands] == ["half or fewer", "majority", "unanimous"]
        for band, mine in zip(bands, own.by_margin.bands, strict=True):
            assert band["rates"][label] == mine.rate.model_dump(mode="json")
    assert [b["rates"][labels[0]]["n"] for b in bands] == [3, 14, 11]


def test_the_ceiling_and_bands_in_leaderboard_md(board, summeval):
    found, out = board
    text = (out / "leaderboard.md").read_text()
    assert text == leaderboard_markdown(found)
    check_tables(text)
    one = found.agreement[summeval.name][found.models[0].label]
    # one reference row (both models rated the 28 tests), under the baselines of the table
    assert f"| {REFERENCE} |  | {100 * 53 / 73:.1f}% [" in text
    assert text.count(REFERENCE) == 1 and "(n=28) |" in text
    for entry in found.models:
        ceiling = found.agreement[summeval.name][entry.label]
        assert ceiling.ci == one.ci  # the same tests, the same resamples
        assert f"| {entry.label} | 28 | " in text and ceiling_gap(ceiling) in text
    assert "| model | half or fewer (0.3333) (n=3) | majority (0.6667) (n=14) |" in text


def test_models_that_rated_other_tests_get_their_own_ceiling(board, summeval):
    found, _ = board
    first, second = (r.model_copy(deep=True) for r in found.reports)
    # the second model found the first test degenerate: its ceiling is on the other 27
    pairs = summeval.pairs
    outcomes = {o.pair_id: o.outcome for o in found.reports[1].outcomes[summeval.name]}
    fewer = agreement_ceiling(pairs, outcomes | {pairs[0].id: "degenerate"})
    second.suites[summeval.name].agreement_ceiling = fewer
    second.suites[summeval.name].by_margin = None  # a report that predates margins
    text = leaderboard_markdown(leaderboard([first, second], ["a", "b"]))
    check_tables(text)
    assert "per model, below (the models rated different tests)" in text
    assert "| b | 27 | " in text and "| a | 28 | " in text
    assert "| b | n/a | n/a | n/a |" in text  # no margin bands in b's report
