"""Probe finding F-Q: HH-RLHF's candidates name no generating system (pairwise preferences), so
`systems hh_rlhf` printed one system "unknown" with a human score of 50.0% (an artefact of the
pairing: one chosen, one rejected reply per conversation) and `verify hh_rlhf` listed "known:
unknown". Both now stop with a NoSystemsError (exit status 2) naming the suite."""

from __future__ import annotations

import pytest

from nnd_suites import build_suite
from nnd_suites.cli import main
from nnd_suites.errors import NoSystemsError
from nnd_suites.evaluation.verify import verify_suite
from nnd_suites.human_scores import human_scores
from nnd_suites.judgments import UNKNOWN_SYSTEM


@pytest.fixture(scope="module")
def hh_suite():
    return build_suite("hh_rlhf")


def test_hh_rlhf_records_no_system(hh_suite):
    assert {system for c in hh_suite.candidates for system in c.systems} == {UNKNOWN_SYSTEM}
    with pytest.raises(NoSystemsError, match=r"suite hh_rlhf: its 4614 candidates name no system"):
        human_scores(hh_suite)


def test_a_suite_whose_candidates_name_systems_still_scores(challenge300_suite):
    assert "Macaw-answer-11B" in human_scores(challenge300_suite).systems


def test_the_systems_command_exits_2_and_prints_no_table(capsys):
    assert main(["systems", "hh_rlhf"]) == NoSystemsError.exit_status == 2
    captured = capsys.readouterr()
    assert "| unknown |" not in captured.out and "50.0%" not in captured.out
    assert "suite hh_rlhf" in captured.err and "pairwise preferences" in captured.err


def test_verify_refuses_before_scoring(hh_suite, tiny_causal_model, tmp_path, capsys):
    model = str(tiny_causal_model)
    with pytest.raises(NoSystemsError):
        verify_suite(hh_suite, {UNKNOWN_SYSTEM: model, "other": model}, limit=2)
    out = tmp_path / "verify"
    argv = ["verify", "hh_rlhf", "--system", f"unknown={model}", "--system", f"other={model}"]
    assert main([*argv, "--out", str(out), "--limit", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no systems to score or verify" in err and "known: unknown" not in err
    assert not out.exists()
