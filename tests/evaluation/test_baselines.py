"""Bias baselines: hand-checked scorers on made-up tests, figures on the shipped suites, the CLI."""

from __future__ import annotations

import json

import pytest

from nnd_suites.cli import main
from nnd_suites.evaluation.baselines import BASELINES, baseline_outcomes, baselines
from nnd_suites.suite import Suite

# the built-in names given to `baselines` are the session's builds (wmt_mqm: seconds to build)
pytestmark = pytest.mark.usefixtures("builtin_names_give_session_builds")


def _suite_of(base: Suite, texts: list[tuple[str, str, dict[str, str]]]) -> Suite:
    """A small suite of the given (high, low, context) tests, shaped like ``base``'s tests."""
    template = base.pairs[0]
    pairs = []
    for number, (high, low, context) in enumerate(texts):
        pairs.append(
            template.model_copy(
                update={
                    "id": f"{number:016x}",
                    "context": context,
                    "high": template.high.model_copy(update={"text": high}),
                    "low": template.low.model_copy(update={"text": low}),
                    "category": "a" if number < 2 else "b",
                }
            )
        )
    return Suite(base.manifest, pairs)


def test_each_scorer_by_hand(quiz_design_suite):
    suite = _suite_of(
        quiz_design_suite,
        [
            # high shorter (7 < 11 chars); high shares 2 words (the, cat), low 1 (the)
            ("The cat", "The old dog", {"answer": "the cat", "paragraph": "The cat sat."}),
            # equal length (3 = 3): a tie for both length baselines; overlap 1 vs 0
            ("sat", "dog", {"answer": "x", "paragraph": "It SAT there."}),
            # high longer; both share "a" only with the context: overlap tie
            ("a long one", "a b", {"answer": "a", "paragraph": "z"}),
            # the same text twice: degenerate, never a pass, fail or tie
            ("same", "same", {"answer": "same", "paragraph": ""}),
        ],
    )
    assert list(baseline_outcomes(suite, "shorter").values()) == [
        "pass",
        "tie",
        "fail",
        "degenerate",
    ]
    assert list(baseline_outcomes(suite, "longer").values()) == [
        "fail",
        "tie",
        "pass",
        "degenerate",
    ]
    assert list(baseline_outcomes(suite, BASELINES["overlap"]).values()) == [
        "pass",
        "pass",
        "tie",
        "degenerate",
    ]
    result = baselines(suite)["baselines"]
    overlap = result["overlap"]
    assert overlap["overall"] | {"ci": None} == {
        "n": 3,
        "passed": 2,
        "ties": 1,
        "failed": 0,
        "degenerate": 1,
        "skipped": 0,
        "pass_rate": pytest.approx(2 / 3),
        "ci": None,
    }
    # Wilson 95% interval of 2/3: (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), z=1.96
    assert overlap["overall"]["ci"] == pytest.approx((0.2077, 0.9385), abs=1e-4)
    assert overlap["by_category"]["a"]["passed"] == 2 and overlap["by_category"]["b"]["n"] == 1
    assert result["shorter"]["by_category"]["a"] | {"ci": None} == {
        "n": 2,
        "passed": 1,
        "ties": 1,
        "failed": 0,
        "degenerate": 0,
        "skipped": 0,
        "pass_rate": 0.5,
        "ci": None,
    }


@pytest.mark.parametrize(
    ("fixture", "shorter", "longer", "overlap"),
    [
        # (passed, ties) over all tests, then per category
        (
            "quiz_design_suite",
            {"all": (1099, 85), "wrong_context": (395, 24), "disfluent": (356, 37)},
            {"all": (1502, 85), "wrong_context": (666, 24), "disfluent": (318, 37)},
            {"all": (1246, 403), "wrong_context": (560, 141), "disfluent": (259, 123)},
        ),
        (
            "challenge300_suite",
            {"all": (377, 32), "Science": (54, 12), "Comparison": (7, 0)},
            {"all": (398, 32), "Science": (127, 12), "Comparison": (8, 0)},
            {"all": (297, 216), "Science": (81, 54), "Comparison": (3, 9)},
        ),
    ],
)
def test_figures_on_shipped_suites(request, fixture, shorter, longer, overlap):
    suite = request.getfixturevalue(fixture)
    result = baselines(suite)
    assert result["tests"] == len(suite.pairs)
    for name, expected in {"shorter": shorter, "longer": longer, "overlap": overlap}.items():
        figures = result["baselines"][name]
        overall = figures["overall"]
        assert (overall["passed"], overall["ties"]) == expected["all"]
        assert overall["passed"] + overall["ties"] + overall["failed"] == overall["n"]
        for category, counts in expected.items():
            if category != "all":
                got = figures["by_category"][category]
                assert (got["passed"], got["ties"]) == counts
    # a length tie is a tie for both; otherwise exactly one of shorter/longer passes
    short = result["baselines"]["shorter"]["overall"]
    long_ = result["baselines"]["longer"]["overall"]
    assert short["passed"] == long_["failed"] and short["ties"] == long_["ties"]


def test_cli_table_and_json(capsys):
    assert main(["baselines", "challenge300"]) == 0
    table = capsys.readouterr().out
    assert "| shorter | 46.7% [43.3, 50.2], 32 ties |" in table
    assert "Comparison (n=15)" in table and "a tie is not a pass" in table
    assert main(["baselines", "challenge300", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["baselines"]["longer"]["overall"]["passed"] == 398
    assert main(["baselines", "no_such_suite"]) == 6
    assert "no_such_suite" in capsys.readouterr().err


def test_table_says_how_many_degenerate_tests_every_rate_leaves_out(capsys):
    # wmt_mqm: 2,080 of its 17,722 tests compare two identical texts (paper: counted apart)
    assert main(["baselines", "wmt_mqm"]) == 0
    table = capsys.readouterr().out
    assert "17,722 tests, 2,080 degenerate (identical texts) left out of every rate" in table
    assert "| baseline | overall (n=15,642) |" in table


def test_overlap_reads_a_conversation_by_its_turns_not_its_stored_json(hh_suite):
    from nnd_suites.evaluation.baselines import context_text
    from nnd_suites.records.templates import conversation_fields

    fields = conversation_fields(hh_suite.manifest.default_template)
    pair = hh_suite.pairs[0]
    stored = "\n".join(pair.context.values())
    assert '"role"' in stored  # turns are stored as JSON
    read = context_text(pair, fields)
    assert '"role"' not in read and '"content"' not in read
    assert read.startswith("Human: ")
