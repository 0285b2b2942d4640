"""Context templates as data: literal text and ``{field}`` placeholders, nothing else.

One rendering rule may follow a field: ``{dialogue:transcript}`` renders a conversation field (a
JSON list of turns, see :mod:`nnd_suites.records.conversation`) as ``Human: ...`` / ``Assistant:
...`` paragraphs. It is a fixed rule chosen by name, not a format spec: every other spec is refused.

Templates arrive from elsewhere (a suite's manifest downloaded from the Hub, a command line), so
they are never run as Python format strings: ``str.format`` would evaluate attribute lookups
(``{f.__class__}``), indexing, conversions and format specs (``{f:>300000000}`` allocates
gigabytes). A template is parsed once with ``string.Formatter().parse`` and anything beyond a
plain field name is refused; rendering joins the parsed pieces.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from functools import lru_cache

from nnd_suites.errors import TemplateError

FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Rendering rules a field may name after a colon (``{dialogue:transcript}``).
RULES = ("transcript",)
#: A parsed template: (literal text, field name or None, rendering rule or None) pieces, in order.
Pieces = tuple[tuple[str, str | None, str | None], ...]


@lru_cache(maxsize=256)
def parse_template(template: str) -> Pieces:
    """Split ``template`` into (literal, field) pieces; raise TemplateError on anything unsafe."""
    if not isinstance(template, str):
        raise TemplateError(f"a template must be text, got {type(template).__name__}")
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:  # unbalanced braces
        raise TemplateError(
            f"template {template!r} is malformed ({exc}); write fields as {{name}} and "
            "literal braces as {{ and }}"
        ) from None
    pieces: list[tuple[str, str | None, str | None]] = []
    for literal, field, spec, conversion in parsed:
        if field is None:
            pieces.append((literal, None, None))
            continue
        rule = spec if spec in RULES else None
        if conversion is not None or (spec and rule is None) or not FIELD_NAME.fullmatch(field):
            shown = "{" + field + (f"!{conversion}" if conversion else "")
            shown += (f":{spec}" if spec else "") + "}"
            raise TemplateError(
                f"template {template!r}: {shown} is not allowed; templates may only name "
                "context fields as {name} (no attributes, indexing, conversions or format specs; "
                f"the only rendering rules are {list(RULES)}, as {{name:transcript}})"
            )
        pieces.append((literal, field, rule))
    return tuple(pieces)


def template_fields(template: str) -> set[str]:
    """The context fields a template names."""
    return {field for _, field, _ in parse_template(template) if field is not None}


def check_template(template: str, fields: list[str] | tuple[str, ...], where: str) -> None:
    """Refuse a template that is unsafe, names a field outside ``fields``, or names none of
    them (every test would be scored after the same text: ``{{question}}`` is a literal)."""
    try:
        template.encode("utf-8")
    except UnicodeEncodeError as exc:  # a byte not UTF-8 on the command line: a lone surrogate
        raise TemplateError(
            f"{where}: template {template!r} is not valid Unicode (character {exc.start}); "
            "write it in UTF-8"
        ) from None
    try:
        named = template_fields(template)
    except TemplateError as exc:  # unsafe or malformed: say whose template it is
        raise TemplateError(f"{where}: {exc}") from None
    if fields and not named:
        raise TemplateError(
            f"{where}: template {template!r} shows none of the context fields {list(fields)}, "
            "so every test would be scored after the same text; name at least one field as "
            "{name} (doubled braces {{name}} are literal text)"
        )
    unknown = named - set(fields)
    if unknown:
        raise TemplateError(
            f"{where}: template {template!r} uses unknown context field(s) {sorted(unknown)}; "
            f"the context fields are {list(fields)} (escape literal braces as {{{{ }}}})"
        )


def render_template(template: str, context: Mapping[str, str]) -> str:
    """Fill ``template`` with ``context`` values (fields were checked when it was resolved)."""
    parts: list[str] = []
    for literal, field, rule in parse_template(template):
        parts.append(literal)
        if field is None:
            continue
        if rule == "transcript":  # imported here: plain templates need no pydantic parse
            from nnd_suites.records.conversation import render_transcript

            parts.append(render_transcript(context[field], field))
        else:
            parts.append(context[field])
    return "".join(parts)


def conversation_fields(template: str) -> set[str]:
    """The context fields ``template`` renders as conversations (``{field:transcript}``)."""
    return {field for _, field, rule in parse_template(template) if rule == "transcript"}
