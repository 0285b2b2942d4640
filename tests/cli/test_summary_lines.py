"""What `nnd-suites evaluate` prints under a run: the pass rate with the count it is over (the
rated tests), the degenerate and skipped tests named as left out, and the raters' agreement when
the suite has votes. Every printed count is checked against report.json's own."""

from __future__ import annotations

import json
import re

import pytest

from nnd_suites.builder.adapter import get_adapter
from nnd_suites.cli import main
from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

SUMMARY = re.compile(
    r"^(?P<suite>\S+): (?P<rate>[\d.]+)% \[[\d.]+, [\d.]+\] of (?P<n>[\d,]+) rated tests? "
    r"\((?P<passed>[\d,]+) passed, (?P<failed>[\d,]+) failed, (?P<ties>[\d,]+) ties?\)"
    r"(?:; left out: (?P<left_out>.*))?$",
    re.MULTILINE,
)


def _evaluate(suite: str, model: str, out, capsys, *extra: str) -> tuple[re.Match, dict, str]:
    """Run the command; its summary line (parsed), report.json's suite result, what it printed."""
    capsys.readouterr()
    argv = ["evaluate", "--suite", suite, "--model", model, "--out", str(out), *extra]
    assert main([*argv, "--quiet"]) == 0
    printed = capsys.readouterr().out
    lines = SUMMARY.findall(printed)
    assert len(lines) == 1, printed
    line = SUMMARY.search(printed)
    report = json.loads((out / "report.json").read_text())
    (result,) = report["suites"].values()
    return line, result, printed


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_rate_is_printed_over_the_rated_tests_with_the_degenerate_left_out(
    tiny_causal_model, tmp_path, capsys
):
    # wmt_mqm's first 4 context groups hold tests whose two translations are the same text
    line, result, _ = _evaluate(
        "wmt_mqm", str(tiny_causal_model), tmp_path / "run", capsys, "--limit", "4"
    )
    overall = result["overall"]
    assert overall["degenerate"] > 0 and overall["skipped"] == 0
    assert _number(line["n"]) == overall["n"] < result["pairs"]
    assert _number(line["n"]) == overall["passed"] + overall["failed"] + overall["ties"]
    assert _number(line["passed"]) == overall["passed"]
    assert _number(line["failed"]) == overall["failed"]
    assert _number(line["ties"]) == overall["ties"]
    assert float(line["rate"]) == pytest.approx(100 * overall["passed"] / overall["n"], abs=0.05)
    assert line["left_out"] == f"{overall['degenerate']:,} degenerate (the same text twice)"
    # every test of the run is either rated or named as left out
    assert overall["n"] + overall["degenerate"] == result["pairs"]


@pytest.fixture(scope="module")
def small_window_model(tmp_path_factory, quiz_design_suite, challenge300_suite):
    """A 20-token window: some candidates alone do not fit it (skipped tests), others do."""
    return tiny_causal_lm(
        tmp_path_factory.mktemp("small_window"),
        suite_texts([quiz_design_suite, challenge300_suite]),
        n_layer=1,
        n_embd=16,
        n_head=2,
        n_positions=20,
    )


def test_skipped_tests_are_named_as_left_out(small_window_model, tmp_path, capsys):
    model = small_window_model
    line, result, _ = _evaluate(
        "quiz_design", str(model), tmp_path / "run", capsys, "--limit", "10", "--no-cache"
    )
    overall = result["overall"]
    assert overall["skipped"] > 0 and overall["n"] > 0
    assert _number(line["n"]) == overall["n"] == result["pairs"] - overall["skipped"]
    assert _number(line["passed"]) == overall["passed"]
    assert line["left_out"] == (
        f"{overall['skipped']:,} skipped (a candidate longer than the window)"
    )


def test_the_human_agreement_line_is_printed_under_a_suite_with_votes(
    tiny_causal_model, tmp_path, capsys
):
    source = (
        get_adapter("summeval").folder()
        / "fixtures"
        / "model_annotations.aligned.paired.sample.jsonl"
    )
    suite = tmp_path / "summeval"
    assert main(["build", "summeval", "--source", str(source), "--out", str(suite)]) == 0
    line, result, printed = _evaluate(str(suite), str(tiny_causal_model), tmp_path / "run", capsys)
    assert line["left_out"] is None  # every one of the 28 tests is rated
    ceiling = result["agreement_ceiling"]
    assert ceiling["tests"] == 28
    agreement = (
        f"  human agreement on 28 tests: model {100 * ceiling['model']['pass_rate']:.1f}% vs "
        f"raters {100 * ceiling['ceiling']:.1f}% [{100 * ceiling['ci'][0]:.1f}, "
        f"{100 * ceiling['ci'][1]:.1f}]; model - raters "
    )
    assert any(text.startswith(agreement) for text in printed.splitlines()), printed


