"""Chat prompts: a suite's conversation contexts rendered by a model's own chat template (its
tokenizer's ``apply_chat_template``), for scoring with the template ``chat``. The conversation
records are :mod:`nnd_suites.records.conversation`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from nnd_suites.errors import NNDError, TemplateError
from nnd_suites.records.conversation import EMPTY_CONVERSATION, decode_turns
from nnd_suites.records.templates import conversation_fields

if TYPE_CHECKING:  # annotations only: this module stays a leaf of the evaluator's imports
    from nnd_suites.evaluation.backend import Backend
    from nnd_suites.suite import Suite

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
        named = getattr(tokenizer, "name_or_path", None) or type(tokenizer).__name__
        raise TemplateError(
            f"the tokenizer of {named!r} has no chat template: give a chat model's tokenizer, "
            "or score with the suite's text template instead"
        )
    turns = [turn.model_dump() for turn in decode_turns(value, field)]
    # lazy: jinja2 and transformers load only when a model's chat template is rendered
    from nnd_suites.evaluation.chat_rendering import render_chat_template

    prompt = render_chat_template(tokenizer, turns)  # bounded: the template is the model's data
    bos = getattr(tokenizer, "bos_token", None)
    return prompt[len(bos) :] if bos and prompt.startswith(bos) else prompt


def conversation_field(suite: Suite) -> str:
    """The one context field ``suite``'s default template renders as a conversation
    (``{field:transcript}``): the turns a chat template renders; refused, naming the suite's
    context fields, when there is none."""
    manifest = suite.manifest
    fields = sorted(conversation_fields(manifest.default_template))
    if len(fields) != 1:
        raise TemplateError(
            f"suite {suite.name} has no conversation field (context fields: "
            f"{', '.join(manifest.context_fields)}): its default template "
            f"{manifest.default_template!r} renders no conversation ({{field:transcript}}), so "
            f"there are no turns for a model's chat template (template {CHAT_TEMPLATE}); score "
            f"it with its own templates ({', '.join(manifest.templates) or 'its default'})"
        )
    return fields[0]


def chat_source_field(suite: Suite) -> str:
    """The conversation field :func:`with_chat_prompts` renders, checked before any tokenizer
    is loaded: a suite with no conversation, or one rendered already, is refused."""
    field = conversation_field(suite)
    if CHAT_FIELD in suite.manifest.context_fields:
        raise TemplateError(f"suite {suite.name} already has a {CHAT_FIELD!r} context field")
    return field


def with_chat_prompts(suite, tokenizer):
    """``suite`` with every conversation context also rendered by ``tokenizer``'s chat template,
    in the context field ``chat_prompt``, and the template ``chat`` (``{chat_prompt}``) that
    scores it: ``evaluate(model, with_chat_prompts(suite, tokenizer), template="chat")``, whose
    report records ``template_name == "chat"``. The conversation field is the one the suite's
    default template renders with the ``transcript`` rule."""
    manifest = suite.manifest
    field = chat_source_field(suite)
    try:  # many templates refuse a conversation without a user turn: then pmi is refused
        neutral = {CHAT_NEUTRAL_FIELD: chat_prompt(tokenizer, EMPTY_CONVERSATION, field)}
    except TemplateError:
        neutral = {}
    rendered: dict[str, str] = {}  # one rendering per distinct conversation
    pairs = []
    for pair in suite.pairs:
        value = pair.context[field]
        if value not in rendered:
            rendered[value] = chat_prompt(tokenizer, value, field)
        context = {**pair.context, CHAT_FIELD: rendered[value], **neutral}
        pairs.append(pair.model_copy(update={"context": context}))
    return suite.derive(
        pairs,
        context_fields=[*manifest.context_fields, CHAT_FIELD, *neutral],
        templates={**manifest.templates, CHAT_TEMPLATE: "{" + CHAT_FIELD + "}"},
    )


def chat_rendering(scorer: Backend) -> Callable[[Suite], Suite]:
    """What renders a suite's conversations by the model's chat template (template ``chat``):
    part of this run's scoring, not of the tests (:func:`prepare_suites` keeps the suite's own
    content hash as their identity). A suite written by ``chat-prompts`` is rendered anew by a
    model with a chat template of its own (its prompts came from the tokenizer it was given,
    perhaps another model's); a backend without one (a served model) scores the prompts it
    holds, and a template named ``chat`` that a suite declares itself is kept."""
    tokenizer = getattr(scorer, "tokenizer", None)
    own = tokenizer is not None and bool(getattr(tokenizer, "chat_template", None))

    def render(suite: Suite) -> Suite:
        declared = suite.manifest.templates.get(CHAT_TEMPLATE)
        if declared is not None:
            if not (own and declared == "{" + CHAT_FIELD + "}"):
                return suite
            suite = _without_chat_prompts(suite)
        conversation_field(suite)  # a suite with no conversation is the fault, not the model
        if not own:
            raise NNDError(
                f"--template {CHAT_TEMPLATE}: backend {scorer.name} has no tokenizer with a chat "
                "template; score a Hugging Face chat model, or use the suite's own templates"
            )
        return with_chat_prompts(suite, tokenizer)

    return render


def _without_chat_prompts(suite: Suite) -> Suite:
    """A ``chat-prompts`` suite as it was before its conversations were rendered."""
    rendered = {CHAT_FIELD, CHAT_NEUTRAL_FIELD}
    manifest = suite.manifest
    pairs = [
        pair.model_copy(
            update={"context": {k: v for k, v in pair.context.items() if k not in rendered}}
        )
        for pair in suite.pairs
    ]
    return suite.derive(
        pairs,
        context_fields=[name for name in manifest.context_fields if name not in rendered],
        templates={k: v for k, v in manifest.templates.items() if k != CHAT_TEMPLATE},
    )
