"""Context templates: a suite stores contexts as named fields; a template renders them as text.

A run's template is the suite's default, one of the suite's named templates (by model family,
e.g. ``macaw``), or a format string over the suite's context fields (``"{question}"``).
"""

from __future__ import annotations

from nnd_suites.adapter import template_fields
from nnd_suites.errors import NNDError, UnknownItemError
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
            [
                "default",
                *manifest.templates,
                "or a format string such as '{" + manifest.context_fields[0] + "}'",
            ],
        )
    unknown = template_fields(text) - set(manifest.context_fields)
    try:
        text.format(**dict.fromkeys(manifest.context_fields, ""))
    except (IndexError, ValueError, KeyError) as exc:
        unknown = unknown or {str(exc)}
    if unknown:
        raise NNDError(
            f"template {text!r} for suite {suite.name} uses unknown or malformed "
            f"field(s) {sorted(unknown)}; its context fields are "
            f"{manifest.context_fields} (escape literal braces as {{{{ }}}})"
        )
    return name, text


def render(template: str, context: dict[str, str]) -> str:
    return template.format(**context)
