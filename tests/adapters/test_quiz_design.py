"""The Quiz Design adapter on its shipped release: the teachers' binary label and their reason."""

from __future__ import annotations

import json

import pytest

from nnd_suites import build_suite
from nnd_suites.builder.adapter import get_adapter
from nnd_suites.errors import QualityMapError, SourceFormatError


def _release_with(tmp_path, label: object):
    """The shipped file with its first "No error" question's label replaced by ``label``."""
    lines = get_adapter("quiz_design").default_source_path().read_text("utf-8").splitlines()
    for number, text in enumerate(lines, start=1):
        row = json.loads(text)
        for index, question in enumerate(row["questions"]):
            if question["reason"] == "No error":
                question["label"] = label
                lines[number - 1] = json.dumps(row)
                path = tmp_path / "quiz.jsonl"
                path.write_text("\n".join(lines) + "\n", "utf-8")
                return path, number, index
    raise AssertionError("the release has no 'No error' question")


@pytest.mark.parametrize("label", [0])
def test_a_label_that_contradicts_the_reason_is_a_source_fault(tmp_path, label):
    """The suite is built from ``reason``; a question whose ``label`` says otherwise (0: an
    error, for a "No error" question) was built as the reason said, without a word."""
    path, line, index = _release_with(tmp_path, label)
    with pytest.raises(SourceFormatError) as refused:
        build_suite("quiz_design", path)
    assert str(refused.value).startswith(
        f"{path}:{line}: question {index}: label {label!r} contradicts reason 'No error'"
    )
    kept = build_suite("quiz_design", path, skip_malformed=True)
    reasons = {s.reason: s.count for s in kept.manifest.skipped}
    assert reasons == {
        f"malformed row: question {index}: label {label!r} contradicts reason 'No error' "
        "(label 1 is 'No error', 0 an error)": 1
    }


@pytest.mark.parametrize("label", [2, 7, "1", None])
def test_a_label_other_than_0_or_1_is_named_as_such(tmp_path, label):
    """A label of 7 was said to contradict its reason, as if 7 were a label the release gives."""
    path, line, index = _release_with(tmp_path, label)
    with pytest.raises(SourceFormatError) as refused:
        build_suite("quiz_design", path)
    reason = (
        f"question {index}: label {label!r} is not 0 or 1 (1 is 'No error', 0 an error; its "
        "reason is 'No error')"
    )
    assert str(refused.value) == (f"{path}:{line}: {reason} (write the label its reason means)")
    kept = build_suite("quiz_design", path, skip_malformed=True)
    assert {s.reason: s.count for s in kept.manifest.skipped} == {f"malformed row: {reason}": 1}


def test_the_shipped_labels_agree_with_the_reasons():
    assert len(build_suite("quiz_design")) == 2686


@pytest.mark.parametrize("label", [0, 1])
def test_an_unknown_reason_is_named_as_unknown_whatever_the_label(tmp_path, label):
    """A reason the release never gives, with label 1, was called a label/reason contradiction
    (and skipped under --skip-malformed); it is the unknown reason the map names, as with 0."""
    lines = get_adapter("quiz_design").default_source_path().read_text("utf-8").splitlines()
    row = json.loads(lines[2])
    row["questions"][1].update(reason="typo_reason", label=label)
    lines[2] = json.dumps(row)
    path = tmp_path / "quiz.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    for skip in (False, True):
        with pytest.raises(QualityMapError) as refused:
            build_suite("quiz_design", path, skip_malformed=skip)
        assert (
            "quiz.jsonl:3 question 1: candidate has label 'typo_reason', which is absent from "
            "the map (its labels: 'No error', 'disfluent', 'off_target', 'wrong_context')"
        ) in str(refused.value)
