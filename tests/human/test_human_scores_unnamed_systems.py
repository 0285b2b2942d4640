"""HH-RLHF's candidates name no generating system (pairwise preferences), so
`systems hh_rlhf` printed one system "unknown" with a human score of 50.0% (an artefact of the
pairing: one chosen, one rejected reply per conversation) and `verify hh_rlhf` listed "known:
unknown". Both now stop with a NoSystemsError (exit status 2) naming the suite."""

from __future__ import annotations

import pytest

from nnd_suites.cli import main
from nnd_suites.errors import NoSystemsError
from nnd_suites.evaluation.verify import verify_suite
from nnd_suites.human.scores import human_scores, human_scores_markdown
from nnd_suites.records.judgments import UNKNOWN_SYSTEM
from nnd_suites.suite import Suite


def test_hh_rlhf_records_no_system(hh_suite):
    assert {system for c in hh_suite.candidates for system in c.systems} == {UNKNOWN_SYSTEM}
    with pytest.raises(NoSystemsError, match=r"suite hh_rlhf: its 4,614 candidates name no system"):
        human_scores(hh_suite)


def test_a_suite_whose_candidates_name_systems_still_scores(challenge300_suite):
    assert "Macaw-answer-11B" in human_scores(challenge300_suite).systems


def test_candidates_that_name_no_system_are_counted_not_pooled(challenge300_suite):
    """Where only some candidates lack a system, they are left out of every row and counted:
    an 'unknown' row would pool outputs of different systems into one human score."""
    whole = human_scores(challenge300_suite)
    assert whole.unattributed == 0
    lost = "Macaw-answer-11B"
    candidates = [
        c.model_copy(update={"systems": [UNKNOWN_SYSTEM]}) if lost in c.systems else c
        for c in challenge300_suite.candidates
    ]
    partial = Suite(challenge300_suite.manifest, challenge300_suite.pairs, candidates)
    scores = human_scores(partial)
    assert UNKNOWN_SYSTEM not in scores.systems and lost not in scores.systems
    assert scores.unattributed == whole.systems[lost].candidates == 300
    assert scores.systems == {k: v for k, v in whole.systems.items() if k != lost}
    table = human_scores_markdown(scores)
    assert "300 candidate(s) name no system and are in no row" in table
    assert "| unknown |" not in table


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
    assert "suite hh_rlhf: its 4,614 candidates name no system" in err  # a count, as printed
    assert not out.exists()
