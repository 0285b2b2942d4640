"""Habits users bring from lm-evaluation-harness: ``--model_args``, ``--config FILE``, and a
one-line suggestion for the options that have another name here (instead of argparse's bare
"unrecognized arguments")."""

from __future__ import annotations

import argparse
import reprlib
from pathlib import Path

from nnd_suites.cli.parser import OPTION_ALIASES, Parser

#: torch's and lm-eval's dtype names -> ours.
DTYPE_ALIASES = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float32": "fp32",
    "float": "fp32",
}

#: ``--model_args`` keys -> (our option's dest, how its text is read).
MODEL_ARGS = {
    "pretrained": "model",
    "model": "model",  # lm-eval's local-completions spells it so
    "dtype": "dtype",
    "revision": "revision",
    "trust_remote_code": "trust_remote_code",
    "parallelize": "device_map",
    "base_url": "base_url",
    "num_concurrent": "concurrency",
    "max_retries": "retries",
    "tokenizer": "tokenizer",
}

#: lm-eval's ``--model`` names a model *type*; with ``--model_args pretrained=...`` it picks our
#: backend (None: the default, which reads the model's config).
LM_EVAL_MODEL_TYPES = {
    "hf": None,
    "hf-auto": None,
    "huggingface": None,
    "local-completions": "served",
    "openai-completions": "served",
}

_OUTCOMES = "did you mean --out DIR? (its outcomes/ folder holds each test's log-likelihoods)"
_SAMPLES = (
    "only `nnd-suites evaluate ... --out DIR --log-samples` takes it (samples/SUITE.jsonl: "
    "what the model saw per test)"
)
_CACHE = "did you mean --cache-dir DIR? (the score cache is on by default; --no-cache: off)"
_TEMPLATE = "did you mean --template NAME|FORMAT? (NND tests are zero-shot: it sets the prompt)"
_TASKS = "did you mean --suite SUITE? (repeatable; NND suites play the part of tasks)"
#: lm-eval options without a twin here -> what to use instead.
SUGGESTIONS = {
    "--tasks": _TASKS,
    "--task": _TASKS,
    "--log_samples": _SAMPLES,  # on evaluate these are aliases of --log-samples
    "--write_out": _SAMPLES,
    "--predict_only": _OUTCOMES,
    "--use_cache": _CACHE,
    "--cache_requests": _CACHE,
    "--seed": "not needed: scoring draws nothing at random (verify's --seed seeds its "
    "bootstrap; a transformation takes its own, e.g. typos:seed=1)",
    "--num_fewshot": _TEMPLATE,
    "--apply_chat_template": _TEMPLATE,
    "--fewshot_as_multiturn": _TEMPLATE,
    "--system_instruction": _TEMPLATE,
    "--gen_kwargs": "not needed: NND compares log-likelihoods and generates no text",
    "--max_batch_size": "did you mean --batch-size auto? (a token budget, halved on out-of-memory)",
    "--verbosity": "did you mean -v or --log-level LEVEL? (before the command)",
    "--check_integrity": "did you mean `nnd-suites validate SUITE`?",
    "--include_path": "did you mean a plugin package? (entry points; see CONTRIBUTING.md)",
    "--hf_hub_log_args": "did you mean `nnd-suites publish`?",
}


def parse_model_args(text: str) -> dict[str, str]:
    """``KEY=VALUE,KEY=VALUE`` -> a dict; an unknown key or a pair without ``=`` is a usage
    error naming it."""
    parsed: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, equals, value = item.partition("=")
        if not equals:
            raise argparse.ArgumentTypeError(f"{item!r} is not KEY=VALUE")
        if key not in MODEL_ARGS:
            raise argparse.ArgumentTypeError(f"unknown key {key!r}; known: {', '.join(MODEL_ARGS)}")
        # a repeated key (or pretrained= with model=, one option here) would silently keep one
        same = next((k for k in parsed if MODEL_ARGS[k] == MODEL_ARGS[key]), None)
        if same is not None:
            both = f"{key!r} is given twice" if same == key else f"{same!r} and {key!r} both set"
            raise argparse.ArgumentTypeError(f"{both}; give it once")
        parsed[key] = value
    return parsed


