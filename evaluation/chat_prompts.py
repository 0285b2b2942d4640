"""Chat prompts: a suite's conversation contexts rendered by a model's own chat template (its
tokenizer's ``apply_chat_template``), for scoring with the template ``chat``. The conversation
records are :mod:`nnd_suites.records.conversation`."""

from __future__ import annotations

from nnd_suites.errors import TemplateError
from nnd_suites.records.conversation import decode_turns
from nnd_suites.records.templates import conversation_fields

#: The context field and template name a suite gets for a tokenizer's chat template.
CHAT_FIELD = "chat_prompt"
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
    # lazy: jinja2 comes with transformers, which a tokenizer has loaded already
    from jinja2 import TemplateError as JinjaError
    from jinja2.exceptions import SecurityError, TemplateSyntaxError

    try:
        prompt = tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True)
    except JinjaError as exc:  # the template is data from the model's repository, not our code
        model = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
        what = (
            "tried something the sandbox forbids (unsafe; nothing of it ran)"
            if isinstance(exc, SecurityError)
            else "is malformed"
            if isinstance(exc, TemplateSyntaxError)
            else "failed on this conversation"
        )
        raise TemplateError(
            f"model {model!r}: its chat template (chat_template in tokenizer_config.json or "
            f"chat_template.jinja) {what}: {type(exc).__name__}: {str(exc).rstrip('.')}. Fix "
            "or remove the model's chat template, or score the suite with its own text template "
            "(without --template chat)"
        ) from exc
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
    rendered: dict[str, str] = {}  # one rendering per distinct conversation
    pairs = []
    for pair in suite.pairs:
        value = pair.context[fields[0]]
        if value not in rendered:
            rendered[value] = chat_prompt(tokenizer, value, fields[0])
        pairs.append(
            pair.model_copy(update={"context": {**pair.context, CHAT_FIELD: rendered[value]}})
        )
    return suite.derive(
        pairs,
        context_fields=[*manifest.context_fields, CHAT_FIELD],
        templates={**manifest.templates, CHAT_TEMPLATE: "{" + CHAT_FIELD + "}"},
    )
