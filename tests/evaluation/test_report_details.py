"""Details of what reports say (issue 34's papercuts): a header leaves out what the backend does
not know, a GGUF file is named by its stem in a leaderboard, a --no-cache run says the cache was
off, and the robustness heat map shows each cell's n and keeps cells of few tests out of its
colour scale."""

from __future__ import annotations

import logging

import pytest

from nnd_suites.cli import main
from nnd_suites.evaluation.backend import Score
from nnd_suites.evaluation.leaderboard import model_labels
from nnd_suites.evaluation.report import suite_result
from nnd_suites.evaluation.report import test_outcomes as outcomes_of
from nnd_suites.evaluation.report_markdown import markdown
from nnd_suites.evaluation.robustness.chart import MIN_COLOURED_N, cell_text, colour_limit
from nnd_suites.evaluation.robustness.stats import PairedTest, compare_to_parent


def test_the_header_leaves_out_what_the_backend_does_not_know(heuristic_report, quiz_design_suite):
    report = heuristic_report([quiz_design_suite], "tiny-f32.gguf", len)
    report.backend = {"backend": "llama_cpp", "revision": None, "n_ctx": 512}
    header = markdown(report).splitlines()[2]
    assert header.startswith("Backend `llama_cpp`, scoring mode **default**, scorer `mean`.")
    assert "None" not in header and "revision" not in header and "dtype" not in header
    report.backend = {"backend": "hf_causal", "revision": "main", "dtype": "fp32"}
    header = markdown(report).splitlines()[2]
    assert header.startswith("Backend `hf_causal`, revision `main`, dtype fp32, scoring mode")


def test_a_model_file_is_named_by_its_stem_and_told_apart_only_on_a_clash(tmp_path):
    for folder in ("models", "copies"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "tiny-f32.gguf").write_bytes(b"GGUF")
    (tmp_path / "models" / "tiny-q8_0.gguf").write_bytes(b"GGUF")
    one, other, quantized = (
        str(tmp_path / "models" / "tiny-f32.gguf"),
        str(tmp_path / "copies" / "tiny-f32.gguf"),
        str(tmp_path / "models" / "tiny-q8_0.gguf"),
    )
    assert model_labels([one, quantized, "org/model"]) == ["tiny-f32", "tiny-q8_0", "org__model"]
    assert model_labels([one, other]) == ["models__tiny-f32", "copies__tiny-f32"]


def test_a_no_cache_run_says_the_cache_was_off(tiny_causal_model, capsys):
    argv = ["evaluate", "--suite", "challenge300", "--model", str(tiny_causal_model)]
    try:
        assert main(["-v", *argv, "--limit", "1", "--quiet", "--no-cache"]) == 0
    finally:  # -v set nnd_suites' level for this process; later tests expect the default
        logging.getLogger("nnd_suites").setLevel(logging.WARNING)
    err = capsys.readouterr().err
    assert "score cache off" in err
    assert "came from the cache" not in err


def _cell(passed_before: int, passed_after: int, n: int):
    tests = [
        PairedTest(
            test_id=str(i),
            category="c",
            parent="pass" if i < passed_before else "fail",
            outcome="pass" if i < passed_after else "fail",
            changed=True,
        )
        for i in range(n)
    ]
    return compare_to_parent(tests)


def test_a_cell_of_few_tests_does_not_set_the_colour_scale():
    small = _cell(0, 2, 3)  # +66.7 points over 3 tests
    large = _cell(10, 14, 40)  # +10 points over 40 tests
    assert small.n < MIN_COLOURED_N <= large.n
    assert colour_limit([small, large]) == pytest.approx(10.0)
    assert colour_limit([small]) == 5.0  # the floor: noise stays pale
    assert cell_text(small, marked=False) == "+66.7\nn=3"
    assert cell_text(large, marked=True) == "+10.0*\nn=40"


def test_the_heat_map_is_drawn_with_a_small_cell(tiny_causal_model, tmp_path, capsys):
    out = tmp_path / "rob"
    argv = ["robustness", "--model", str(tiny_causal_model), "--suite", "challenge300"]
    argv += ["--transform", "lowercase", "--limit", "3", "--quiet", "--out", str(out)]
    assert main(argv) == 0
    assert (out / "robustness.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_test_is_truncated_when_either_candidate_had_its_context_cut(challenge300_suite):
    """A context is cut per request (its candidate's length decides): a test whose worse
    candidate alone did not fit whole is a truncated test."""
    suite, template = challenge300_suite, challenge300_suite.manifest.default_template
    long = next(p.low.text for p in suite.pairs if len(p.low.text) > len(p.high.text) > 0)

    def lookup(context: str, text: str) -> Score:
        return Score(-len(text) - 1.0, len(text) + 1, truncated_tokens=5 * (text == long))

    outcomes = outcomes_of(suite.pairs, template, None, lookup)
    expected = [long in (p.high.text, p.low.text) for p in suite.pairs]
    assert [o.truncated for o in outcomes] == expected and any(
        p.low.text == long for p, cut in zip(suite.pairs, expected, strict=True) if cut
    )
    result = suite_result(suite.name, suite, "default", template, outcomes, 0)
    assert result.truncated_tests == sum(expected)