def apply_model_args(parser: Parser, args: argparse.Namespace) -> None:
    """Move ``--model_args`` onto our options (a key that disagrees with its option given
    explicitly is a usage error); then require a model."""
    given: dict[str, str] = getattr(args, "model_args", None) or {}
    several = parser.options[parser.option("model")] == "append"
    models = list(args.model or []) if several else [args.model] if args.model else []
    if (
        len(models) == 1
        and models[0] in LM_EVAL_MODEL_TYPES
        and ("pretrained" in given or "model" in given)
    ):
        if args.backend is None:
            args.backend = LM_EVAL_MODEL_TYPES[models[0]]
        models = []  # lm-eval's `--model hf`: the model itself is in --model_args
    named = next((key for key in ("pretrained", "model") if key in given), None)
    if models and named:  # with several --model, it would quietly score one model more
        parser.error(
            f"--model {models[-1]} and --model_args {named}={given[named]} both name a model; "
            f"give one of them (lm-eval's form: --model hf --model_args {named}=NAME)"
        )
    for key, text in given.items():
        dest = MODEL_ARGS[key]
        value = _model_arg_value(parser, key, dest, text)
        if dest == "model":
            models.append(value)
            continue
        current, default = getattr(args, dest), parser.get_default(dest)
        if current != default and current != value:
            parser.error(
                f"--model_args {key}={text} disagrees with --{dest.replace('_', '-')} "
                f"{current}; give one of them"
            )
        setattr(args, dest, value)
    if not models:
        parser.error("the following arguments are required: --model (or --model_args pretrained=)")
    args.model = models if several else models[0]


def _model_arg_value(parser: Parser, key: str, dest: str, text: str) -> object:
    if dest in ("trust_remote_code", "device_map"):
        flag = _boolean(text)
        if flag is None:
            parser.error(f"--model_args {key}={text}: give True or False")
        return flag if dest == "trust_remote_code" else ("auto" if flag else None)
    return _typed(parser, parser.option(dest), text, f"--model_args {key}={text}")


def _typed(parser: Parser, action: argparse.Action, text: str, where: str) -> object:
    """``text`` read by ``action``'s type (as argparse will), or a usage error at ``where``:
    argparse's own would name the option only, not the --model_args key or --config file."""
    try:
        value = action.type(text) if callable(action.type) else text
    except (argparse.ArgumentTypeError, ValueError) as exc:
        parser.error(f"{where}: {exc}")
    if action.choices is not None and value not in action.choices:
        parser.error(f"{where}: {value!r} is not one of {', '.join(map(str, action.choices))}")
    return value


def _boolean(text: str) -> bool | None:
    return {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}.get(
        text.strip().lower()
    )


#: example values for ``--config``'s help, for the options that have one
_CONFIG_EXAMPLES = {"model": "gpt2", "suite": "[quiz_design]"}
#: the ``action=`` kinds of options that take no value (``--config`` keys: true or false)
_FLAGS = ("store_true", "store_false", "store_const")


def config_help(command: Parser) -> str:
    """``--config``'s help, its example made of this command's own options."""
    examples = []
    for action, kind in command.options.items():
        if action.dest in ("help", "config"):
            continue
        key = next(o for o in action.option_strings if o.startswith("--")).lstrip("-")
        if kind in _FLAGS:
            value = "true"
        elif key in _CONFIG_EXAMPLES:
            value = _CONFIG_EXAMPLES[key]
        elif action.choices:
            value = str(next(iter(action.choices)))
        else:
            value = str(action.metavar or action.dest.upper())
        examples.append(f"{key}: {value}")
    example = f" (e.g. {', '.join(examples[:2])})" if examples else ""
    return (
        f"YAML or JSON mapping of this command's options{example}; options on the command line win"
    )


def unknown_command(parser: Parser, argv: list[str]) -> None:
    """A usage error with the closest sub-command when the first word is none of them."""
    index = 0
    while index < len(argv) and argv[index].startswith("-"):
        index += 2 if argv[index] == "--log-level" else 1  # the top level's one valued option
    if index >= len(argv) or argv[index] in parser.commands:
        return
    import difflib  # only on this error path: `nnd-suites list` starts fast

    word = argv[index]
    close = difflib.get_close_matches(word, list(parser.commands), n=1, cutoff=0.6)
    hint = f"did you mean `nnd-suites {close[0]}`?" if close else "see nnd-suites --help"
    parser.error(f"unknown command {word!r}: {hint}")


