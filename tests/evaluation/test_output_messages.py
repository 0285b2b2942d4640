"""What the writers say and keep: --json and --limit, a robustness folder keeps only its own
evaluation, the tiny model's writer, and the messages of slices and compare."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nnd_suites import load_suite
from nnd_suites.cli import main
from nnd_suites.errors import NNDError


def test_json_summary_carries_what_tells_runs_apart(tiny_causal_model, tmp_path, capsys):
    """F-J: --json printed no limit, so a 7-group smoke test read as a full run."""
    out = tmp_path / "run"
    argv = ["evaluate", "--suite", "challenge300", "--model", str(tiny_causal_model)]
    assert main([*argv, "--limit", "7", "--json", "--quiet", "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    written = json.loads((out / "report.json").read_text())
    assert summary["limit"] == written["limit"] == 7
    # every field of report.json that says how the figures were made is in --json, equal
    for field in set(written) - {"suites", "requests", "backend"}:
        assert summary[field] == written[field], field
    assert summary["reference_model"] is None and summary["sensitivity"] == {}
    # F-T: the limit counts the context groups that have tests, and report.md says so
    suite = load_suite("challenge300")
    with_tests = list(dict.fromkeys(p.group_id for p in suite.pairs))
    assert suite.manifest.counts.groups > len(with_tests)  # some groups make no test
    first = set(with_tests[:7])
    assert summary["suites"]["challenge300"]["pairs"] == sum(
        p.group_id in first for p in suite.pairs
    )
    assert "the first 7 context groups with tests of each suite" in (out / "report.md").read_text()


def test_limit_help_says_groups_with_tests(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "first N context groups with tests of each suite" in help_text


def _robustness_run(model, out, limit=3):
    from nnd_suites.evaluation.robustness import robustness

    options = {"limit": limit, "out": out, "cache": False, "progress": False}
    return robustness(str(model), ["challenge300"], ["lowercase"], **options)


def test_a_robustness_folder_keeps_only_its_own_evaluation(
    tiny_causal_model, tiny_seq2seq_model, tmp_path
):
    """F-N: write_report(report, folder) carried the evaluation/ of another model's run."""
    from nnd_suites.evaluation.robustness import RobustnessReport, write_report
    from nnd_suites.evaluation.saved import load_report

    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    report = _robustness_run(tiny_causal_model, mine)
    _robustness_run(tiny_seq2seq_model, theirs)
    assert load_report(theirs / "evaluation").model == str(tiny_seq2seq_model)

    # written over another model's folder: that model's evaluation/ is left out
    write_report(report, theirs)
    written = RobustnessReport.model_validate_json((theirs / "robustness.json").read_text())
    assert written.model == str(tiny_causal_model)
    assert not (theirs / "evaluation").exists()

    # re-written in its own folder: its own evaluation/ stays, and it is the run's
    write_report(report, mine)
    assert load_report(mine / "evaluation").model == str(tiny_causal_model)

    # the same model limited otherwise is another run: left out too
    other_limit = tmp_path / "limit4"
    _robustness_run(tiny_causal_model, other_limit, limit=4)
    write_report(report, other_limit)
    assert not (other_limit / "evaluation").exists()
    # a robustness folder given as a run (compare, slices --run) points at its evaluation/
    expected = f"{mine}: a robustness folder, not one evaluation run; its evaluator's run is "
    with pytest.raises(NNDError, match=re.escape(expected + str(mine / "evaluation"))):
        load_report(mine)


def test_slices_of_a_limited_run_says_it_was_limited(tiny_causal_model, tmp_path, capsys):
    """F-M: slices --run of a --limit run said "give a run of this very suite"."""
    run = tmp_path / "run"
    argv = ["evaluate", "--suite", "challenge300", "--model", str(tiny_causal_model)]
    assert main([*argv, "--limit", "3", "--no-cache", "--quiet", "--out", str(run)]) == 0
    scored = json.loads((run / "report.json").read_text())["suites"]["challenge300"]["pairs"]
    capsys.readouterr()
    assert main(["slices", "challenge300", "--run", str(run)]) != 0
    message = " ".join(capsys.readouterr().err.split())
    assert "the run was limited (--limit 3: the first 3 context groups with tests)" in message
    assert f"it scored {scored} of suite challenge300's 807 tests" in message
    assert "without --limit" in message and "this very suite" not in message


def test_compare_of_leaderboard_folders_names_their_models(
    tiny_causal_model, tiny_seq2seq_model, tmp_path, capsys
):
    """F-M: compare BOARD_A BOARD_B said "no evaluation report there"."""
    boards = [tmp_path / "board", tmp_path / "board2"]
    models = ["--model", str(tiny_causal_model), "--model", str(tiny_seq2seq_model)]
    for board in boards:
        argv = ["evaluate", "--suite", "challenge300", *models, "--limit", "2", "--no-cache"]
        assert main([*argv, "--quiet", "--out", str(board)]) == 0
    labels = sorted(p.name for p in boards[0].iterdir() if (p / "report.json").is_file())
    assert len(labels) == 2
    capsys.readouterr()
    assert main(["compare", *map(str, boards)]) != 0
    message = " ".join(capsys.readouterr().err.split())
    assert f"{boards[0]}: a leaderboard folder (one run per model)" in message
    assert f"give one model's run inside it, {boards[0]}/MODEL, with MODEL one of: " in message
    assert ", ".join(labels) in message and "no evaluation report there" not in message
    # one model's run inside each board compares
    a, b = (str(board / labels[0]) for board in boards)
    assert main(["compare", a, b, "--json"]) == 0


