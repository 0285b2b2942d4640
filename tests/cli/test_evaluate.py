"""nnd-suites evaluate: one JSON object on stdout, files with --out, errors exit 2."""

from __future__ import annotations

import json
import shutil

import pytest

from nnd_suites import load_suite
from nnd_suites.cli import build_parser, main
from nnd_suites.errors import ModelLoadError, NNDError, UnknownItemError


def test_json_output_is_one_object(tiny_causal_model, tmp_path, capsys):
    suite_dir = tmp_path / "c300"
    assert main(["build", "challenge300", "--out", str(suite_dir)]) == 0
    capsys.readouterr()
    options = ["--model", str(tiny_causal_model), "--json", "--batch-size", "16"]
    run = tmp_path / "run"
    # the same tests from a folder and from the adapter name: one suite given twice, refused
    # before any scoring (it was reported twice, once as challenge300_2)
    both = ["--suite", str(suite_dir), "--suite", "challenge300"]
    assert main(["evaluate", *both, *options, "--out", str(run)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not run.exists()
    assert (
        f"suite 'challenge300' is given twice: suites 1 ({suite_dir.resolve()}) and 2 "
        "(builtin:challenge300)"
    ) in " ".join(captured.err.split())
    assert "give each suite once" in captured.err
    code = main(["evaluate", "--suite", str(suite_dir), *options, "--out", str(run)])
    captured = capsys.readouterr()
    assert code == 0
    summary = json.loads(captured.out)  # exactly one JSON document
    assert set(summary["suites"]) == {"challenge300"}
    result = summary["suites"]["challenge300"]
    overall = result["overall"]
    assert result["pairs"] == 807 and 0 <= overall["pass_rate"] <= 1
    assert overall["passed"] + overall["ties"] <= result["pairs"]
    for rate in result["by_category"].values():
        assert {"n", "pass_rate", "ci"} <= set(rate)
    assert summary["requests"]["scored"] == 772
    assert (run / "report.json").is_file()
    assert (run / "outcomes" / "challenge300.parquet").is_file()


def test_text_output_and_compat(tiny_seq2seq_model, capsys):
    code = main(
        [
            "evaluate",
            "--suite",
            "challenge300",
            "--model",
            str(tiny_seq2seq_model),
            "--compat",
            "reference",
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "hf_seq2seq, reference scoring" in out and "Common Sense" in out


def test_errors_exit_with_their_status_and_a_message(tiny_causal_model, tmp_path, capsys):
    assert (
        main(["evaluate", "--suite", "nope", "--model", str(tiny_causal_model)])
        == UnknownItemError.exit_status
    )
    assert "nnd-suites evaluate: error: unknown suite 'nope'" in capsys.readouterr().err
    assert (
        main(["evaluate", "--suite", "challenge300", "--model", str(tmp_path)])
        == ModelLoadError.exit_status
    )
    assert f"cannot load model '{tmp_path}'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # a usage error while parsing, nothing loaded
        model = str(tiny_causal_model)
        main(["evaluate", "--suite", "challenge300", "--model", model, "--batch-size", "many"])
    assert refused.value.code == 2
    assert "--batch-size/--batch_size: 'many' is not an integer" in capsys.readouterr().err


def test_backends_are_listed(capsys):
    assert main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"hf_causal", "hf_seq2seq"} <= set(listed["backends"])


def test_the_models_the_tool_makes_itself_are_listed(tmp_path, monkeypatch, capsys):
    from nnd_suites.evaluation import tiny

    assert main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["built_in_models"]
    assert list(listed) == [tiny.EMBEDDED] and "random weights" in listed[tiny.EMBEDDED]
    assert main(["list"]) == 0
    assert f"built in models:\n  {tiny.EMBEDDED} " in capsys.readouterr().out
    # every listed name is one `--model` resolves to a model made here, nothing downloaded
    monkeypatch.setattr(tiny, "embedded_model", lambda: tmp_path / tiny.EMBEDDED_FOLDER)
    assert tiny.resolve_embedded(list(listed)) == ([str(tmp_path / tiny.EMBEDDED_FOLDER)], True)


def test_tiny_model_command_makes_an_offline_model(tmp_path, capsys):
    from nnd_suites.evaluation.tiny import main as tiny_main

    assert tiny_main([str(tmp_path / "m"), "--suite", "challenge300", "--seq2seq"]) == 0
    assert (
        main(
            [
                "evaluate",
                "--suite",
                "challenge300",
                "--model",
                str(tmp_path / "m"),
                "--json",
                "--quiet",
                "--no-cache",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["backend"]["backend"] == "hf_seq2seq"


def test_a_model_the_tiny_command_wrote_is_reported_as_a_pipeline_check(tmp_path, capsys):
    """Random weights written by `python -m nnd_suites.evaluation.tiny OUT` were reported as a
    real model's: no PIPELINE CHECK note (only nnd-suites:tiny-random's name carried one)."""
    from nnd_suites.evaluation.tiny import main as tiny_main

    assert tiny_main([str(tmp_path / "m"), "--suite", "challenge300"]) == 0
    argv = ["evaluate", "--suite", "challenge300", "--model", str(tmp_path / "m"), "--limit", "3"]
    assert main([*argv, "--no-cache", "--out", str(tmp_path / "run")]) == 0
    printed = capsys.readouterr()
    assert "PIPELINE CHECK" in printed.out and "PIPELINE CHECK" not in printed.err
    assert "PIPELINE CHECK" in (tmp_path / "run" / "report.md").read_text().split("## ")[0]


def test_a_pipeline_check_is_said_once_a_run(tmp_path, capsys):
    """evaluate said it on stderr before the scoring and again on stdout above the figures, and
    robustness on stderr and again in its table: twice in a terminal. It is said once: on
    stdout with the figures, on stderr beside a --json summary."""
    from nnd_suites.evaluation.tiny import main as tiny_main

    assert tiny_main([str(tmp_path / "m"), "--suite", "challenge300"]) == 0
    shutil.copytree(tmp_path / "m", tmp_path / "m2")
    common = ["--suite", "challenge300", "--limit", "2", "--no-cache"]
    runs = {
        "evaluate": (["evaluate", "--model", str(tmp_path / "m")], "out"),
        "evaluate --json": (["evaluate", "--model", str(tmp_path / "m"), "--json"], "err"),
        "two models": (
            ["evaluate", "--model", str(tmp_path / "m"), "--model", str(tmp_path / "m2")],
            "out",
        ),
        "robustness": (
            ["robustness", "--model", str(tmp_path / "m"), "--transform", "lowercase"],
            "out",
        ),
        "robustness --json": (
            ["robustness", "--model", str(tmp_path / "m"), "--transform", "lowercase", "--json"],
            "err",
        ),
    }
    for name, (argv, stream) in runs.items():
        assert main([*argv, *common]) == 0, name
        printed = capsys.readouterr()
        said = {
            "out": printed.out.count("PIPELINE CHECK"),
            "err": printed.err.count("PIPELINE CHECK"),
        }
        assert said == {"out": 0, "err": 0, stream: 1}, name


def test_a_saved_run_of_random_weights_says_so_with_its_model_gone(tmp_path, capsys):
    """The PIPELINE CHECK note was worked out from the model's folder each time a run was shown:
    with the tiny command's model deleted (or the run copied to another machine), report.md made
    again, slices --run and compare gave a random model's figures as a real model's. The report
    records random_weights, and every view of a saved run takes the note from it."""
    from nnd_suites import build_suite
    from nnd_suites.builder.adapter import ADAPTERS
    from nnd_suites.evaluation.report_markdown import markdown
    from nnd_suites.evaluation.saved import load_report
    from nnd_suites.evaluation.tiny import main as tiny_main

    sample = ADAPTERS.get("challenge300").default_source_path().parents[1] / "fixtures"
    built = build_suite("challenge300", source=sample / "challenge300_sample.tsv")  # 40 tests
    suite = built.save(tmp_path / "suite")
    assert tiny_main([str(tmp_path / "m"), "--suite", str(suite)]) == 0
    argv = ["evaluate", "--suite", str(suite), "--model", str(tmp_path / "m"), "--no-cache"]
    for run in ("a", "b"):
        assert main([*argv, "--quiet", "--out", str(tmp_path / run)]) == 0
    shutil.rmtree(tmp_path / "m")
    capsys.readouterr()
    report = load_report(tmp_path / "a")
    assert "PIPELINE CHECK" in markdown(report).split("## ")[0]
    assert main(["slices", str(suite), "--run", str(tmp_path / "a")]) == 0
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    printed = capsys.readouterr().out
    assert printed.count("PIPELINE CHECK") == 2
    assert printed.index("PIPELINE CHECK") < printed.index("slices of")
    # a report written before the record: its model's name and folder decide, as they did then
    written = json.loads((tmp_path / "a" / "report.json").read_text("utf-8"))
    assert written["random_weights"] is True
    del written["random_weights"]
    older = type(report).model_validate(written)
    assert older.random_weights is None and "PIPELINE CHECK" not in markdown(older)


def test_limit_scores_the_first_groups_only(tiny_causal_model, tmp_path, capsys):
    argv = ["evaluate", "--suite", "challenge300", "--model", str(tiny_causal_model)]
    assert main([*argv, "--limit", "7", "--json", "--quiet", "--no-cache"]) == 0
    summary = json.loads(capsys.readouterr().out)
    pairs = summary["suites"]["challenge300"]["pairs"]
    # where the suite came from, though no other suite shares its name (was null)
    assert summary["suites"]["challenge300"]["given_as"] == "builtin:challenge300"
    suite = load_suite("challenge300")
    first = list(dict.fromkeys(p.group_id for p in suite.pairs))[:7]
    assert pairs == sum(p.group_id in first for p in suite.pairs) and 0 < pairs < len(suite)
    with pytest.raises(SystemExit) as refused:  # a usage error while parsing
        main([*argv, "--limit", "0"])
    assert refused.value.code == 2 and "--limit: 0 is below 1" in capsys.readouterr().err


def test_out_is_checked_before_scoring_and_replaced_whole(tiny_causal_model, tmp_path, capsys):
    stray = tmp_path / "notes"
    stray.mkdir()
    (stray / "mine.txt").write_text("keep me")
    argv = ["evaluate", "--suite", "challenge300", "--model", "no/such-model", "--quiet"]
    # refused before the model is even looked up
    assert main([*argv, "--out", str(stray)]) == NNDError.exit_status
    assert "not an evaluation report written by nnd-suites" in capsys.readouterr().err
    assert (stray / "mine.txt").read_text() == "keep me"
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main([*argv, "--out", str(blocker / "run")]) == NNDError.exit_status
    assert "cannot write there" in capsys.readouterr().err
    out = tmp_path / "run"
    base = ["evaluate", "--model", str(tiny_causal_model), "--quiet", "--limit", "3"]
    assert (
        main([*base, "--suite", "challenge300", "--suite", "quiz_design", "--out", str(out)]) == 0
    )
    assert (out / "outcomes" / "quiz_design.parquet").is_file()
    assert main([*base, "--suite", "challenge300", "--out", str(out)]) == 0
    # the second run's folder holds its own files only: no stale quiz_design outcomes
    assert sorted(p.name for p in (out / "outcomes").iterdir()) == ["challenge300.parquet"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_suite_all_is_every_shipped_suite_expanded_by_the_library_alone():
    from nnd_suites.cli import options
    from nnd_suites.resolve import expand_suite_specs

    shipped = [
        "challenge300",
        "gpt3_summ",
        "hh_rlhf",
        "quiz_design",
        "sfhot",
        "sfres",
        "topical_chat_usr",
        "wmt23_sxs_ende",
        "wmt23_sxs_zhen",
        "wmt_mqm",
    ]
    assert expand_suite_specs(["all"]) == shipped
    rest = [name for name in shipped if name != "quiz_design"]
    assert expand_suite_specs(["quiz_design", "all"]) == ["quiz_design", *rest]
    assert not hasattr(options, "expand_suite_specs")  # the CLI passes `all` on as it is


def test_all_names_the_built_in_suites_it_leaves_out_and_why(
    tiny_causal_model, tmp_path, capsys, quiz_design_suite, challenge300_suite
):
    """`--suite all` scored 10 of the 18 adapters `list` shows and named neither the 8 others nor
    why: console, report.md, report.json and leaderboard.md now do."""
    from nnd_suites.builder.adapter import ADAPTERS
    from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm

    common = ["evaluate", "--suite", "all", "--limit", "1", "--cache-dir", str(tmp_path / "c")]
    out = tmp_path / "one"
    assert main([*common, "--model", str(tiny_causal_model), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "report.json").read_text("utf-8"))
    left_out = [name for name in ADAPTERS.names() if name not in report["suites"]]
    assert len(left_out) == 8 and report["left_out_of_all"] == left_out
    for name in left_out:  # why: no source ships beside the adapter
        assert ADAPTERS.get(name).default_source_path() is None
    line = next(x for x in printed.splitlines() if x.startswith("`all` left out "))
    assert line.startswith(
        f"`all` left out 8 built-in suites whose annotation source is not "
        f"shipped: {', '.join(left_out)} (build one with `nnd-suites build"
    )
    assert line in (out / "report.md").read_text("utf-8")
    other = tiny_causal_lm(
        tmp_path / "other", suite_texts([quiz_design_suite, challenge300_suite]), seed=5
    )
    board = tmp_path / "board"
    models = ["--model", str(tiny_causal_model), "--model", str(other)]
    assert main([*common, *models, "--out", str(board), "--quiet"]) == 0
    assert line in (board / "leaderboard.md").read_text("utf-8")


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_list_into_a_closed_pipe_is_quiet(buffered):
    """`nnd-suites list | head`: the reader is gone before we write (deterministic EPIPE).
    Buffered or not (PYTHONUNBUFFERED was inherited from whoever ran the tests, so the test
    used to pass in one shell and fail in another): the last flush happens inside main."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    code = "from nnd_suites.cli import main; raise SystemExit(main(['list']))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", code], stdout=write_end, stderr=subprocess.PIPE, text=True, env=env
    )
    os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 141


def test_log_level_and_verbosity(capsys):
    import logging

    ours = logging.getLogger("nnd_suites")
    assert main(["--log-level", "debug", "list"]) == 0
    assert ours.level == logging.DEBUG
    assert main(["-v", "list"]) == 0
    assert ours.level == logging.INFO
    assert main(["list"]) == 0
    assert ours.level == logging.WARNING
    # -v is about nnd-suites' lines: other libraries (transformers, datasets, ...) stay at warnings
    assert main(["-vv", "list"]) == 0
    assert logging.getLogger().level == logging.WARNING
    assert logging.getLogger("nnd_suites.evaluation.evaluate").getEffectiveLevel() == logging.DEBUG
    assert main(["list"]) == 0  # back to the default for the tests after this one


def test_every_command_help_reads_clean():
    """argparse %-formats argument help but not descriptions: a '%%' there shows as written."""
    commands = build_parser().commands
    assert len(commands) >= 17
    for name, sub in commands.items():
        text = sub.format_help()
        assert "%%" not in text and "%(" not in text, name
        assert sub.description, f"{name} has no description"


def test_the_model_help_names_every_kind_of_model_it_takes():
    """--model's help named a Hub id or a local folder only: not the README's default
    (nnd-suites:tiny-random, made on the spot) nor a .gguf file, which --model also takes."""
    for name in ("evaluate", "robustness"):
        text = " ".join(build_parser().commands[name].format_help().split())
        assert "or nnd-suites:tiny-random (random weights, nothing downloaded" in text, name
        assert "a local model folder or .gguf file" in text, name


def test_validate_help_names_the_export_folders_it_checks():
    """validate's help named suites only, though the README's `validate out/nnd` checks an
    export folder (each config and its card)."""
    text = " ".join(build_parser().commands["validate"].format_help().split())
    assert "hub:ORG/NAME/CONFIG; or an export folder" in text
    assert "each config and the card's data_files, Features and row counts" in text


def test_schema_help_names_every_schema_it_writes(tmp_path):
    """schema's help said 'suite files'; it writes the quality map's and every report's too."""
    text = " ".join(build_parser().commands["schema"].format_help().split())
    assert "Write the JSON Schemas of suite files, quality maps, source.yaml and reports." in text
    assert main(["schema", "--out", str(tmp_path)]) == 0
    written = {p.name for p in tmp_path.iterdir()}
    assert {
        "quality_map.schema.json",
        "verify.schema.json",
        "declarative_source.schema.json",
    } <= written


def test_data_parallel_is_refused_where_it_cannot_help(tmp_path, capsys):
    served = ["evaluate", "--suite", "challenge300", "--model", "m", "--base-url"]
    assert main([*served, "http://127.0.0.1:9/v1", "--data-parallel", "2"]) == NNDError.exit_status
    assert "sharded by its engine, so send it more requests at once with --concurrency N" in (
        capsys.readouterr().err
    )
    verify = ["verify", "quiz_design", "--system", "mixqg=a", "--system", "dgpt2_sup=b"]
    with pytest.raises(SystemExit) as refused:  # a usage error while parsing
        main([*verify, "--out", str(tmp_path / "v"), "--data-parallel", "0"])
    assert refused.value.code == 2
    assert "--data-parallel: 0 is below 1" in capsys.readouterr().err


def test_a_suite_renamed_for_a_shared_name_says_where_it_came_from(
    tiny_causal_model, tmp_path, capsys
):
    """Two different suites named quiz_design (the built-in one and a build of part of its
    source): report.md called the second quiz_design_2 and said nothing of which it was."""
    from nnd_suites.builder.adapter import ADAPTERS

    source = ADAPTERS.get("quiz_design").default_source_path()
    part = tmp_path / "part.jsonl"
    part.write_text("".join(source.read_text(encoding="utf-8").splitlines(True)[:60]))
    folder = tmp_path / "qd_part"
    assert main(["build", "quiz_design", "--source", str(part), "--out", str(folder)]) == 0
    run = tmp_path / "run"
    suites = ["--suite", "quiz_design", "--suite", str(folder)]
    argv = ["evaluate", *suites, "--model", str(tiny_causal_model), "--limit", "2"]
    assert main([*argv, "--quiet", "--out", str(run)]) == 0
    capsys.readouterr()
    saved = json.loads((run / "report.json").read_text())["suites"]
    first, second = saved["quiz_design"], saved["quiz_design_2"]
    assert first["content_hash"] != second["content_hash"]
    assert (first["suite_name"], first["given_as"]) == ("quiz_design", "builtin:quiz_design")
    assert (second["suite_name"], second["given_as"]) == ("quiz_design", str(folder.resolve()))
    text = (run / "report.md").read_text()
    shared = "This run holds 2 different suites named `quiz_design`: `quiz_design`, `quiz_design_2`"
    for name, given, result in (
        ("quiz_design", "builtin:quiz_design", first),
        ("quiz_design_2", str(folder.resolve()), second),
    ):
        section = text.split(f"\n## {name}\n")[1].split("\n## ")[0]
        assert (
            f"`{name}` is suite `quiz_design` from `{given}`, content hash "
            f"`{result['content_hash'][:12]}…`. {shared}." in section
        )