def spelled_out(command: Parser, word: str) -> list[str]:
    """The command's option strings that the ``--option`` ``word`` (``=VALUE`` allowed) names:
    itself, or those it abbreviates (argparse's prefix rule: one match is used, several are its
    "ambiguous option" error, none is an unknown option)."""
    name = word.split("=", 1)[0]
    names = command.option_strings
    return [name] if name in names else [option for option in names if option.startswith(name)]


def _command_at(parser: Parser, argv: list[str]) -> int | None:
    return next((i for i, word in enumerate(argv) if word in parser.commands), None)


def refuse_unknown_options(parser: Parser, argv: list[str]) -> None:
    """A usage error, with their suggestions, for the ``--options`` after the command that it
    neither takes nor abbreviates, before argparse checks the required ones: `--tasks x` alone
    gets "did you mean --suite", not "--suite is required"."""
    at = _command_at(parser, argv)
    if at is None:
        return  # argparse says what is missing
    command, words = parser.commands[argv[at]], argv[at + 1 :]
    words = words[: words.index("--")] if "--" in words else words
    if unknown := [w for w in words if w.startswith("--") and not spelled_out(command, w)]:
        command.error(unrecognized(command, unknown))


def _suggestion(option: str) -> str | None:
    if option in SUGGESTIONS:
        return f"{option} is lm-evaluation-harness's: {SUGGESTIONS[option]}"
    if option in OPTION_ALIASES:
        return (
            f"{option} is lm-evaluation-harness's {OPTION_ALIASES[option]}, which this "
            "command does not take (see --help)"
        )
    return None


def unrecognized(parser: Parser, extras: list[str]) -> str:
    """The usage error for arguments the command does not take, with a suggestion per option."""
    import difflib  # only on this error path: `nnd-suites list` starts fast

    known = [option for option in parser.option_strings if option.startswith("--")]
    lines = []
    for extra in extras:
        if not extra.startswith("-"):
            continue
        option = extra.split("=", 1)[0]
        if suggestion := _suggestion(option):
            lines.append(suggestion)
        elif option.replace("_", "-") in known:
            lines.append(f"unrecognized {option}: did you mean {option.replace('_', '-')}?")
        elif close := difflib.get_close_matches(option, known, n=1, cutoff=0.75):
            lines.append(f"unrecognized {option}: did you mean {close[0]}?")
    if lines:
        return "; ".join(lines)
    return f"unrecognized arguments: {' '.join(extras)} (see --help)"


def expand_config(parser: Parser, argv: list[str]) -> list[str]:
    """``COMMAND ... --config FILE ...`` -> the file's options (YAML or JSON mapping of option
    names, ``-`` or ``_``) written out on the command line before the given ones, which win."""
    at = _command_at(parser, argv)
    if at is None:
        return argv
    command = parser.commands[argv[at]]
    # --conf too: argparse would take it for --config and the file would be silently unread
    where = [
        i
        for i, item in enumerate(argv)
        if item.startswith("--") and spelled_out(command, item) == ["--config"]
    ]
    if not where:
        return argv
    if len(where) > 1:
        command.error("--config is given twice; give one file")
    index = where[0]
    if "=" not in argv[index]:
        if index + 1 >= len(argv):
            command.error("argument --config: expected one argument (a YAML or JSON file)")
        path, rest = argv[index + 1], [*argv[:index], *argv[index + 2 :]]
    else:
        path, rest = argv[index].split("=", 1)[1], [*argv[:index], *argv[index + 1 :]]
    options = _read_config(command, Path(path))
    # an abbreviation (--sui) overrides its option's entry like the full name: argparse would
    # take both, the file's list and the command line's value
    given = {
        option
        for item in rest
        if item.startswith("-")
        for option in spelled_out(command, item) or [item.split("=", 1)[0]]
    }
    tokens: list[str] = []
    keys: dict[argparse.Action, object] = {}  # which key of the file set each option
    for key, value in options.items():
        action = _config_action(command, path, key)
        if action in keys:  # `out` and `output_path`: which would win?
            command.error(
                f"--config {path}: {keys[action]!r} and {key!r} are one option "
                f"({', '.join(action.option_strings)}); keep one"
            )
        keys[action] = key
        tokens += _config_tokens(command, path, key, action, value, given)
    return [*rest[: at + 1], *tokens, *rest[at + 1 :]]


