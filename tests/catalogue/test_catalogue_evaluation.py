"""`evaluate --suite catalogue` and `evaluate --suite DIR` (a `build --catalogue` folder): a row
per suite grouped by task type, the bias baselines beside the model, the suites whose source is
not available listed with why; the leaderboard of several models grouped the same way."""

from __future__ import annotations

import json
import shutil

import pytest

from nnd_suites.catalogue.building import build_catalogue
from nnd_suites.catalogue.entries import load_catalogue
from nnd_suites.cli import main
from nnd_suites.errors import NNDError
from nnd_suites.evaluation import evaluate
from nnd_suites.evaluation.catalogue_suites import NOT_CATALOGUED, catalogue_selection
from nnd_suites.evaluation.multi import evaluate_models
from nnd_suites.evaluation.task_grouping import BASELINE_COLUMNS
from nnd_suites.infra.formatting import count, percent, rate_with_interval

LIMIT = ["--limit", "1", "--device", "cpu", "--batch-size", "16"]


def test_the_catalogue_evaluates_every_shipped_suite_by_task_type(
    tiny_causal_model, tmp_path, capsys
):
    out = tmp_path / "run"
    command = ["evaluate", "--model", str(tiny_causal_model), "--suite", "catalogue", *LIMIT]
    assert main([*command, "--out", str(out)]) == 0
    entries = load_catalogue()
    shipped = {e.name: e.task_type for e in entries if e.shipped}
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    grouping = report["by_task"]
    # every suite whose source ships has a row, under its catalogue task type, and no other
    assert set(report["suites"]) == set(shipped)
    assert {s: t for t, suites in grouping["task_types"].items() for s in suites} == shipped
    assert list(grouping["task_types"]) == sorted(set(shipped.values()))
    # the others are listed with where to get their source, never silently dropped
    skipped = grouping["skipped"]
    assert set(skipped) == {e.name for e in entries if not e.shipped}
    assert all("download" in s["reason"] and "--suite DIR" in s["reason"] for s in skipped.values())
    # the bias baselines sit beside the model, the report's own figures
    c300 = report["suites"]["challenge300"]
    markdown = (out / "report.md").read_text(encoding="utf-8")
    section = markdown[markdown.index("## By task type") :]
    line = next(line for line in section.splitlines() if "| challenge300 |" in line)
    cells = [cell.strip() for cell in line.strip("|").split("|")]
    overall = c300["overall"]
    assert cells[:5] == [
        "question answering",
        "challenge300",
        count(c300["pairs"]),
        count(overall["n"]),  # the tests the rate is over, as in the table of suites
        rate_with_interval(overall["pass_rate"], overall["ci"]),
    ]
    baselines = c300["baselines"]
    assert cells[5:] == [percent(baselines[b]["overall"]["pass_rate"]) for b in BASELINE_COLUMNS]
    assert "Skipped (" in section and "- summeval_experts (summarization): not shipped" in section
    assert (out / "pass_rates.png").stat().st_size > 0
    printed = capsys.readouterr().out
    assert "by task type (overall pass rate; baselines shorter / longer / overlap):" in printed
    assert "skipped summeval_experts (summarization): not shipped" in printed
    # each suite's line gives the n its rate is over, as the lines per suite and category do
    rate = rate_with_interval(overall["pass_rate"], overall["ci"])
    assert f"    challenge300           {rate}  n={count(overall['n'])}  baselines " in printed


def test_a_catalogue_folder_gives_a_leaderboard_by_task_type(
    tiny_causal_model, tmp_path, monkeypatch
):
    # a catalogue of three: two shipped suites built into a folder, one whose source is missing
    entries = [e for e in load_catalogue() if e.name in {"challenge300", "quiz_design"}]
    entries += [e for e in load_catalogue() if e.name == "summeval_experts"]
    folder = tmp_path / "catalogue"
    assert [b.suite is None for b in build_catalogue(entries, folder)] == [False, False, True]
    # quiz_design left the catalogue since the folder was built: still evaluated, under its own
    # heading, rather than dropped
    listed = [e for e in entries if e.name != "quiz_design"]
    monkeypatch.setattr("nnd_suites.evaluation.catalogue_suites.load_catalogue", lambda: listed)
    other = tmp_path / "other_model"  # a second model: the same weights under another name
    shutil.copytree(tiny_causal_model, other)
    models = ["--model", str(tiny_causal_model), "--model", str(other)]
    out = tmp_path / "board"
    assert main(["evaluate", *models, "--suite", str(folder), *LIMIT, "--out", str(out)]) == 0
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert board["by_task"]["task_types"] == {
        "question answering": ["challenge300"],
        NOT_CATALOGUED: ["quiz_design"],
    }
    reason = board["by_task"]["skipped"]["summeval_experts"]["reason"]
    assert reason.startswith(f"not built in {folder}: not shipped")
    markdown = (out / "leaderboard.md").read_text(encoding="utf-8")
    section = markdown[markdown.index("## By task type") : markdown.index("## challenge300")]
    # each row gives its n (the most tests a model rated), as each suite's own table does
    for task_type, suite in [
        ("question answering", "challenge300"),
        (NOT_CATALOGUED, "quiz_design"),
    ]:
        n = max(rate["n"] for rate in board["suites"][suite]["overall"].values())
        assert f"| {task_type} | {suite} | {count(n)} |" in section
    assert "- summeval_experts (summarization): not built in" in section
    assert (out / "leaderboard.png").stat().st_size > 0
    for model in board["models"]:  # each model's report carries the grouping too
        report = json.loads((out / model["label"] / "report.json").read_text(encoding="utf-8"))
        assert report["by_task"] == board["by_task"]


