"""lm-evaluation-harness habits (--model_args, --config, suggestions) and range checks that
refuse a bad option while the command line is parsed, before any model is loaded."""

from __future__ import annotations

import json

import pytest

from nnd_suites.cli import main

EVALUATE = ["evaluate", "--suite", "challenge300"]
ROBUSTNESS = ["robustness", "--suite", "quiz_design", "--transform", "lowercase", "--model", "m"]


def _usage_error(argv: list[str], capsys) -> str:
    """The message of a usage error (exit status 2, said on stderr)."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "suggestion"),
    [
        (["--tasks", "quiz_design"], "did you mean --suite SUITE?"),
        (["--task", "quiz_design"], "did you mean --suite SUITE?"),
        (["--seed", "1"], "not needed: scoring draws nothing at random"),
        (["--use_cache", "x"], "did you mean --cache-dir DIR?"),
        (["--num_fewshot", "5"], "did you mean --template NAME|FORMAT?"),
        (["--gen_kwargs", "a=1"], "not needed: NND compares log-likelihoods"),
        (["--cache_dir", "x"], "unrecognized --cache_dir: did you mean --cache-dir?"),
        (["--no_cache"], "unrecognized --no_cache: did you mean --no-cache?"),
    ],
)
def test_an_lm_eval_option_gets_a_one_line_suggestion(option, suggestion, capsys):
    err = _usage_error([*EVALUATE, "--model", "m", *option], capsys)
    last = err.strip().splitlines()[-1]  # one error line under the command's usage
    assert last.startswith("nnd-suites evaluate: error: ") and suggestion in last


def test_an_unknown_argument_without_a_twin_says_see_help(capsys):
    err = _usage_error([*EVALUATE, "--model", "m", "--zzz-nothing-like-it"], capsys)
    assert "unrecognized arguments: --zzz-nothing-like-it (see --help)" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([*EVALUATE, "--model", "m", "--concurrency", "-1"], "--concurrency: -1 is below 1"),
        ([*EVALUATE, "--model", "m", "--concurrency", "0"], "--concurrency: 0 is below 1"),
        ([*EVALUATE, "--model", "m", "--request-timeout", "nan"], "finite number of seconds"),
        ([*EVALUATE, "--model", "m", "--request-timeout", "inf"], "finite number of seconds"),
        ([*EVALUATE, "--model", "m", "--request-timeout", "0"], "finite number of seconds > 0"),
        ([*EVALUATE, "--model", "m", "--retries", "-2"], "--retries: -2 is below 0"),
        ([*EVALUATE, "--model", "m", "--data-parallel", "0"], "--data-parallel: 0 is below 1"),
        ([*EVALUATE, "--model", "m", "--limit", "0"], "--limit: 0 is below 1"),
        # the integer refusals said "give an integer >= 1", hiding that a fraction works too
        (
            [*EVALUATE, "--model", "m", "--limit", "0"],
            "0 is below 1; give a number of context groups (an integer >= 1) or a fraction",
        ),
        (
            [*EVALUATE, "--model", "m", "--limit", "all"],
            "'all' is not an integer; give a number of context groups (an integer >= 1) or a "
            "fraction between 0 and 1",
        ),
        (
            [*EVALUATE, "--model", "m", "--batch-size", "0"],
            "--batch-size/--batch_size: 0 is below 1",
        ),
        ([*EVALUATE, "--model", "m", "--dtype", "int8"], "give auto, fp32, bf16 or fp16"),
        (["verify", "quiz_design", "--out", "v", "--resamples", "0"], "cannot give a 95%"),
        (["verify", "quiz_design", "--out", "v", "--resamples", "1"], "cannot give a 95%"),
        (["verify", "quiz_design", "--out", "v", "--data-parallel", "0"], "0 is below 1"),
        (
            [*ROBUSTNESS, "--alpha", "1.5"],
            "--alpha: '1.5': give a number between 0 and 1",
        ),
    ],
)
def test_out_of_range_options_are_usage_errors_at_parse_time(argv, message, capsys, tmp_path):
    """Nothing is loaded or scored: the model 'm' does not exist and is never looked up."""
    err = _usage_error(argv, capsys)
    assert message in err
    assert "cannot load model" not in err


def _parsed(argv: list[str]):
    """The namespace `main` would run the command with (the command itself stubbed)."""
    from nnd_suites.cli import habits

    seen = {}
    parser_main = main.__globals__

    def capture(args):
        seen["args"] = args
        return 0

    build = parser_main["build_parser"]

    def stubbed_parser():
        parser = build()
        for command in parser.commands.values():
            command.set_defaults(func=capture)
        return parser

    parser_main["build_parser"] = stubbed_parser
    try:
        assert main(argv) == 0
    finally:
        parser_main["build_parser"] = build
    assert habits  # the module under test
    return seen["args"]


def test_model_args_map_onto_our_options():
    args = _parsed(
        [
            *EVALUATE,
            "--model_args",
            "pretrained=org/model,dtype=bfloat16,revision=v2,trust_remote_code=True,"
            "parallelize=True",
        ]
    )
    assert args.model == ["org/model"] and args.dtype == "bf16" and args.revision == "v2"
    assert args.trust_remote_code is True and args.device_map == "auto"
    served = _parsed(
        [
            *EVALUATE,
            "--model",
            "local-completions",
            "--model_args",
            "model=served-id,base_url=http://127.0.0.1:8000/v1,num_concurrent=4,max_retries=2",
        ]
    )
    assert served.model == ["served-id"] and served.backend == "served"
    assert served.base_url == "http://127.0.0.1:8000/v1"
    assert served.concurrency == 4 and served.retries == 2
    hf = _parsed([*EVALUATE, "--model", "hf", "--model_args", "pretrained=gpt2"])
    assert hf.model == ["gpt2"] and hf.backend is None


def test_lm_eval_spellings_of_our_options_are_accepted(tmp_path):
    out = str(tmp_path / "run")
    args = _parsed(
        [
            *EVALUATE,
            "--model",
            "m",
            "--dtype",
            "bfloat16",
            "--batch_size",
            "8",
            "--output_path",
            out,
        ]
    )
    assert args.dtype == "bf16" and args.batch_size == 8 and args.out == tmp_path / "run"
    assert _parsed([*EVALUATE, "--model", "m", "--batch_size", "auto:4"]).batch_size == "auto"


def test_model_args_errors_name_the_key(capsys):
    err = _usage_error([*EVALUATE, "--model_args", "pretrained=m,shots=5"], capsys)
    assert "unknown key 'shots'" in err and "pretrained" in err
    err = _usage_error([*EVALUATE, "--model_args", "pretrained=m,num_concurrent=-3"], capsys)
    assert "num_concurrent=-3" in err and "below 1" in err
    err = _usage_error([*EVALUATE, "--model_args", "pretrained=m,parallelize=maybe"], capsys)
    assert "parallelize=maybe: give True or False" in err
    err = _usage_error(
        [*EVALUATE, "--dtype", "fp16", "--model_args", "pretrained=m,dtype=bf16"], capsys
    )
    assert "disagrees with --dtype fp16" in err
    err = _usage_error(EVALUATE, capsys)
    assert "required: --model (or --model_args pretrained=)" in err


def test_config_file_holds_options_and_the_command_line_wins(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text(
        "model: org/model\nsuite: [quiz_design, challenge300]\nquiet: true\nlimit: 5\n"
        "batch-size: 4\nmodel_args: {dtype: bfloat16}\n"
    )
    args = _parsed(["evaluate", "--config", str(config)])
    assert args.model == ["org/model"] and args.suite == ["quiz_design", "challenge300"]
    assert args.quiet is True and args.limit == 5 and args.batch_size == 4
    assert args.dtype == "bf16"
    # the command line overrides, a list included
    args = _parsed(["evaluate", f"--config={config}", "--suite", "wmt_mqm", "--limit", "2"])
    assert args.suite == ["wmt_mqm"] and args.limit == 2 and args.model == ["org/model"]
    as_json = tmp_path / "run.json"
    as_json.write_text(json.dumps({"suite": "quiz_design", "model": "m", "no_cache": True}))
    args = _parsed(["evaluate", "--config", str(as_json)])
    assert args.suite == ["quiz_design"] and args.no_cache is True


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model: m\nsuite: quiz_design\ntasks: x\n", "tasks is lm-evaluation-harness's: did"),
        ("model: m\nsuite: quiz_design\nquiet: 3\n", "quiet: give true or false"),
        ("model: [a, b]\nsuite: quiz_design\ndevice: [cpu, cuda]\n", "device: give one value"),
        ("- model\n", "give a mapping of option names to values"),
        ("model: [unclosed\n", "not valid YAML"),
        (
            "model: m\nsuite: quiz_design\nmodel: n\n",
            "bad.yaml:3: not valid YAML (key 'model' appears",
        ),
        ("model: m\nsuite: quiz_design\nout: a\noutput_path: b\n", "are one option"),
        # a value its option's type or choices refuse: argparse named the option, not the file
        ("model: m\nsuite: quiz_design\nconcurrency: -1\n", "bad.yaml: concurrency: -1 is below 1"),
        ("model: m\nsuite: quiz_design\nlimit: abc\n", "bad.yaml: limit: 'abc' is not an integer"),
        ("model: m\nsuite: quiz_design\ncompat: x\n", "bad.yaml: compat: 'x' is not one of"),
        ("model: m\nsuite: quiz_design\nconfig: b.yaml\n", "config: a config file cannot load"),
    ],
)
def test_config_errors_are_usage_errors_naming_the_file(text, message, tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    err = _usage_error(["evaluate", "--config", str(config)], capsys)
    assert message in err
    assert str(config) in err


def test_config_of_another_command_takes_that_commands_options(tmp_path):
    config = tmp_path / "verify.yaml"
    config.write_text("system: [mixqg=a, dgpt2_sup=b]\nresamples: 200\nout: v\n")
    args = _parsed(["verify", "quiz_design", "--config", str(config)])
    assert args.system == ["mixqg=a", "dgpt2_sup=b"] and args.resamples == 200


def test_data_parallel_1_is_this_process(monkeypatch):
    """`--data-parallel 1` runs here (no launcher); 2 or more start ranks; a rank never starts
    ranks; 0 (from Python: the CLI refuses it while parsing) is a named error."""
    from nnd_suites.errors import NNDError
    from nnd_suites.evaluation.rank_job import wants_ranks

    assert not wants_ranks(None)
    assert not wants_ranks(1)
    assert wants_ranks(2)
    with pytest.raises(NNDError, match="data_parallel=0: give a number of processes >= 1"):
        wants_ranks(0)
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert not wants_ranks(2)


def test_the_embedded_model_name_resolves_to_its_folder(monkeypatch, tmp_path):
    from nnd_suites.evaluation import tiny
    from nnd_suites.evaluation.tiny import resolve_embedded

    monkeypatch.setattr(tiny, "embedded_model", lambda: tmp_path / tiny.EMBEDDED_FOLDER)
    assert resolve_embedded(["gpt2", "org/m"]) == (["gpt2", "org/m"], False)
    folder = str(tmp_path / tiny.EMBEDDED_FOLDER)
    assert resolve_embedded(["gpt2", tiny.EMBEDDED]) == (["gpt2", folder], True)
    assert "PIPELINE-CHECK" in folder and "mean nothing" in tiny.EMBEDDED_NOTE


def test_one_alias_table_for_the_command_line_and_config(tmp_path):
    """Every lm-eval spelling the command line takes, --config takes as a key, and the reverse."""
    from nnd_suites.cli.parser import OPTION_ALIASES

    out = tmp_path / "run"
    config = tmp_path / "run.yaml"
    config.write_text(f"model: m\nsuite: quiz_design\noutput_path: {out}\nbatch_size: 4\n")
    args = _parsed(["evaluate", "--config", str(config)])
    assert args.out == out and args.batch_size == 4
    assert _parsed(
        [*EVALUATE, "--model", "m", "--write_out", "--output_path", str(out)]
    ).log_samples
    for alias, ours in OPTION_ALIASES.items():
        key = alias.lstrip("-")
        value = "true" if ours == "--log-samples" else "4" if "batch" in ours else str(out)
        config.write_text(f"model: m\nsuite: quiz_design\n{key}: {value}\n")
        from_file = vars(_parsed(["evaluate", "--config", str(config)]))
        given = [alias] if value == "true" else [alias, value]
        on_the_line = vars(_parsed(["evaluate", "--suite", "quiz_design", "--model", "m", *given]))
        assert from_file.pop("func") and on_the_line.pop("func")  # the stub, a new one per call
        assert from_file == on_the_line


def test_an_lm_eval_option_alone_gets_its_suggestion_before_required_errors(capsys):
    err = _usage_error(["evaluate", "--tasks", "quiz_design", "--model", "m"], capsys)
    assert "did you mean --suite SUITE?" in err and "required" not in err
    err = _usage_error(["robustness", "--tasks=quiz_design", "--model", "m"], capsys)
    assert "did you mean --suite SUITE?" in err and "required" not in err
    # an abbreviation argparse resolves is no unknown option
    assert _parsed(["evaluate", "--sui", "quiz_design", "--model", "m"]).suite == ["quiz_design"]


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (
            ["evaluat", "--suite", "x"],
            "unknown command 'evaluat': did you mean `nnd-suites evaluate`?",
        ),
        (["-v", "robustnes"], "did you mean `nnd-suites robustness`?"),
        (["--log-level", "info", "sytems", "x"], "did you mean `nnd-suites systems`?"),
        (["zzzzzz"], "unknown command 'zzzzzz': see nnd-suites --help"),
    ],
)
def test_a_command_typo_gets_the_closest_command(argv, suggestion, capsys):
    err = _usage_error(argv, capsys)
    last = err.strip().splitlines()[-1]
    assert last.startswith("nnd-suites: error: unknown command ") and last.endswith(suggestion)


@pytest.mark.parametrize("command", ["new-adapter", "export", "schema", "publish"])
def test_each_commands_config_help_shows_its_own_options(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    example = help_text.split("--config FILE", 1)[1]
    assert "model: gpt2" not in example and "suite: [quiz_design]" not in example
    from nnd_suites.cli import build_parser

    own = build_parser().commands[command]
    first = next(a for a in own.options if a.dest != "help")  # options: those with option strings
    key = next(o for o in first.option_strings if o.startswith("--")).lstrip("-")
    assert f"e.g. {key}: " in example


def test_evaluates_config_help_keeps_its_example(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert "e.g. suite: [quiz_design], model: gpt2" in " ".join(capsys.readouterr().out.split())


def test_a_config_nested_thousands_deep_is_a_usage_error(tmp_path, capsys):
    """yaml and json recurse per level: 5,000 of them was a RecursionError traceback."""
    deep = tmp_path / "deep.yaml"
    deep.write_text("suite: " + "[" * 5000 + "]" * 5000 + "\n")
    err = _usage_error(["evaluate", "--config", str(deep)], capsys)
    assert f"--config {deep}: nested too deeply to read" in err and "Traceback" not in err
    as_json = tmp_path / "deep.json"
    as_json.write_text('{"suite": ' + "[" * 5000 + "]" * 5000 + "}")
    assert "nested too deeply" in _usage_error(["evaluate", "--config", str(as_json)], capsys)
    # deep, but within the bound of every data file (100): the value is refused with a bounded
    # repr (300 deep is past that bound now that the file is read as every data file is)
    shallow = tmp_path / "shallow.yaml"
    shallow.write_text("model: m\nsuite: " + "[" * 90 + "]" * 90 + "\n")
    err = _usage_error(["evaluate", "--config", str(shallow)], capsys)
    assert "suite: give a string or a number, not [[[[[[[...]]]]]]]" in err


def test_an_abbreviated_option_overrides_the_configs_entry(tmp_path):
    """argparse expands --sui to --suite: it used to take the file's list and the command
    line's value both; the command line wins, as for the full name."""
    config = tmp_path / "run.yaml"
    config.write_text("model: m\nsuite: [quiz_design, challenge300]\n")
    args = _parsed(["evaluate", "--config", str(config), "--sui", "wmt_mqm"])
    assert args.suite == ["wmt_mqm"] and args.model == ["m"]
    args = _parsed(["evaluate", "--config", str(config), "--sui=wmt_mqm", "--quie"])
    assert args.suite == ["wmt_mqm"] and args.quiet is True


