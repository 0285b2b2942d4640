"""The one renderer of the reports' Markdown templates (:mod:`nnd_suites.infra.markdown`), on the
bias baselines of the shipped Challenge 300 suite."""

from __future__ import annotations

import jinja2
import pytest

from nnd_suites.evaluation.baselines import TEMPLATE, baselines, baselines_markdown
from nnd_suites.infra.markdown import render


@pytest.fixture(scope="module")
def result(challenge300_suite):
    return baselines(challenge300_suite)


def test_a_value_the_template_is_not_given_is_an_error_not_an_empty_text(result):
    """A value missing from a template's call would print as nothing in the report."""
    given = {"suite": result["suite"], "tests": result["tests"], "degenerate": 0}
    with pytest.raises(jinja2.UndefinedError, match="'header' is undefined"):
        render(TEMPLATE, **given, rows=[], baselines=result["baselines"])


def test_reports_are_markdown_not_html(result):
    """Nothing is HTML-escaped (a `<`, `&` or quote in a name stays as it is); a `|` in a table
    cell is escaped by the one cell writer."""
    named = {**result, "suite": "Q&A <v2> 'x'"}
    text = baselines_markdown(named)
    assert text.startswith("Bias baselines on Q&A <v2> 'x' (807 tests; a tie is not a pass;")
    renamed = {**result, "baselines": {"a|b": result["baselines"]["shorter"]}}
    assert "\n| a\\|b | " in baselines_markdown(renamed)