def _read_config(command: Parser, path: Path) -> dict:
    # lazy: only a --config file needs the readers (and yaml)
    from nnd_suites.infra.reading import (
        CONFIG_FILE_LIMIT,
        DataFileError,
        parse_json,
        parse_yaml,
        read_data_text,
    )
    from nnd_suites.infra.strict_yaml import StrictYAML

    kind = "JSON" if path.suffix == ".json" else "YAML"
    try:
        text = read_data_text(path, "--config file", CONFIG_FILE_LIMIT)
    except DataFileError as exc:  # missing, not a regular file, too large, not UTF-8
        command.error(f"--config {exc}")
    try:  # a key written twice is an error, as in every data file: which value would win?
        if kind == "JSON":
            data = parse_json(text, str(path), unique_keys=True)
        else:
            data = parse_yaml(text, str(path), StrictYAML)
    except DataFileError as exc:
        if "nested" in exc.reason:
            command.error(
                f"--config {path}: nested too deeply to read; give a flat mapping of option "
                "names to values (a list at most, e.g. suite: [quiz_design])"
            )
        where = f"{path}:{exc.line}" if exc.line else str(path)
        reason = exc.reason.removeprefix("cannot parse the YAML: ")
        command.error(f"--config {where}: not valid {kind} ({reason})")
    if not isinstance(data, dict):
        command.error(f"--config {path}: give a mapping of option names to values")
    return data


def _config_action(command: Parser, path: str, key: object) -> argparse.Action:
    """The option a config entry's key names (any of its spellings), or a usage error."""
    dest = str(key).lstrip("-").replace("-", "_")
    spellings = {f"--{str(key).lstrip('-')}", f"--{dest}", f"--{dest.replace('_', '-')}"}
    action = next(
        (a for a in command.options if a.dest == dest or spellings & set(a.option_strings)),
        None,
    )
    if action is None and (suggestion := _suggestion(f"--{str(key).lstrip('-')}")):
        command.error(f"--config {path}: {suggestion}")
    if dest == "config":
        command.error(
            f"--config {path}: {key}: a config file cannot load another one; merge the two files"
        )
    if action is None or dest == "help":
        names = sorted(a.dest for a in command.options if a.dest not in ("help", "config"))
        command.error(
            f"--config {path}: unknown key {key!r} (this command's options: {', '.join(names)}; "
            "positional arguments stay on the command line)"
        )
    return action


def _config_tokens(
    command: Parser,
    path: str,
    key: object,
    action: argparse.Action,
    value: object,
    given: set[str],
) -> list[str]:
    """The command-line words for one config entry (none when the command line gives it)."""
    dest = action.dest
    if given & set(action.option_strings):
        return []  # the command line overrides the file
    option = next(
        (o for o in action.option_strings if o.startswith("--")), action.option_strings[0]
    )
    if command.options[action] in _FLAGS:
        if not isinstance(value, bool):
            command.error(f"--config {path}: {key}: give true or false, not {reprlib.repr(value)}")
        return [option] if value == (action.const is True) else []
    if dest == "model_args" and isinstance(value, dict):
        value = ",".join(f"{k}={v}" for k, v in value.items())
    values = value if isinstance(value, list) else [value]
    if len(values) != 1 and command.options[action] != "append":
        command.error(f"--config {path}: {key}: give one value, not a list")
    words: list[str] = []
    for item in values:
        if isinstance(item, (dict, list)) or item is None:
            shown = reprlib.repr(item)  # bounded: a value nested thousands deep has no repr
            command.error(f"--config {path}: {key}: give a string or a number, not {shown}")
        words += [option, str(item).lower() if isinstance(item, bool) else str(item)]
        _typed(command, action, words[-1], f"--config {path}: {key}")
    return words
