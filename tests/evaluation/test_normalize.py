"""evaluate --normalize: normalisation plugins only, applied to both candidates before scoring."""

from __future__ import annotations

import pytest

import nnd_suites
from nnd_suites.cli import main


def test_a_perturbation_is_refused_before_any_model_is_loaded(capsys):
    with pytest.raises(nnd_suites.NNDError, match="typos is a perturbation, not a normalization"):
        nnd_suites.evaluate("/no/such/model", ["challenge300"], normalize=["typos"])
    code = main(
        ["evaluate", "--suite", "challenge300", "--model", "/no/such/model", "--normalize", "typos"]
    )
    assert code == 2
    assert "not a normalization" in capsys.readouterr().err


def test_normalized_run_scores_the_normalized_texts(tiny_causal_model, challenge300_suite):
    plain = nnd_suites.evaluate(tiny_causal_model, [challenge300_suite], progress=False)
    lowered = nnd_suites.evaluate(
        tiny_causal_model, [challenge300_suite], normalize=["lowercase"], progress=False
    )
    [plain_outcomes] = plain.outcomes.values()
    [lowered_outcomes] = lowered.outcomes.values()
    # Same tests (ids kept), scored on different texts: some log-likelihoods must differ.
    plain_ll = {o.pair_id: o.ll_high for o in plain_outcomes}
    lowered_ll = {o.pair_id: o.ll_high for o in lowered_outcomes}
    assert plain_ll.keys() == lowered_ll.keys()
    assert any(abs(plain_ll[k] - lowered_ll[k]) > 1e-6 for k in plain_ll)


def test_a_normalization_given_twice_is_refused_before_any_model_is_loaded(tmp_path, capsys):
    """As a repeated suite, scorer or model is: the run was scored and reported as
    ``quiz_design.lowercase.lowercase`` with exit 0."""
    twice = ["lowercase", "whitespace", "lowercase"]
    with pytest.raises(nnd_suites.NNDError, match="normalization 'lowercase' is given twice"):
        nnd_suites.evaluate("/no/such/model", ["quiz_design"], normalize=twice)
    with pytest.raises(nnd_suites.NNDError, match="normalization 'lowercase' is given twice"):
        nnd_suites.evaluate_models(["/no/such/model"], ["quiz_design"], normalize=twice)
    out = tmp_path / "run"
    code = main(
        ["evaluate", "--suite", "quiz_design", "--model", "/no/such/model", "--out", str(out)]
        + [part for spec in twice for part in ("--normalize", spec)]
    )
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "normalization 'lowercase' is given twice (--normalize)" in err
    assert "give each normalization once" in err
