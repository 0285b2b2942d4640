"""`evaluate --suite DIR` of a dataset folder holding a catalogue suite: the report's task
grouping names each suite as the report does (its suite's own name, NAME_2 for a second suite of
one name, a normalised suite's new name), whatever folder holds it. The grouping was keyed by
folder name, the report by suite name: a folder named otherwise (the README's `transform
quiz_design --out suites/qd-typos` beside `build --all --out suites`) crashed the console
summary, report.md and the leaderboard with KeyError after every suite was scored."""

from __future__ import annotations

import json
import shutil

import pytest

from nnd_suites.cli import main
from nnd_suites.evaluation import evaluate
from nnd_suites.evaluation.catalogue_suites import NOT_CATALOGUED, catalogue_selection
from nnd_suites.evaluation.multi import evaluate_models
from nnd_suites.transformations.apply import transform_suite

OPTIONS = {"limit": 1, "device": "cpu", "batch_size": 16, "progress": False}
LIMIT = ["--limit", "1", "--device", "cpu", "--batch-size", "16"]
LOWERED = "challenge300.lowercase"


@pytest.fixture
def folder_with_a_renamed_suite(challenge300_suite, tmp_path):
    """challenge300 in its own folder, its lowercase child in a folder named otherwise (what
    `transform challenge300 --transform lowercase --out S/c300-lower` writes)."""
    folder = tmp_path / "S"
    challenge300_suite.save(folder / "challenge300")
    transform_suite(challenge300_suite, "lowercase").save(folder / "c300-lower")
    return folder


def _task_of(grouping: dict) -> dict[str, str]:
    return {suite: task for task, suites in grouping["task_types"].items() for suite in suites}


def test_a_suite_folder_named_otherwise_is_reported_under_its_suite_name(
    folder_with_a_renamed_suite, tiny_causal_model, tmp_path, capsys
):
    out = tmp_path / "run"
    command = ["evaluate", "--model", str(tiny_causal_model), "--suite"]
    assert main([*command, str(folder_with_a_renamed_suite), *LIMIT, "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert set(report["suites"]) == {"challenge300", LOWERED}
    assert report["suites"][LOWERED]["given_as"] == str(folder_with_a_renamed_suite / "c300-lower")
    assert _task_of(report["by_task"]) == {
        "challenge300": "question answering",
        LOWERED: NOT_CATALOGUED,
    }
    section = (out / "report.md").read_text(encoding="utf-8").split("## By task type")[1]
    assert f"| {NOT_CATALOGUED} | {LOWERED} |" in section
    printed = capsys.readouterr().out
    by_task = printed[printed.index("by task type") :]
    assert f"  {NOT_CATALOGUED}\n    {LOWERED}" in by_task


def test_the_leaderboard_of_such_a_folder_names_its_suites_as_each_report(
    folder_with_a_renamed_suite, tiny_causal_model, tmp_path
):
    other = tmp_path / "other_model"  # the same weights under another name
    shutil.copytree(tiny_causal_model, other)
    models = ["--model", str(tiny_causal_model), "--model", str(other)]
    out = tmp_path / "board"
    suite = ["--suite", str(folder_with_a_renamed_suite)]
    assert main(["evaluate", *models, *suite, *LIMIT, "--out", str(out)]) == 0
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert set(_task_of(board["by_task"])) == set(board["suites"]) == {"challenge300", LOWERED}
    section = (out / "leaderboard.md").read_text(encoding="utf-8").split("## By task type")[1]
    assert f"| {NOT_CATALOGUED} | {LOWERED} |" in section
    api = evaluate_models([tiny_causal_model, other], folder_with_a_renamed_suite, **OPTIONS)
    assert api.by_task is not None and api.by_task.suites() == ["challenge300", LOWERED]
    assert all(list(report.suites) == api.by_task.suites() for report in api.reports)


def test_the_api_groups_the_suites_under_the_names_of_its_report(
    folder_with_a_renamed_suite, challenge300_suite, tiny_causal_model, tmp_path
):
    report = evaluate(str(tiny_causal_model), folder_with_a_renamed_suite, **OPTIONS)
    assert report.by_task is not None
    assert report.by_task.suites() == ["challenge300", LOWERED] == list(report.suites)
    # a normalised suite is reported under its new name, and grouped under it
    alone = tmp_path / "alone"
    challenge300_suite.save(alone / "challenge300")
    normalized = evaluate(str(tiny_causal_model), alone, normalize=["lowercase"], **OPTIONS)
    assert normalized.by_task is not None
    assert normalized.by_task.task_types == {"question answering": [LOWERED]}
    assert list(normalized.suites) == [LOWERED]


def test_two_folders_holding_suites_of_one_name_are_grouped_as_reported(
    challenge300_suite, tiny_causal_model, tmp_path
):
    """The report names the second suite of one name NAME_2; the folder named after its suite
    keeps the plain name."""
    folder = tmp_path / "S"
    challenge300_suite.save(folder / "challenge300")
    challenge300_suite.derive(challenge300_suite.pairs[:100]).save(folder / "c300-part")
    report = evaluate(str(tiny_causal_model), folder, **OPTIONS)
    assert report.by_task is not None
    assert report.by_task.task_types == {"question answering": ["challenge300", "challenge300_2"]}
    assert report.suites["challenge300"].given_as == str(folder / "challenge300")
    assert report.suites["challenge300_2"].given_as == str(folder / "c300-part")


def test_a_folder_is_grouped_by_the_suite_it_holds_not_by_its_name(
    challenge300_suite, quiz_design_suite, tmp_path
):
    """A folder named after one catalogue suite holding another went under the task type of
    the name; a catalogue suite in a folder named otherwise went under 'not in the catalogue'."""
    folder = tmp_path / "S"
    challenge300_suite.save(folder / "quiz_design")
    quiz_design_suite.save(folder / "qd")
    selection = catalogue_selection([str(folder)])
    assert selection is not None
    assert selection.grouping.task_types == {
        "question answering": ["challenge300"],
        "question generation": ["quiz_design"],
    }
    assert selection.suites == [folder / "quiz_design", folder / "qd"]