def test_report_md_gives_the_rated_count_the_rate_is_over(small_window_model, tmp_path, capsys):
    _, result, _ = _evaluate(
        "quiz_design", str(small_window_model), tmp_path / "run", capsys, "--limit", "10"
    )
    o = result["overall"]
    assert o["skipped"] > 0
    cells = [
        f"{result['pairs']:,}",
        f"{o['n']:,}",
        f"{o['passed']:,}",
        f"{o['failed']:,}",
        f"{o['ties']:,}",
        f"{o['degenerate']:,}",
        f"{o['skipped']:,}",
    ]
    report_md = (tmp_path / "run" / "report.md").read_text()
    assert "| suite | tests | rated | passed | failed | ties | degenerate | skipped |" in report_md
    assert f"| quiz_design | {' | '.join(cells)} | {100 * o['pass_rate']:.1f}% [" in report_md


def test_a_leaderboard_cell_gives_the_n_of_a_model_that_rated_fewer(
    tiny_causal_model, small_window_model, tmp_path, capsys
):
    out = tmp_path / "board"
    models = ["--model", str(tiny_causal_model), "--model", str(small_window_model)]
    argv = ["evaluate", "--suite", "quiz_design", *models, "--limit", "10", "--out", str(out)]
    assert main([*argv, "--quiet"]) == 0
    printed = capsys.readouterr().out
    label = small_window_model.name
    (result,) = json.loads((out / label / "report.json").read_text())["suites"].values()
    (full,) = json.loads((out / tiny_causal_model.name / "report.json").read_text())[
        "suites"
    ].values()
    small, whole = result["overall"], full["overall"]
    assert small["skipped"] > 0 and whole["skipped"] == 0 and whole["n"] > small["n"]
    assert f"| overall (n={whole['n']}) |" in printed
    row = next(line for line in printed.splitlines() if line.startswith(f"| {label} |"))
    overall_cell = row.split(" | ")[3]  # after the rate on the tests every model rated
    assert overall_cell.startswith(f"{100 * small['pass_rate']:.1f}% [")
    assert overall_cell.endswith(f"(n={small['n']}, {small['skipped']} skipped)")
    full_row = next(
        line for line in printed.splitlines() if line.startswith(f"| {tiny_causal_model.name} |")
    )
    assert "(n=" not in full_row  # it rated every test the header counts


def test_robustness_prints_the_skipped_tests_it_left_out(small_window_model, tmp_path, capsys):
    out = tmp_path / "robust"
    argv = ["robustness", "--suite", "quiz_design", "--model", str(small_window_model)]
    assert main([*argv, "--transform", "lowercase", "--limit", "10", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    (cell,) = json.loads((out / "robustness.json").read_text())["cells"]
    assert cell["skipped"] > 0
    assert "| suite | transform | n | degenerate | skipped | changed |" in printed
    expected = (
        f"| quiz_design | lowercase | {cell['n']} | {cell['degenerate']} | {cell['skipped']} |"
    )
    assert expected in printed


def test_slices_say_which_tests_a_subset_rate_is_over(small_window_model, tmp_path, capsys):
    run = tmp_path / "run"
    argv = ["evaluate", "--suite", "challenge300", "--model", str(small_window_model)]
    assert main([*argv, "--out", str(run), "--quiet"]) == 0
    (result,) = json.loads((run / "report.json").read_text())["suites"].values()
    capsys.readouterr()
    assert main(["slices", "challenge300", "--run", str(run)]) == 0
    printed = capsys.readouterr().out.splitlines()
    groups = result["by_slice"]["breakdown.group"]
    under = printed[printed.index("breakdown.group") + 1 :]
    checked = 0
    for subset, rate in groups.items():
        line = next(text for text in under if text.strip().startswith(subset + " "))
        tests = rate["n"] + rate["degenerate"] + rate["skipped"]
        # n right-aligned: the pass column lines up whatever n's width
        assert re.search(rf"n= *{tests:,}  pass {100 * rate['pass_rate']:.1f}% \[", line), line
        if rate["skipped"]:
            checked += 1
            assert line.endswith(f" of {rate['n']:,} rated (left out: {rate['skipped']:,} skipped)")
        else:
            assert "rated" not in line
    assert checked > 0


def test_the_printed_intervals_say_what_they_are(tiny_causal_model, tmp_path, capsys):
    """`evaluate` and `slices --run` printed '50.6% [48.7, 52.5]' with nothing saying what the
    bracket is; report.md says 'pass rate [95% CI]'."""
    run = tmp_path / "run"
    _, _, printed = _evaluate("challenge300", str(tiny_causal_model), run, capsys)
    lines = printed.splitlines()
    named = lines.index(
        "pass rate [Wilson 95% interval] of the rated tests, per suite and category:"
    )
    assert lines[named + 1].startswith("challenge300: ")
    assert main(["slices", "challenge300", "--run", str(run)]) == 0
    assert capsys.readouterr().out.startswith(
        f"slices of challenge300 (807 tests; pass rate [Wilson 95% interval] in run {run})\n"
    )