def test_model_and_model_args_naming_two_models_are_refused(capsys):
    """--model X --model_args pretrained=Y scored two models; a repeated key kept the last."""
    err = _usage_error([*EVALUATE, "--model", "x", "--model_args", "pretrained=y"], capsys)
    assert "--model x and --model_args pretrained=y both name a model; give one of them" in err
    err = _usage_error([*ROBUSTNESS, "--model_args", "pretrained=y"], capsys)
    assert "both name a model" in err
    err = _usage_error([*EVALUATE, "--model_args", "pretrained=a,pretrained=b"], capsys)
    assert "'pretrained' is given twice; give it once" in err
    err = _usage_error([*EVALUATE, "--model_args", "pretrained=a,model=b"], capsys)
    assert "'pretrained' and 'model' both set; give it once" in err
    err = _usage_error([*EVALUATE, "--model_args", "pretrained=a,dtype=fp16,dtype=bf16"], capsys)
    assert "'dtype' is given twice" in err


def test_an_abbreviated_config_option_is_read(tmp_path):
    """argparse took --conf for --config, which is read before parsing: the file was ignored."""
    config = tmp_path / "run.yaml"
    config.write_text("model: m\nsuite: [quiz_design]\nlimit: 3\n")
    assert _parsed(["evaluate", "--conf", str(config)]).limit == 3
    assert _parsed(["evaluate", f"--confi={config}"]).suite == ["quiz_design"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["publish", "quiz_design", "--repo", "a/b", "--repo", "c/d"], "--repo is given twice"),
        (
            ["evaluate", "--suite", "quiz_design", "--model", "m", "--out", "a", "--output_path=b"],
            "--out/--output_path is given twice (a and b)",
        ),
        (["publish", "quiz_design", "--repo", "a/b", "--tag", "v1", "--tag", "v2"], "(v1 and v2)"),
    ],
)
def test_an_option_of_one_value_given_twice_is_refused_not_cut_to_the_last(argv, message, capsys):
    """argparse kept the last value without a word: ``publish --repo a/b --repo c/d`` would have
    published to c/d."""
    err = _usage_error(argv, capsys)
    assert message in err and "give it once" in err


def test_options_that_take_several_values_still_do(tmp_path):
    args = _parsed(["evaluate", "--suite", "quiz_design", "--suite", "wmt_mqm", "--model", "m"])
    assert args.suite == ["quiz_design", "wmt_mqm"]


@pytest.mark.parametrize(
    "argv",
    [
        ["export", "quiz_design", "--to", ""],
        ["build", "quiz_design", "--out", " "],
        ["compare", "", "run_b"],
        ["publish", "quiz_design", "--repo", "a/b", "--dry-run", "--folder", ""],
    ],
)
def test_an_empty_path_is_refused_not_taken_for_this_folder(argv, tmp_path, monkeypatch, capsys):
    """``Path("")`` is the current folder: ``export --to "$OUT"`` with OUT unset wrote there."""
    monkeypatch.chdir(tmp_path)
    err = _usage_error(argv, capsys)
    assert "an empty path" in err and "'.' for this folder" in err
    assert list(tmp_path.iterdir()) == []


def test_an_empty_quality_map_is_refused_not_taken_for_the_adapters(tmp_path, capsys):
    assert main(["build", "challenge300", "--quality-map", "", "--out", str(tmp_path / "s")]) == 6
    assert "unknown quality map ''" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()
