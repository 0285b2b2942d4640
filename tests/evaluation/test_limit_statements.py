"""Every report kind states --limit (issue 34): the groups kept, the tests scored of the suite's,
and the categories the first-N-groups rule left with no test. The figures are counted here from
the shipped Challenge 300 suite, independently of the evaluator."""

from __future__ import annotations

import json

import pytest

from nnd_suites.cli import main
from nnd_suites.errors import NNDError
from nnd_suites.evaluation.limits import SuiteLimit, kept_digest, kept_tests_differ

GROUPS = 3


@pytest.fixture(scope="module")
def expected(challenge300_suite) -> dict:
    """What the first GROUPS context groups with tests keep, counted from the suite's pairs."""
    groups = list(dict.fromkeys(p.group_id for p in challenge300_suite.pairs))[:GROUPS]
    kept = [p for p in challenge300_suite.pairs if p.group_id in groups]
    categories = list(dict.fromkeys(p.category for p in challenge300_suite.pairs))
    dropped = sorted(set(categories) - {p.category for p in kept})
    assert dropped, "the fixture must show a category the limit leaves with no test"
    return {
        "scored": len(kept),
        "tests": len(challenge300_suite.pairs),
        "dropped": dropped,
        "kept": kept_digest(p.id for p in kept),
    }


def _statement(expected: dict) -> str:
    left = "category" if len(expected["dropped"]) == 1 else "categories"
    return (
        f"challenge300: {expected['scored']} of {expected['tests']} tests, no test left in {left} "
        + ", ".join(expected["dropped"])
    )


def _flat(text: str) -> str:
    return " ".join(text.split())


def _limited(tiny_causal_model) -> list[str]:
    model = str(tiny_causal_model)
    return ["--model", model, "--suite", "challenge300", "--limit", str(GROUPS), "--quiet"]


def test_console_summary_without_out_states_the_limit(tiny_causal_model, expected, capsys):
    assert main(["evaluate", *_limited(tiny_causal_model), "--device", "cpu"]) == 0
    printed = _flat(capsys.readouterr().out)
    assert f"Only the first {GROUPS} context groups with tests of each suite" in printed
    assert _statement(expected) in printed


def test_report_json_and_markdown_state_the_limit(tiny_causal_model, expected, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["evaluate", *_limited(tiny_causal_model), "--out", str(out)]) == 0
    result = json.loads((out / "report.json").read_text())["suites"]["challenge300"]
    assert result["pairs"] == expected["scored"]
    assert result["limited"] == {
        "scored": expected["scored"],
        "tests": expected["tests"],
        "categories_without_tests": expected["dropped"],
        "groups": GROUPS,
        "kept": expected["kept"],  # what compare, leaderboards and place match runs on
    }
    assert _statement(expected) in _flat((out / "report.md").read_text())


SLICES_OF_THE_TESTS_SCORED = (
    "The slices below are cut over the {scored} tests this limited run scored"
)


def test_slice_tables_of_a_limited_run_say_they_are_cut_over_the_tests_scored(
    tiny_causal_model, expected, tmp_path, capsys
):
    """A quartile of a limited run is one of the tests scored, not the suite's (``slices``
    refuses such a run): report.md says so above its slice tables, and only then."""
    limited, whole = tmp_path / "limited", tmp_path / "whole"
    assert main(["evaluate", *_limited(tiny_causal_model), "--out", str(limited)]) == 0
    markdown = _flat((limited / "report.md").read_text())
    assert "| slice length_chars | n |" in markdown
    note = SLICES_OF_THE_TESTS_SCORED.format(scored=expected["scored"])
    assert f"{note}, not over the suite's {expected['tests']} " in markdown
    assert markdown.index(note) < markdown.index("| slice length_chars | n |")
    argv = ["evaluate", "--model", str(tiny_causal_model), "--suite", "challenge300", "--quiet"]
    assert main([*argv, "--out", str(whole)]) == 0
    markdown = _flat((whole / "report.md").read_text())
    assert "| slice length_chars | n |" in markdown and "cut over the" not in markdown


