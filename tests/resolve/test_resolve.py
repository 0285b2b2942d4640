"""The suite name resolver: ``all`` is expanded by the library, once, for the CLI and the API."""

from __future__ import annotations

import re

import pytest

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.errors import NNDError
from nnd_suites.resolve import expand_suite_specs, resolve_suites, shipped_suites


def test_all_is_every_adapter_with_a_shipped_source():
    shipped = shipped_suites()
    assert {"quiz_design", "challenge300", "wmt_mqm"} <= set(shipped)
    assert "summeval" not in shipped and "frank" not in shipped  # sources not shipped
    assert shipped == [n for n in ADAPTERS.names() if n in shipped]  # registry order
    assert expand_suite_specs(["all"]) == shipped  # the CLI passes `all` on to the library
    # given names keep their place; "all" adds the others once
    assert expand_suite_specs(["challenge300", "all"]) == [
        "challenge300",
        *[n for n in shipped if n != "challenge300"],
    ]


def test_a_limit_is_a_number_of_context_groups_or_a_fraction_of_them(quiz_design_suite):
    import pytest

    from nnd_suites.cli.options import group_limit
    from nnd_suites.errors import NNDError
    from nnd_suites.evaluation.prepared import first_groups
    from nnd_suites.evaluation.report_markdown import kept_groups

    groups = list(dict.fromkeys(p.group_id for p in quiz_design_suite.pairs))
    tenth = first_groups(quiz_design_suite, 0.1)
    kept = list(dict.fromkeys(p.group_id for p in tenth.pairs))
    assert kept == groups[: round(0.1 * len(groups))]  # the first 10% of the groups, whole
    assert len(first_groups(quiz_design_suite, 3).pairs) == sum(
        p.group_id in groups[:3] for p in quiz_design_suite.pairs
    )
    assert first_groups(quiz_design_suite, 0.0001).pairs  # at least one group
    assert group_limit("0.25") == 0.25 and group_limit("7") == 7
    for bad in ("0", "1.5", "-0.5", "x"):
        with pytest.raises(Exception):  # noqa: B017 - argparse turns it into a usage error
            group_limit(bad)
    with pytest.raises(NNDError, match="fraction in \\(0, 1\\)"):
        first_groups(quiz_design_suite, 1.5)
    assert group_limit("2.0") == 2  # a whole number written with a point is that many groups
    assert kept_groups(0.001) == "the first 0.1% of the context groups with tests"  # not "0%"


def test_arguments_that_are_not_utf8_are_named_not_a_traceback(tmp_path):
    """Bytes that are not UTF-8 in an argument or a file name (as Python receives them from a
    shell: surrogate-escaped) end in a named error that can be printed."""
    import subprocess
    import sys

    for argv in (
        [b"build", b"qu\xffiz", b"--out", str(tmp_path / "x").encode()],
        [b"stats", str(tmp_path).encode() + b"/no\xffsuch"],
    ):
        done = subprocess.run(
            [sys.executable.encode(), b"-m", b"nnd_suites", *argv],
            capture_output=True,
            timeout=300,
        )
        assert done.returncode in (2, 6), done.stderr
        assert b"Traceback" not in done.stderr and b"\\udcff" in done.stderr
    assert not (tmp_path / "x").exists()


def test_an_empty_spec_a_manifest_or_a_file_is_named_for_what_it_is(tmp_path, monkeypatch):
    # "" was the current folder (listed as an export folder); a manifest was "no such folder"
    from nnd_suites.errors import NNDError
    from nnd_suites.resolve import load_suite

    monkeypatch.chdir(tmp_path)
    (tmp_path / "qd").mkdir()
    (tmp_path / "qd" / "manifest.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    for spec, message in [
        ("", "an empty suite name"),
        ("qd/manifest.json", "a suite's manifest; name its folder, qd"),
        ("notes.txt", "notes.txt: not a folder"),
    ]:
        with pytest.raises(NNDError, match=message):
            load_suite(spec)


def test_what_is_not_a_suite_is_named_not_a_type_error(challenge300_suite):
    # evaluate(model, None), evaluate(model, 3) and [suite, None] were TypeErrors from list()
    # or Path() deep inside the evaluator
    from nnd_suites.errors import ArgumentError
    from nnd_suites.evaluation.catalogue_suites import catalogue_suites
    from nnd_suites.evaluation.prepared import prepare_suites
    from nnd_suites.resolve import resolve_suites

    for given, named in [
        (None, "None (NoneType)"),
        (3, "3 (int)"),
        ([challenge300_suite, None], "None (NoneType)"),
    ]:
        for function in (resolve_suites, catalogue_suites, prepare_suites):
            with pytest.raises(
                ArgumentError, match=re.escape(f"suites: {named} is not a suite; give")
            ):
                function(given)


def test_a_suite_object_that_would_give_wrong_figures_is_refused(challenge300_suite):
    # evaluate() scored a Suite object holding no pair (a report with no figure), a pair twice
    # (counted twice in every rate) or a context its template lacks (a KeyError inside)
    from nnd_suites.errors import SuiteValidationError
    from nnd_suites.evaluation import evaluate
    from nnd_suites.evaluation.baselines import baselines
    from nnd_suites.resolve import resolve_suites
    from nnd_suites.suite import Suite

    suite = challenge300_suite
    first, second = suite.pairs[:2]
    foreign = second.model_copy(update={"context": {"prompt": "x"}})
    for pairs, problem in [
        ([], "it holds no pair"),
        ([first, first, second], f"1 duplicate pair id\\(s\\), e.g. \\['{first.id}'\\]"),
        ([first, foreign], f"pair {second.id}: context fields \\['prompt'\\] != manifest"),
    ]:
        edited = Suite(suite.manifest, pairs, suite.candidates)
        message = f"suite 'challenge300' \\(a Suite object in memory\\) is invalid: {problem}"
        for call in (resolve_suites, baselines, lambda s: evaluate("unused", s)):
            with pytest.raises(SuiteValidationError, match=message):
                call(edited)
    kept = Suite(suite.manifest, [first, second], suite.candidates)  # a part is a suite still
    assert resolve_suites(kept)[0].pairs == [first, second]


def test_a_dataset_folder_whose_card_lists_a_deleted_config_is_refused(
    quiz_design_suite, challenge300_suite, tmp_path, capsys
):
    """`evaluate --suite DIR` scored only the configs whose folders were still there (exit 0,
    figures for a part of the dataset) when its card listed one whose folder was deleted,
    which validate flags. It now stops, naming the config, the card and what to do, for a
    catalogue folder (evaluated by task type) as for any other."""
    import shutil

    from nnd_suites.cli import main
    from nnd_suites.hub import export_suites

    folder = tmp_path / "ds"
    export_suites([quiz_design_suite, challenge300_suite], folder)
    shutil.rmtree(folder / "challenge300")
    argv = ["evaluate", "--suite", str(folder), "--model", "nnd-suites:tiny-random"]
    status = main([*argv, "--limit", "1", "--no-cache", "--device", "cpu", "--quiet"])
    assert status == NNDError.exit_status
    err = capsys.readouterr().err
    assert f"{folder / 'README.md'}: the card lists config 'challenge300'" in err
    assert f"whose folder {folder / 'challenge300'} is gone" in err
    assert f"`nnd-suites export {folder / 'quiz_design'} --to {folder}`" in err
    with pytest.raises(NNDError, match="the card lists config 'challenge300'"):
        resolve_suites(folder)  # as any command that takes several suites reads the folder
    assert [s.name for s in resolve_suites(folder / "quiz_design")] == ["quiz_design"]
