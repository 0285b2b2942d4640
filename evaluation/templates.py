"""Context templates: a suite stores contexts as named fields; a template renders them as text.

A run's template is the suite's default, one of the suite's named templates (by model family,
e.g. ``macaw``), or a format string over the suite's context fields (``"{question}"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from nnd_suites.errors import TemplateError, UnknownItemError
from nnd_suites.evaluation.chat_prompts import CHAT_FIELD, CHAT_NEUTRAL_FIELD
from nnd_suites.records.conversation import EMPTY_CONVERSATION
from nnd_suites.records.templates import (
    check_template,
    conversation_fields,
    parse_template,
    render_template,
)
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


def neutral_context(template: str, fields: Iterable[str] | Mapping[str, str]) -> str:
    """The template with every field empty: the context a scorer such as ``pmi`` scores a
    candidate after, to take out how likely the text is on its own. A conversation field
    (``{dialogue:transcript}``) is an empty conversation, which renders as nothing: the neutral
    context of ``{dialogue:transcript}\\n\\nAssistant:`` is ``\\n\\nAssistant:``. A chat prompt
    (``--template chat``) is the model's chat template over an empty conversation, which
    :func:`with_chat_prompts` stored beside it in the pair's ``fields``."""
    conversations = conversation_fields(template)
    empty = {field: EMPTY_CONVERSATION if field in conversations else "" for field in fields}
    if CHAT_FIELD in {field for _, field, _ in parse_template(template)}:
        if not isinstance(fields, Mapping) or CHAT_NEUTRAL_FIELD not in fields:
            raise TemplateError(
                f"template {template!r} renders the chat prompt, and the suite holds no "
                f"rendering of the chat template over an empty conversation ({CHAT_NEUTRAL_FIELD}"
                "): the model's chat template cannot render one, or the suite was made before "
                "it was stored; a scorer that reads a neutral context (pmi) cannot be used with "
                "--template chat here"
            )
        empty[CHAT_FIELD] = fields[CHAT_NEUTRAL_FIELD]
    return render_template(template, empty)