def test_a_report_folder_of_another_kind_is_named_where_a_run_or_verify_is_wanted(
    tiny_causal_model, tiny_seq2seq_model, tmp_path, capsys
):
    """slices --run COMPARISON (or a verify folder), compare RUN COMPARISON and place RUN RUN
    said "no evaluation (or verify) report there": the folder's marker says what it is."""
    runs = [tmp_path / "a", tmp_path / "b"]
    for run, model in zip(runs, (tiny_causal_model, tiny_seq2seq_model), strict=True):
        argv = ["evaluate", "--suite", "challenge300", "--model", str(model), "--limit", "2"]
        assert main([*argv, "--no-cache", "--quiet", "--out", str(run)]) == 0
    compared = tmp_path / "compared"
    assert main(["compare", *map(str, runs), "--out", str(compared)]) == 0
    capsys.readouterr()
    run, comparison, verify = runs[0], "a comparison report", "a verify report"
    for argv, given, said, wanted in [
        (["slices", "challenge300", "--run", str(compared)], compared, comparison, RUN),
        (["compare", str(run), str(compared)], compared, comparison, RUN),
        (["place", str(run), str(runs[1])], run, "an evaluation report (report.json)", verify),
    ]:
        assert main(argv) == NNDError.exit_status, argv
        message = " ".join(capsys.readouterr().err.split())
        assert f"{given}: {said}" in message and f"not {wanted}; give the folder" in message
        assert "report there" not in message, message


RUN = "an evaluation report"


def test_the_tiny_model_command_refuses_a_foreign_folder(tmp_path):
    """F-P: `python -m nnd_suites.evaluation.tiny OUT` overwrote a user's config.json, and runpy
    warned that the module was imported twice."""
    import subprocess
    import sys

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.json").write_text("my config\n")
    (mine / "notes.txt").write_text("notes\n")
    command = [sys.executable, "-m", "nnd_suites.evaluation.tiny", str(mine)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "RuntimeWarning" not in done.stderr and "Traceback" not in done.stderr
    assert f"{mine}: holds 2 entries: config.json, notes.txt" in done.stderr
    assert "nothing was written or deleted" in done.stderr
    assert sorted(p.name for p in mine.iterdir()) == ["config.json", "notes.txt"]
    assert (mine / "config.json").read_text() == "my config\n"


def test_the_tiny_model_command_replaces_its_own_model(tmp_path, capsys):
    from nnd_suites.evaluation.tiny import main as tiny_main
    from nnd_suites.evaluation.tiny.stamp import STAMP_FILE, TinyModelStamp, stamp_problem

    out = tmp_path / "m"
    assert tiny_main([str(out), "--suite", "challenge300"]) == 0
    first = TinyModelStamp.model_validate_json((out / STAMP_FILE).read_text())
    assert tiny_main([str(out), "--suite", "challenge300", "--seed", "1"]) == 0
    second = TinyModelStamp.model_validate_json((out / STAMP_FILE).read_text())
    assert (first.seed, second.seed) == (0, 1) and stamp_problem(out) is None
    assert first.files["model.safetensors"] != second.files["model.safetensors"]
    assert first.files["tokenizer.json"] == second.files["tokenizer.json"]
    # a file put in by hand makes it a folder the command no longer owns
    (out / "notes.txt").write_text("notes\n")
    assert tiny_main([str(out), "--suite", "challenge300"]) == 2
    assert "notes.txt" in capsys.readouterr().err and stamp_problem(out) is None


def test_a_damaged_embedded_model_is_made_again(capsys):
    """F-L: a truncated model.safetensors in the cache was never remade, and the error advised a
    Hub id."""
    import os

    from nnd_suites.evaluation.tiny import EMBEDDED, EMBEDDED_FOLDER
    from nnd_suites.evaluation.tiny.stamp import STAMP_FILE, stamp_problem

    argv = ["evaluate", "--suite", "challenge300", "--model", EMBEDDED, "--limit", "3"]
    argv += ["--no-cache", "--json", "--quiet"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)["suites"]["challenge300"]
    # the test's own cache (conftest's autouse fixture)
    model = Path(os.environ["NND_SUITES_CACHE"]) / "models" / EMBEDDED_FOLDER
    weights = model / "model.safetensors"
    whole = weights.read_bytes()
    with open(weights, "r+b") as handle:
        handle.truncate(1000)
    assert "model.safetensors is not the file that was written" in stamp_problem(model)
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["suites"]["challenge300"] == first
    assert weights.read_bytes() == whole  # remade as it was (same texts, same seed)
    warning = " ".join(printed.err.split())
    assert f"{model}: model.safetensors is not the file that was written" in warning
    assert "the embedded model is made again" in warning
    # a model made before stamps (no tiny_model.json) is made again once, then reused
    (model / STAMP_FILE).unlink()
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)["suites"]["challenge300"]
    assert stamp_problem(model) is None and again == first
    assert [p.name for p in model.parent.iterdir()] == [EMBEDDED_FOLDER]  # nothing left beside


def test_the_tiny_model_command_defaults_to_the_built_in_suites(tmp_path, monkeypatch):
    """A ./quiz_design folder here neither stops the command's default nor feeds it texts."""
    from nnd_suites.evaluation.tiny import main as tiny_main
    from nnd_suites.evaluation.tiny.stamp import STAMP_FILE, TinyModelStamp, stamp_problem

    (tmp_path / "quiz_design").mkdir()
    monkeypatch.chdir(tmp_path)
    assert tiny_main(["m"]) == 0
    stamp = TinyModelStamp.model_validate_json((tmp_path / "m" / STAMP_FILE).read_text())
    assert stamp.suites == ["builtin:quiz_design", "builtin:challenge300"]
    assert stamp_problem(tmp_path / "m") is None
