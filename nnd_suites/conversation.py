"""Conversations as context: structured turns, the split at the final reply, a safe rendering.

A suite's context fields are strings, so a conversation is kept as one field holding a JSON list
of turns (``[{"role": "user", "content": ...}, ...]``): structured, and the form a tokenizer's
``apply_chat_template`` takes. A template renders it with the ``transcript`` rule
(``{dialogue:transcript}``), a fixed rendering, never code: each turn on its own paragraph as
``Human: ...`` / ``Assistant: ...`` (``System: ...``), the format of Anthropic's HH-RLHF.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from nnd_suites.errors import TemplateError
from nnd_suites.templates import parse_template

Role = Literal["system", "user", "assistant"]
#: How the transcript rule names each role (HH-RLHF's own names).
SPEAKERS: dict[str, str] = {"system": "System", "user": "Human", "assistant": "Assistant"}
TURN_SEPARATOR = "\n\n"


class Turn(BaseModel):
    """One turn of a conversation, in the shape chat templates take."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Role
    content: str


_TURNS = TypeAdapter(list[Turn])


def encode_turns(turns: Sequence[Turn]) -> str:
    """The JSON text a context field holds for ``turns`` (stable: the pair id hashes it)."""
    return json.dumps([turn.model_dump() for turn in turns], ensure_ascii=False)


#: A conversation field with no turns (the transcript rule renders it as nothing): the value
#: of a conversation field in a neutral context (``pmi``), where every field is empty.
EMPTY_CONVERSATION = encode_turns([])


def decode_turns(value: str, field: str = "conversation") -> list[Turn]:
    """The turns held by a context field; a value that is not a list of turns is a TemplateError
    (the template asked for a conversation where the suite has none)."""
    try:
        return _TURNS.validate_json(value)
    except ValidationError as exc:
        problem = exc.errors()[0]
        raise TemplateError(
            f"context field {field!r} is not a conversation (a JSON list of turns with 'role' "
            f"user, assistant or system and 'content'): {problem['msg']} at "
            f"{'.'.join(map(str, problem['loc'])) or 'the value'}; render it as {{{field}}}"
        ) from None


def render_transcript(value: str, field: str = "conversation") -> str:
    """``Human: ...`` / ``Assistant: ...`` paragraphs of the conversation held by ``value``."""
    return TURN_SEPARATOR.join(
        f"{SPEAKERS[turn.role]}: {turn.content}" for turn in decode_turns(value, field)
    )


def conversation_fields(template: str) -> set[str]:
    """The context fields ``template`` renders as conversations (``{field:transcript}``)."""
    return {field for _, field, rule in parse_template(template) if rule == "transcript"}


def rewrite_turns(value: str, rewrite: Callable[[str], str], field: str = "conversation") -> str:
    """The conversation held by ``value`` with ``rewrite`` applied to each turn's content (a
    transformation of a conversation's texts keeps its structure: roles, turns, the JSON)."""
    turns = decode_turns(value, field)
    return encode_turns(
        [turn.model_copy(update={"content": rewrite(turn.content)}) for turn in turns]
    )


def split_final_reply(turns: Sequence[Turn]) -> tuple[list[Turn], str] | None:
    """(the turns before the final reply, the final reply) of a transcript that ends with an
    assistant turn; None when it does not (there is no reply to compare)."""
    if not turns or turns[-1].role != "assistant":
        return None
    return list(turns[:-1]), turns[-1].content


#: The context field and template name a suite gets for a tokenizer's chat template.
CHAT_FIELD = "chat_prompt"
#: The context field holding the chat template over an empty conversation: ``pmi``'s neutral
#: context under the template ``chat`` (absent where the template cannot render one).
CHAT_NEUTRAL_FIELD = "chat_prompt_neutral"
CHAT_TEMPLATE = "chat"


def chat_prompt(tokenizer, value: str, field: str = "conversation") -> str:
    """The context as a chat model sees it: the tokenizer's own chat template over the turns,
    ending with the opening of the assistant's turn (the response is scored as that turn).

    A leading BOS text the template writes is removed: the scorer encodes the context with the
    tokenizer's leading special tokens, and a second BOS would be a context the model never saw.
    """
    if getattr(tokenizer, "chat_template", None) is None:
        raise TemplateError(
            f"the tokenizer {type(tokenizer).__name__} has no chat template; score with the "
            "suite's text template instead"
        )
    turns = [turn.model_dump() for turn in decode_turns(value, field)]
    # lazy: jinja2 and transformers load only when a model's chat template is rendered
    from nnd_suites.chat_rendering import render_chat_template

    prompt = render_chat_template(tokenizer, turns)  # bounded: the template is the model's data
    bos = getattr(tokenizer, "bos_token", None)
    return prompt[len(bos) :] if bos and prompt.startswith(bos) else prompt


def with_chat_prompts(suite, tokenizer):
    """``suite`` with every conversation context also rendered by ``tokenizer``'s chat template,
    in the context field ``chat_prompt``, and the template ``chat`` (``{chat_prompt}``) that
    scores it: ``evaluate(model, with_chat_prompts(suite, tokenizer), template="chat")``, whose
    report records ``template_name == "chat"``. The conversation field is the one the suite's
    default template renders with the ``transcript`` rule."""
    manifest = suite.manifest
    fields = sorted(conversation_fields(manifest.default_template))
    if len(fields) != 1:
        raise TemplateError(
            f"suite {suite.name}: its default template {manifest.default_template!r} renders no "
            "conversation ({field:transcript}), so there are no turns for a chat template"
        )
    if CHAT_FIELD in manifest.context_fields:
        raise TemplateError(f"suite {suite.name} already has a {CHAT_FIELD!r} context field")
    try:  # many templates refuse a conversation without a user turn: then pmi is refused
        neutral = {CHAT_NEUTRAL_FIELD: chat_prompt(tokenizer, EMPTY_CONVERSATION, fields[0])}
    except TemplateError:
        neutral = {}
    rendered: dict[str, str] = {}  # one rendering per distinct conversation
    pairs = []
    for pair in suite.pairs:
        value = pair.context[fields[0]]
        if value not in rendered:
            rendered[value] = chat_prompt(tokenizer, value, fields[0])
        context = {**pair.context, CHAT_FIELD: rendered[value], **neutral}
        pairs.append(pair.model_copy(update={"context": context}))
    return suite.derive(
        pairs,
        context_fields=[*manifest.context_fields, CHAT_FIELD, *neutral],
        templates={**manifest.templates, CHAT_TEMPLATE: "{" + CHAT_FIELD + "}"},
    )
