"""Every rating number an adapter reads goes through the one reading of numbers
(``nnd_suites.sources.read_number``): full-width digits read as their ASCII forms, and a value
that is no number is a SourceFormatError naming the file and line, never a crash or a refusal of
a number written another way. Checked on damaged copies of shipped fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.errors import SourceFormatError

SUMMEVAL = (
    get_adapter("summeval").folder() / "fixtures" / "model_annotations.aligned.paired.sample.jsonl"
)


def _summeval_copy(tmp_path: Path, value: object) -> Path:
    """The summeval fixture with the first expert's consistency of its second line set to
    ``value``."""
    lines = SUMMEVAL.read_text("utf-8").splitlines()
    record = json.loads(lines[1])
    record["expert_annotations"][0]["consistency"] = value
    lines[1] = json.dumps(record, ensure_ascii=False)
    path = tmp_path / SUMMEVAL.name
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def test_summeval_reads_a_full_width_rating_as_its_number(tmp_path):
    original = json.loads(SUMMEVAL.read_text("utf-8").splitlines()[1])
    rating = original["expert_annotations"][0]["consistency"]
    full_width = chr(ord("０") + rating)  # the same digit, as a CJK keyboard types it
    copied = build_suite("summeval", _summeval_copy(tmp_path, full_width))
    shipped = build_suite("summeval", SUMMEVAL)
    assert [p.id for p in copied.pairs] == [p.id for p in shipped.pairs]
    assert copied.stats()["breakdowns"] == shipped.stats()["breakdowns"]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("four", "annotation 0: consistency: 'four' is not a number"),
        (True, "annotation 0: consistency: true is not a number"),
        (4.5, "annotation 0: consistency is 4.5, not an integer from 1 to 5"),
        (6, "annotation 0: consistency: 6 out of range [1, 5]"),
    ],
)
def test_summeval_names_a_damaged_rating_with_its_line(tmp_path, value, reason):
    path = _summeval_copy(tmp_path, value)
    with pytest.raises(SourceFormatError) as caught:
        build_suite("summeval", path)
    assert (caught.value.path, caught.value.line, caught.value.reason) == (str(path), 2, reason)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("written", ["1e400", "-1e400", '"1e400"'])
def test_a_rating_that_overflows_a_float_is_named_as_written(tmp_path, written):
    # was "Infinity is not a number" (JSON's 1e400 read as inf, shown as json writes inf) or
    # "'1e400' is not a number": a number was written, too large to be read
    path = _summeval_copy(tmp_path, 777)
    path.write_text(path.read_text("utf-8").replace("777", written, 1), "utf-8")
    with pytest.raises(SourceFormatError) as caught:
        build_suite("summeval", path)
    assert caught.value.reason == (
        f"annotation 0: consistency: {written.replace(chr(34), chr(39))} is beyond 1e+100 in "
        "magnitude: no rating (it overflows a float)"
    )
