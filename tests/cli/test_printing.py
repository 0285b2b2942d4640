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
