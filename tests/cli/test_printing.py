"""What the commands print quotes the data (system names, labels, categories, file names): a
source holding terminal escape sequences is printed escaped, and ``--json`` stays valid JSON
holding the same names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nnd_suites.builder.adapter import ADAPTERS
from nnd_suites.cli import main

TITLE = "\x1b]0;TITLE\x07"  # retitles a terminal window
HOSTILE = f"gpt2m{TITLE}\x9b2J\u202e_sup"
SHOWN = "gpt2m\\x1b]0;TITLE\\x07\\x9b2J\\u202e_sup"


def raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0] + [
        c for c in text if c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    ]


def _strings(value: object) -> set[str]:
    """Every key and string value in a JSON value."""
    if isinstance(value, dict):
        return set(value) | {s for v in value.values() for s in _strings(v)}
    if isinstance(value, list):
        return {s for v in value for s in _strings(v)}
    return {value} if isinstance(value, str) else set()


@pytest.fixture(scope="module")
def hostile_suite(tmp_path_factory) -> Path:
    """quiz_design's shipped sample with one system renamed to hold terminal controls."""
    folder = tmp_path_factory.mktemp("hostile")
    sample = ADAPTERS.get("quiz_design").default_source_path().parents[1] / "fixtures"
    lines = (sample / "quiz_design_sample.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    for row in rows:
        for question in row["questions"]:
            if question["model_name"] == "gpt2m_sup":
                question["model_name"] = HOSTILE
    source = folder / "groups.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["build", "quiz_design", "--source", str(source), "--out", str(folder / "s")]) == 0
    return folder / "s"


@pytest.mark.parametrize("command", [["systems"], ["slices"]])
def test_a_system_name_with_terminal_controls_is_printed_escaped(hostile_suite, capsys, command):
    capsys.readouterr()
    assert main([*command, str(hostile_suite)]) == 0
    out = capsys.readouterr().out
    assert SHOWN in out, out
    assert not raw_controls(out)


@pytest.mark.parametrize("command", [["systems"], ["slices"]])
def test_json_output_escapes_controls_and_keeps_the_names(hostile_suite, capsys, command):
    capsys.readouterr()
    assert main([*command, str(hostile_suite), "--json"]) == 0
    out = capsys.readouterr().out
    assert not raw_controls(out)
    assert HOSTILE in _strings(json.loads(out))  # the same name, read back


def test_a_suite_folder_named_with_controls_is_printed_escaped(hostile_suite, tmp_path, capsys):
    folder = tmp_path / f"suite{TITLE}"
    capsys.readouterr()
    assert (
        main(["transform", str(hostile_suite), "--transform", "lowercase", "--out", str(folder)])
        == 0
    )
    out = capsys.readouterr().out
    assert "suite\\x1b]0;TITLE\\x07" in out and not raw_controls(out)


def _pasted(line: str, after: str) -> list[str]:
    """The words a shell makes of the command printed after ``after`` in ``line``."""
    import shlex

    return shlex.split(line.split(after, 1)[1])


def test_export_lm_eval_prints_a_command_that_pastes_into_a_shell(
    tiny_causal_model, tmp_path, capsys
):
    """A folder named with a space, '#' and ':' was printed bare: pasted, the shell cut the
    path at the space and dropped the rest of the line as a comment."""
    to = tmp_path / "tasks #2: x"
    args = ["export-lm-eval", "challenge300", "--to", str(to), "--tokenizer"]
    assert main([*args, str(tiny_causal_model)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "run with:" in x)
    words = _pasted(line, "run with:")
    assert words[words.index("--include_path") + 1] == str(to)
    assert words[-2:] == ["--tasks", "nnd_challenge300"]


def test_chat_prompts_prints_a_command_that_pastes_into_a_shell(
    tiny_causal_model, tmp_path, capsys
):
    import shutil

    model = shutil.copytree(tiny_causal_model, tmp_path / "chat model")
    config_path = model / "tokenizer_config.json"
    config = json.loads(config_path.read_text("utf-8"))
    config["chat_template"] = (
        "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    config_path.write_text(json.dumps(config), "utf-8")
    out = tmp_path / "hh chat"
    args = ["chat-prompts", "hh_rlhf", "--tokenizer", str(model), "--out", str(out)]
    assert main(args) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "score it with:" in x)
    words = _pasted(line, "score it with:")
    assert words[words.index("--suite") + 1] == str(out)
    assert words[words.index("--model") + 1] == str(model)


def test_validate_says_a_valid_suite_still_holding_the_scaffolds_todo_is_not_publishable(
    quiz_design_suite, tmp_path, capsys
):
    # valid (its hash covers the TODO), but export and publish refuse it: validate said nothing
    todo = quiz_design_suite.derive(quiz_design_suite.pairs, license="TODO", citation="TODO: x")
    todo.save(tmp_path / "qd")
    assert main(["validate", str(tmp_path / "qd")]) == 0
    out = capsys.readouterr().out
    assert "valid suite 'quiz_design'" in out
    assert "note: its license, citation still hold the TODO of `nnd-suites new-adapter`" in out
