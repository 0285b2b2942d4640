"""The CLI builds arguments and the library decides: ``base_url`` alone selects the served
backend in Python as on the command line, both give the same report, and a backend option that
the chosen backend does not take is a usage error naming it."""

from __future__ import annotations

import pytest

from nnd_suites.cli import main
from nnd_suites.errors import ParameterError


def test_base_url_alone_selects_the_served_backend_in_python(
    fake_server, tmp_path, quiz_design_suite
):
    from nnd_suites.evaluation import evaluate, load_backend
    from nnd_suites.evaluation.backend import backend_name

    assert backend_name("fake", base_url=fake_server.url) == "served"
    assert backend_name("m.gguf") == "llama_cpp" and backend_name("gpt2") == "hf"
    assert backend_name("fake", "hf_causal", base_url=fake_server.url) == "hf_causal"  # named wins
    assert load_backend("fake", base_url=fake_server.url, eos_text="</s>").name == "served"
    report = evaluate(
        "fake",
        quiz_design_suite,
        backend_options={"base_url": fake_server.url, "eos_text": "</s>"},
        limit=2,
        cache=False,
        progress=False,
    )
    assert report.backend["backend"] == "served" and report.requests.scored > 0


def test_cli_and_python_give_the_same_report(fake_server, tmp_path, quiz_design_suite):
    from nnd_suites.evaluation import evaluate
    from nnd_suites.evaluation.saved import load_report

    argv = ["evaluate", "--suite", "quiz_design", "--model", "fake", "--base-url", fake_server.url]
    argv += ["--eos-text", "</s>", "--limit", "2", "--no-cache", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "cli")]) == 0
    by_cli = load_report(tmp_path / "cli")
    by_python = evaluate(
        "fake",
        "quiz_design",
        backend_options={"base_url": fake_server.url, "eos_text": "</s>"},
        limit=2,
        cache=False,
        progress=False,
    )
    ours, theirs = by_cli.suites["quiz_design"], by_python.suites["quiz_design"]
    assert ours.pairs == theirs.pairs > 0
    assert (ours.passed, ours.ties, ours.pass_rate) == (
        theirs.passed,
        theirs.ties,
        theirs.pass_rate,
    )
    assert by_cli.backend == by_python.backend
    assert by_cli.outcomes["quiz_design"] == by_python.outcomes["quiz_design"]


def test_a_served_option_given_to_a_local_model_is_a_usage_error(tiny_causal_model, capsys):
    argv = ["evaluate", "--suite", "quiz_design", "--model", str(tiny_causal_model), "--quiet"]
    assert main([*argv, "--limit", "1", "--concurrency", "4"]) == ParameterError.exit_status
    err = capsys.readouterr().err
    assert "unknown parameter 'concurrency'" in err and "backend hf" in err


def test_data_parallel_refuses_a_server_given_by_its_url_alone(fake_server, capsys):
    argv = ["evaluate", "--suite", "quiz_design", "--model", "fake", "--base-url", fake_server.url]
    assert main([*argv, "--data-parallel", "2", "--quiet"]) != 0
    assert "sharded by its engine" in capsys.readouterr().err
    assert fake_server.requests == 0  # refused before anything was sent


def test_the_embedded_model_name_works_in_python_as_on_the_command_line(
    monkeypatch, tiny_causal_model, quiz_design_suite
):
    """`nnd-suites:tiny-random` is resolved by the library (made on first use; here the
    session's tiny model stands in for it, so nothing is built)."""
    from nnd_suites.evaluation import evaluate, tiny
    from nnd_suites.evaluation.report_markdown import markdown

    monkeypatch.setattr(tiny, "embedded_model", lambda: tiny_causal_model)
    report = evaluate(tiny.EMBEDDED, quiz_design_suite, limit=1, cache=False, progress=False)
    assert report.model == tiny.EMBEDDED and report.requests.scored > 0
    assert "PIPELINE CHECK" in markdown(report)


def test_served_model_ids_are_not_checked_as_local_models(tmp_path):
    """Several served models (evaluate --model A --model B --base-url, verify): the ids are the
    fake_server's, never looked up as folders or Hub models, whether --backend served is given or a
    base_url alone."""
    from nnd_suites.errors import NNDError
    from nnd_suites.evaluation.backends.hf_loading import check_model_references

    missing = str(tmp_path / "no" / "such" / "model")
    with pytest.raises(NNDError, match="model"):
        check_model_references([missing], None)
    check_model_references([missing], None, {"base_url": "http://127.0.0.1:9/v1"})
    check_model_references([missing], "served")
