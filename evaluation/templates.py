"""Context templates: a suite stores contexts as named fields; a template renders them as text.

A run's template is the suite's default, one of the suite's named templates (by model family,
e.g. ``macaw``), or a format string over the suite's context fields (``"{question}"``).
"""

from __future__ import annotations

from collections.abc import Iterable

from nnd_suites.errors import UnknownItemError
from nnd_suites.records.conversation import EMPTY_CONVERSATION
from nnd_suites.records.templates import check_template, conversation_fields, render_template
from nnd_suites.suite import Suite


def resolve_template(suite: Suite, template: str | None) -> tuple[str, str]:
    """(name, format string) of the template to use for ``suite``."""
    manifest = suite.manifest
    if template is None or template == "default":
        name, text = "default", manifest.default_template
    elif template in manifest.templates:
        name, text = template, manifest.templates[template]
    elif "{" in template:
        name, text = "custom", template
    else:
        raise UnknownItemError(
            f"template of suite {suite.name}",
            template,
            ["default", *manifest.templates],
            hint="or give a template such as '{" + manifest.context_fields[0] + "}'",
        )
    check_template(text, manifest.context_fields, f"suite {suite.name}")
    return name, text


def neutral_context(template: str, fields: Iterable[str]) -> str:
    """The template with every field empty: the context a scorer such as ``pmi`` scores a
    candidate after, to take out how likely the text is on its own. A conversation field
    (``{dialogue:transcript}``) is an empty conversation, which renders as nothing: the neutral
    context of ``{dialogue:transcript}\\n\\nAssistant:`` is ``\\n\\nAssistant:``."""
    conversations = conversation_fields(template)
    empty = {field: EMPTY_CONVERSATION if field in conversations else "" for field in fields}
    return render_template(template, empty)