def test_an_unlimited_run_records_no_limit(tiny_causal_model, tmp_path, capsys):
    argv = ["evaluate", "--model", str(tiny_causal_model), "--suite", "challenge300"]
    assert main([*argv, "--quiet", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["limit"] is None and summary["suites"]["challenge300"]["limited"] is None


def test_robustness_reports_state_the_limit(tiny_causal_model, expected, tmp_path, capsys):
    out = tmp_path / "rob"
    argv = ["robustness", *_limited(tiny_causal_model), "--transform", "lowercase"]
    assert main([*argv, "--out", str(out)]) == 0
    printed = _flat(capsys.readouterr().out)
    assert _statement(expected) in printed
    assert _statement(expected) in _flat((out / "robustness.md").read_text())
    written = json.loads((out / "robustness.json").read_text())
    assert written["evaluation"]["limit"] == GROUPS
    scored, record = written["evaluation"]["kept"]["challenge300"]
    assert scored == expected["scored"] and record["tests"] == expected["tests"]
    embedded = json.loads((out / "evaluation" / "report.json").read_text())
    assert embedded["limit"] == GROUPS
    assert _statement(expected) in _flat((out / "evaluation" / "report.md").read_text())


def test_compare_of_two_limited_runs_states_the_limit(
    tiny_causal_model, expected, tmp_path, capsys
):
    runs = [tmp_path / "a", tmp_path / "b"]
    for run in runs:
        assert main(["evaluate", *_limited(tiny_causal_model), "--out", str(run)]) == 0
    capsys.readouterr()
    out = tmp_path / "cmp"
    assert main(["compare", *map(str, runs), "--out", str(out)]) == 0
    assert _statement(expected) in _flat(capsys.readouterr().out)
    written = json.loads((out / "comparison.json").read_text())
    assert written["limit"] == GROUPS
    assert (
        written["suites"]["challenge300"]["limited"]["categories_without_tests"]
        == (expected["dropped"])
    )
    # a record edited to say another size of suite: "29 of 5 tests" printed, exit 0
    report = runs[0] / "report.json"
    run = json.loads(report.read_text())
    limited = run["suites"]["challenge300"]["limited"]
    for edit, said in [
        ({"tests": 5}, f"scored {expected['scored']} must be fewer than the suite's 5 tests"),
        ({"groups": 99}, f"99 groups kept, but only {expected['scored']} tests scored"),
        ({"tests": 9999}, f"tests kept by --limit: {expected['scored']} of 9,999"),
    ]:
        run["suites"]["challenge300"]["limited"] = {**limited, **edit}
        report.write_text(json.dumps(run))
        assert main(["compare", *map(str, runs)]) == NNDError.exit_status, edit
        assert said in capsys.readouterr().err, edit
    # the run's limit edited: "Only the first 7 context groups" of a run that kept 3 (exit 0)
    run["suites"]["challenge300"]["limited"] = limited
    report.write_text(json.dumps({**run, "limit": 7}))
    assert main(["compare", *map(str, runs)]) == NNDError.exit_status
    assert f"limited.groups says {GROUPS}, but limit 7" in capsys.readouterr().err
    # with no limit, the record reads as a suite given in part (the Python API allows it): the
    # figures are still said to be a part, never the whole suite's
    report.write_text(json.dumps({**run, "limit": None}))
    main(["compare", *map(str, runs)])
    said = _flat(capsys.readouterr().out)
    assert "Part of a suite was scored" in said or "Only the first" in said
    assert f"{expected['scored']} of 807 tests" in said


def test_verify_states_the_limit_and_the_categories_it_dropped(
    tiny_causal_model, tiny_seq2seq_model, expected, tmp_path, capsys
):
    out = tmp_path / "verify"
    systems = [
        f"--system=Macaw-11B={tiny_causal_model}",
        f"--system=GPT3-davinci={tiny_seq2seq_model}",
    ]
    argv = ["verify", "challenge300", *systems, "--out", str(out), "--resamples", "40"]
    assert main([*argv, "--limit", str(GROUPS), "--quiet", "--device", "cpu"]) == 0
    written = json.loads((out / "verify.json").read_text())
    assert written["limited"]["categories_without_tests"] == expected["dropped"]
    for category in expected["dropped"]:
        assert written["categories_left_out"][category] == "--limit left no test of this category"
    assert _statement(expected) in _flat((out / "verify.md").read_text())


def test_a_limit_of_one_group_is_stated_in_the_singular(tiny_causal_model, tmp_path, capsys):
    """``--limit 1`` read "Only the first 1 context group ... were scored"."""
    argv = ["evaluate", "--model", str(tiny_causal_model), "--suite", "challenge300"]
    assert main([*argv, "--limit", "1", "--out", str(tmp_path / "run")]) == 0
    said = "Only the first context group with tests of each suite was scored"
    assert said in _flat(capsys.readouterr().out)
    assert said in _flat((tmp_path / "run" / "report.md").read_text())
    one = SuiteLimit(scored=2, tests=9, categories_without_tests=[], groups=1, kept="a")
    assert (
        kept_tests_differ(one, None)
        == "tests kept by --limit: 2 of 9 (the first group) vs every test"
    )


def test_a_fraction_below_one_is_never_said_as_every_group(tiny_causal_model, capsys):
    """``--limit 0.99999`` read "Only the first 100% of the context groups": a fraction below 1
    is now given as many digits as it takes to stay below 100%."""
    argv = ["evaluate", "--model", str(tiny_causal_model), "--suite", "challenge300"]
    assert main([*argv, "--limit", "0.99999", "--quiet", "--device", "cpu"]) == 0
    printed = _flat(capsys.readouterr().out)
    assert "Only the first 99.999% of the context groups with tests" in printed, printed