def test_the_catalogue_is_given_alone():
    with pytest.raises(NNDError, match=r"--suite catalogue evaluates every suite .* alone"):
        catalogue_selection(["catalogue", "quiz_design"])
    assert catalogue_selection(["quiz_design"]) is None


#: the catalogue the API tests read: two shipped suites and one whose source is not shipped
SMALL = {"challenge300", "quiz_design", "summeval_experts"}


@pytest.fixture
def small_catalogue(monkeypatch):
    entries = [e for e in load_catalogue() if e.name in SMALL]
    monkeypatch.setattr("nnd_suites.evaluation.catalogue_suites.load_catalogue", lambda: entries)
    return entries


def test_the_python_api_evaluates_the_catalogue_as_the_cli_does(
    small_catalogue, tiny_causal_model, tmp_path
):
    options = {"limit": 1, "device": "cpu", "batch_size": 16, "progress": False}
    api = evaluate(str(tiny_causal_model), "catalogue", out=tmp_path / "api", **options)
    assert api.by_task is not None and api.by_task.task_types == {
        "question answering": ["challenge300"],
        "question generation": ["quiz_design"],
    }
    assert set(api.by_task.skipped) == {"summeval_experts"}
    assert set(api.suites) == {"challenge300", "quiz_design"} == set(api.outcomes)
    # the report folder the API writes carries the grouping, as the CLI's does
    command = ["evaluate", "--model", str(tiny_causal_model), "--suite", "catalogue", *LIMIT]
    assert main([*command, "--out", str(tmp_path / "cli")]) == 0
    written = {
        run: json.loads((tmp_path / run / "report.json").read_text(encoding="utf-8"))
        for run in ("api", "cli")
    }
    assert written["api"]["by_task"] == written["cli"]["by_task"] == api.by_task.model_dump()
    assert written["api"]["suites"] == written["cli"]["suites"]
    assert "## By task type" in (tmp_path / "api" / "report.md").read_text(encoding="utf-8")


def test_the_python_api_evaluates_a_catalogue_folder_for_several_models(
    small_catalogue, tiny_causal_model, tmp_path
):
    folder = tmp_path / "catalogue"
    list(build_catalogue(small_catalogue, folder))
    options = {"limit": 1, "device": "cpu", "batch_size": 16, "progress": False}
    report = evaluate(str(tiny_causal_model), folder, **options)
    assert report.by_task is not None and report.by_task.source == str(folder)
    assert set(report.suites) == {"challenge300", "quiz_design"}
    other = tmp_path / "other_model"  # the same weights under another name
    shutil.copytree(tiny_causal_model, other)
    board = evaluate_models([str(tiny_causal_model), str(other)], str(folder), **options)
    assert board.by_task == report.by_task
    assert all(one.by_task == report.by_task for one in board.reports)


def test_all_is_every_built_in_suite_whatever_folder_of_that_name_is_here(
    quiz_design_suite, tmp_path, monkeypatch
):
    # a folder ./all holding a catalogue suite (what `build --all --out all` leaves) was read as
    # a catalogue folder, and `--suite all` scored its one suite instead of the built-ins, rc 0
    quiz_design_suite.derive(quiz_design_suite.pairs[:10]).save(tmp_path / "all" / "quiz_design")
    monkeypatch.chdir(tmp_path)
    assert catalogue_selection(["all"]) is None  # evaluated as `all`: every built-in suite
    assert catalogue_selection(["./all"]) is not None  # the folder, named as a path


def test_an_export_folder_lists_no_catalogue_suite_it_does_not_hold(quiz_design_suite, tmp_path):
    """`evaluate --suite FOLDER` of an export (or `build --all`) folder holding quiz_design
    printed every other catalogue suite as skipped (17 lines, exit 0) that nobody asked for:
    only a `build --catalogue` folder, which holds every shipped catalogue suite, lists what it
    lacks."""
    quiz_design_suite.save(tmp_path / "suite" / "quiz_design")
    folder = tmp_path / "exported"
    assert main(["export", str(tmp_path / "suite" / "quiz_design"), "--to", str(folder)]) == 0
    selection = catalogue_selection([str(folder)])
    assert selection is not None and selection.suites == [folder / "quiz_design"]
    assert selection.grouping.task_types == {"question generation": ["quiz_design"]}
    assert selection.grouping.skipped == {}
