"""A folder ``./quiz_design`` in the current directory silently shadowed the
built-in suite in ``--suite quiz_design``. A bare name that is both a built-in suite and a folder
here is now an AmbiguousSuiteError; ``./quiz_design`` (any spec with a separator) names the folder,
``builtin:quiz_design`` the built-in suite, and ``all`` always means the built-in suites."""

from __future__ import annotations

from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.cli import main
from nnd_suites.errors import AmbiguousSuiteError, NNDError, UnknownItemError
from nnd_suites.resolve import load_suite, resolve_suites, shipped_suites


@pytest.fixture
def shadowing_folder(tmp_path, monkeypatch):
    """The current directory holds ./quiz_design: Challenge 300 built under Quiz Design's name."""
    monkeypatch.chdir(tmp_path)
    build_suite("challenge300", out=tmp_path / "quiz_design", name="quiz_design")
    return tmp_path / "quiz_design"


def test_a_bare_name_that_is_also_a_folder_here_is_refused(shadowing_folder):
    with pytest.raises(AmbiguousSuiteError) as caught:
        load_suite("quiz_design")
    message = str(caught.value)
    assert str(shadowing_folder) in message
    assert "./quiz_design" in message and "builtin:quiz_design" in message


@pytest.mark.parametrize("spec", ["./quiz_design", "quiz_design/", "QUIZ"])
def test_a_path_names_the_folder(shadowing_folder, spec):
    suite = load_suite(shadowing_folder if spec == "QUIZ" else spec)  # a Path object is a path
    assert (suite.name, suite.manifest.adapter.name, len(suite.pairs)) == (
        "quiz_design",
        "challenge300",
        807,
    )


def test_builtin_names_the_built_in_suite(shadowing_folder):
    suite = load_suite("builtin:quiz_design")
    assert (suite.manifest.adapter.name, len(suite.pairs)) == ("quiz_design", 2686)
    with pytest.raises(
        UnknownItemError, match="unknown built-in suite 'quiz_desing'; did you mean"
    ):
        load_suite("builtin:quiz_desing")
    with pytest.raises(NNDError, match="takes no config name or revision"):
        load_suite("builtin:quiz_design", revision="v1")


def test_all_means_the_built_in_suites_whatever_the_folder(shadowing_folder):
    suites = resolve_suites(["all"])
    assert [s.manifest.adapter.name for s in suites] == shipped_suites()
    assert len(next(s for s in suites if s.name == "quiz_design").pairs) == 2686
    with pytest.raises(AmbiguousSuiteError):  # named on its own, it is still ambiguous
        resolve_suites(["quiz_design", "all"])


def test_any_folder_named_like_a_built_in_is_ambiguous_and_other_names_are_paths(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    Path("hh_rlhf").mkdir()  # not even a suite: the user may have meant it
    with pytest.raises(AmbiguousSuiteError, match="builtin:hh_rlhf"):
        load_suite("hh_rlhf")
    build_suite("challenge300", out=tmp_path / "mine")
    assert load_suite("mine").name == "challenge300"  # a bare name that is no built-in
    assert load_suite("challenge300").manifest.adapter.name == "challenge300"  # no folder: built-in


def test_the_commands_exit_2_and_say_how_to_name_each(shadowing_folder, capsys):
    assert main(["systems", "quiz_design"]) == AmbiguousSuiteError.exit_status == 2
    err = capsys.readouterr().err
    assert "is ambiguous" in err and "builtin:quiz_design" in err
    assert main(["stats", "builtin:quiz_design", "--json"]) == 0
    assert '"pairs": 2686' in capsys.readouterr().out
    assert main(["stats", "./quiz_design", "--json"]) == 0
    assert '"pairs": 807' in capsys.readouterr().out
    # validate reads a folder itself: the bare name is refused there too, a path is the folder
    assert main(["validate", "quiz_design"]) == 2
    assert "is ambiguous" in capsys.readouterr().err
    assert main(["validate", "./quiz_design"]) == 0
    assert "807 pairs" in capsys.readouterr().out


def test_the_readme_flow_a_suites_folder_and_its_subfolders(tmp_path, monkeypatch):
    """`build ... --out suites/NAME` then `--suite suites/NAME`: a path; the bare name (no folder
    of that name here) stays the built-in suite."""
    monkeypatch.chdir(tmp_path)
    assert main(["build", "challenge300", "--name", "c300", "--out", "suites/quiz_design"]) == 0
    assert load_suite("suites/quiz_design").manifest.adapter.name == "challenge300"
    assert load_suite("quiz_design").manifest.adapter.name == "quiz_design"


def test_the_embedded_model_is_made_from_the_built_in_suites(
    shadowing_folder, tmp_path, monkeypatch
):
    """`--model nnd-suites:tiny-random` makes its model from the shipped texts on first use; a
    ./quiz_design folder here neither stops it nor feeds it its texts: its tokenizer is the one
    made in a folder holding nothing."""
    from nnd_suites.evaluation.tiny import embedded_model

    shadowed = embedded_model(tmp_path / "cache")
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    clean = embedded_model(tmp_path / "cache2")
    tokenizer = (shadowed / "tokenizer.json").read_text("utf-8")
    assert tokenizer == (clean / "tokenizer.json").read_text("utf-8")
