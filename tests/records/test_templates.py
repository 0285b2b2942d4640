"""Templates are data: only {field} placeholders, never Python format-string features."""

from __future__ import annotations

import pytest

from nnd_suites.cli import main
from nnd_suites.errors import TemplateError
from nnd_suites.records.templates import parse_template, render_template, template_fields

HOSTILE = [
    "{question:>300000000}",  # format spec: allocates gigabytes under str.format
    "{question:{question.__class__.__name__[0]}^40}",  # nested field
    "{question.__class__.__init__.__globals__}",  # attribute walk
    "{question[0]}",  # indexing
    "{question!r}",  # conversion
    "{0}",  # positional
    "{}",  # auto-numbered
]


@pytest.mark.parametrize("template", HOSTILE)
def test_hostile_templates_are_refused_before_anything_is_evaluated(template: str) -> None:
    with pytest.raises(TemplateError, match="only name context fields"):
        parse_template(template)


@pytest.mark.parametrize("template", ["{answer", "answer}", "{answer} }"])
def test_unbalanced_braces_are_a_named_error(template: str) -> None:
    with pytest.raises(TemplateError, match="malformed") as raised:
        parse_template(template)
    assert "literal braces as {{ and }}" in str(raised.value)  # the advice is itself right


def test_render_fills_fields_and_keeps_escaped_braces() -> None:
    template = "{answer} \\n {paragraph} {{literal}}"
    assert template_fields(template) == {"answer", "paragraph"}
    rendered = render_template(template, {"answer": "Paris", "paragraph": "x {y} z"})
    # Field values are inserted verbatim: braces inside them are never re-interpreted.
    assert rendered == "Paris \\n x {y} z {literal}"


@pytest.mark.parametrize("template", [HOSTILE[0], HOSTILE[2]])
def test_cli_refuses_a_hostile_template_with_its_exit_status(template: str, capsys) -> None:
    status = main(["evaluate", "--suite", "quiz_design", "--model", "x", "--template", template])
    assert status == TemplateError.exit_status
    assert "only name context fields" in capsys.readouterr().err


def test_a_manifest_template_is_checked_when_the_suite_is_evaluated(tmp_path) -> None:
    from nnd_suites.builder.suites import build_suite
    from nnd_suites.evaluation.templates import resolve_template

    suite = build_suite("challenge300")
    suite.manifest.templates["evil"] = HOSTILE[2]
    with pytest.raises(TemplateError, match="not allowed"):
        resolve_template(suite, "evil")


@pytest.mark.parametrize("template", ["{{question}}", "just text", "Q: {{question}}\nA:"])
def test_a_template_that_shows_no_context_field_is_refused(template: str, capsys) -> None:
    """The probe's finding: ``--template '{{question}}'`` (a literal) scored every test after the
    same text, and a manifest's default template without a field was taken too, exit 0."""
    from nnd_suites.builder.suites import build_suite
    from nnd_suites.evaluation.templates import resolve_template

    if "{" in template:  # on the command line, text without braces names a template
        argv = ["evaluate", "--suite", "challenge300", "--model", "x", "--template", template]
        assert main(argv) == TemplateError.exit_status
        assert "shows none of the context fields ['question']" in capsys.readouterr().err
    suite = build_suite("challenge300")
    suite.manifest.default_template = template
    with pytest.raises(TemplateError, match="none of the context fields"):
        resolve_template(suite, None)
    assert resolve_template(suite, "{question} {{literal}}")[1] == "{question} {{literal}}"


def test_a_template_that_is_not_valid_unicode_is_a_named_error(capsys) -> None:
    """`--template $'\\xff {question}'`: Python reads the byte that is not UTF-8 as a lone
    surrogate; the template was taken, and scoring ended in a UnicodeEncodeError traceback at
    the score cache's key."""
    argv = [
        "evaluate",
        "--suite",
        "challenge300",
        "--model",
        "x",
        "--template",
        "\udcff {question}",
    ]
    assert main(argv) == TemplateError.exit_status
    assert "template '\\udcff {question}' is not valid Unicode" in capsys.readouterr().err
