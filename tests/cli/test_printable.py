"""Terminal controls from source data (ESC sequences, BEL, CR, bidi overrides) are never printed
raw: errors that quote source data escape them."""

from __future__ import annotations

import pytest

from nnd_suites import errors
from nnd_suites.cli import main
from nnd_suites.errors import NNDError, SourceFormatError, UnknownItemError, printable

TITLE = "\x1b]0;TITLE\x07"  # retitles a terminal window
HOSTILE = [TITLE, "\x1b[2J", "ok\rforged line", "\u202etxt.exe", "nul\x00", "\x9b31m"]


def raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0] + [
        c for c in text if c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    ]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_error_class_escapes_controls(hostile):
    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, NNDError)]
    for cls in classes:
        if cls is SourceFormatError:
            error = cls(f"f{hostile}.tsv", 2, f"column {hostile} missing")
        elif cls is UnknownItemError:
            error = cls("adapter", hostile, ["a"])
        elif cls is errors.QualityMapError:
            error = cls(hostile, f"label {hostile}")
        else:
            try:
                error = cls(f"column {hostile} missing")
            except TypeError:  # a class with its own signature
                continue
        assert not raw_controls(str(error)), (cls.__name__, str(error))
    assert printable(hostile) != hostile and not raw_controls(printable(hostile))


def test_printable_keeps_ordinary_text():
    text = "Où est le café ?\n\tline two — 東京 \u200b"
    assert printable(text) == text


def test_a_source_file_named_with_controls_is_escaped_in_the_error(tmp_path, capsys):
    source = tmp_path / f"groups{TITLE}.jsonl"
    source.write_text("{not json\n", encoding="utf-8")
    status = main(["build", "quiz_design", "--source", str(source), "--out", str(tmp_path / "s")])
    err = capsys.readouterr().err
    assert status != 0 and "\\x1b]0;TITLE\\x07" in err and not raw_controls(err)
