"""What a suite's templates promise about its contexts is checked when the suite is validated."""

from __future__ import annotations

import pytest

from nnd_suites import Suite, SuiteValidationError
from nnd_suites.cli import main


def _with_templates(suite: Suite, **fields: object) -> Suite:
    """``suite`` with manifest ``fields`` set and its hashes resealed over them, unvalidated: a
    manifest edited and resealed by hand, as a suite from elsewhere may be."""
    manifest = suite.manifest.model_copy(update=fields)
    return Suite(manifest.sealed(suite.pairs, suite.candidates), suite.pairs, suite.candidates)


@pytest.mark.parametrize(
    "fields,template",
    [
        ({"default_template": "{answer} {paragraph:transcript}"}, "default"),
        ({"templates": {"chat": "{paragraph:transcript}\n{answer}"}}, "chat"),
    ],
)
def test_a_template_rendering_a_plain_field_as_a_conversation_is_refused(
    quiz_design_suite, tmp_path, capsys, fields, template
):
    first = quiz_design_suite.pairs[0].id
    folder = _with_templates(quiz_design_suite, **fields).save(tmp_path / "s", validated=True)
    with pytest.raises(SuiteValidationError) as error:
        Suite.load(folder)
    message = str(error.value)
    # the words evaluate stops with, naming the template, the field and the first pair
    assert f"template {template!r}" in message
    assert f"pair {first}" in message
    assert "context field 'paragraph' is not a conversation" in message
    assert "render it as {paragraph}" in message
    assert "\n" not in message
    for command in ("validate", "stats"):
        assert main([command, str(folder)]) == SuiteValidationError.exit_status
        assert "context field 'paragraph' is not a conversation" in capsys.readouterr().err


def test_a_conversation_field_is_checked_in_every_context(hh_suite):
    # one context of the 2,303 that holds no conversation: that pair is named
    pairs = list(hh_suite.pairs)
    broken = pairs[-1].model_copy(
        update={"context": {**pairs[-1].context, "dialogue": "Human: hi\n\nAssistant:"}}
    )
    pairs[-1] = broken
    suite = Suite(hh_suite.manifest.sealed(pairs, hh_suite.candidates), pairs, hh_suite.candidates)
    with pytest.raises(SuiteValidationError, match=f"pair {broken.id}: context field 'dialogue'"):
        suite.validate()
    hh_suite.validate()  # the shipped conversations are conversations
