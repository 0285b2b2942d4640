"""The one renderer of every Markdown report: a jinja2 template per report kind lays out the
figures its Python side computed, formatted by :mod:`nnd_suites.infra.formatting`.

A template sees each number formatter of that module as a filter of the same name (``{{ rate |
percent }}``, ``{{ n | plural("test") }}``; ``count`` is ours, not jinja's alias of ``length``),
``code`` (``{{ model | code }}``: the one inline code span, safe for any text) and ``table`` as
a global, so every table cell is escaped by the one cell writer. Reports are
Markdown, not HTML: nothing is HTML-escaped; a value a template does not receive is an error,
never an empty string in a report.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

from nnd_suites.infra import formatting

FILTERS = {
    name: getattr(formatting, name)
    for name in (
        "percent",
        "points",
        "interval",
        "rate_with_interval",
        "difference_with_interval",
        "p_value",
        "number",
        "number_interval",
        "count",
        "plural",
        "cell",
        "code",
    )
}


@cache
def _environment(folder: Path) -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        # a block tag's own line leaves no blank line nor indentation in the report
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters.update(FILTERS)
    environment.globals["table"] = formatting.table
    return environment


def render(template: Path, **values: object) -> str:
    """``template`` (a file shipped beside the code that computes ``values``) rendered."""
    return _environment(template.parent).get_template(template.name).render(**values)
