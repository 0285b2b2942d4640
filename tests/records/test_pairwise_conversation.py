"""Conversations as context: the transcript rendering rule, the chat-template path, and scoring a
pairwise suite (hh_rlhf) with a plain template and with a tiny chat-templated tokenizer."""

from __future__ import annotations

import json
import re
import shutil

import pytest

import nnd_suites
from nnd_suites import build_suite
from nnd_suites.errors import TemplateError
from nnd_suites.evaluation.chat_prompts import chat_prompt, with_chat_prompts
from nnd_suites.records.conversation import Turn, decode_turns, encode_turns, split_final_reply
from nnd_suites.records.templates import parse_template, render_template, template_fields

TURNS = [
    Turn(role="user", content="Hi {there}"),
    Turn(role="assistant", content="Hello."),
    Turn(role="user", content="How are you?"),
]
#: A tiny chat template (Jinja, as tokenizers store them): role tags, then the assistant's tag.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def test_transcript_rule_renders_turns_as_the_release_writes_them():
    context = {"dialogue": encode_turns(TURNS)}
    template = "{dialogue:transcript}\n\nAssistant:"
    assert template_fields(template) == {"dialogue"}
    assert render_template(template, context) == (
        "Human: Hi {there}\n\nAssistant: Hello.\n\nHuman: How are you?\n\nAssistant:"
    )
    # The same field without the rule is the stored JSON, verbatim.
    assert render_template("{dialogue}", context) == context["dialogue"]
    assert decode_turns(context["dialogue"]) == TURNS


@pytest.mark.parametrize(
    "template", ["{dialogue:transcripts}", "{dialogue:>9}", "{dialogue!s:transcript}"]
)
def test_only_the_named_rule_is_allowed(template):
    with pytest.raises(TemplateError, match="only rendering rules are"):
        parse_template(template)


def test_a_field_that_is_not_a_conversation_is_a_template_error():
    with pytest.raises(TemplateError, match="'answer' is not a conversation"):
        render_template("{answer:transcript}", {"answer": "Paris"})
    with pytest.raises(TemplateError, match="not a conversation"):
        render_template("{d:transcript}", {"d": '[{"role": "robot", "content": "x"}]'})


def test_split_final_reply():
    reply = [*TURNS, Turn(role="assistant", content="Fine.")]
    assert split_final_reply(reply) == (TURNS, "Fine.")
    assert split_final_reply(TURNS) is None  # ends with the user: nothing to compare
    assert split_final_reply([]) is None


# ------------------------------------------------------------------------- scoring


@pytest.fixture(scope="module")
def chat_model(tiny_causal_model, tmp_path_factory):
    """The tiny causal model with a chat template added to its tokenizer."""
    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("tiny_chat") / "model"
    shutil.copytree(tiny_causal_model, folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def hh_part(hh_suite):
    """The first 12 conversations of the shipped suite (12 tests)."""
    from nnd_suites.evaluation.prepared import first_groups

    return first_groups(hh_suite, 12)


def test_chat_prompt_is_the_tokenizers_template_without_a_second_bos(chat_model):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(chat_model)
    value = encode_turns(TURNS)
    bos = tokenizer.bos_token
    assert bos and tokenizer.apply_chat_template(
        [t.model_dump() for t in TURNS], tokenize=False, add_generation_prompt=True
    ).startswith(bos)
    assert chat_prompt(tokenizer, value, "dialogue") == (
        "<|user|>\nHi {there}\n<|assistant|>\nHello.\n<|user|>\nHow are you?\n<|assistant|>\n"
    )
    tokenizer.chat_template = None
    with pytest.raises(TemplateError, match="has no chat template"):
        chat_prompt(tokenizer, value, "dialogue")
    # the message named the tokenizer's class (TokenizersBackend), not the model given
    with pytest.raises(
        TemplateError, match=re.escape(f"the tokenizer of '{chat_model}' has no chat")
    ):
        chat_prompt(tokenizer, value, "dialogue")


def test_evaluate_with_the_plain_and_the_chat_template(chat_model, hh_part):
    from transformers import AutoTokenizer

    plain = nnd_suites.evaluate(str(chat_model), hh_part, cache=False, progress=False)
    result = plain.suites["hh_rlhf"]
    assert (result.template_name, result.template) == (
        "default",
        "{dialogue:transcript}\n\nAssistant:",
    )
    assert result.pairs == 12 and result.passed + result.failed + result.ties == 12

    tokenizer = AutoTokenizer.from_pretrained(chat_model)
    chat_suite = with_chat_prompts(hh_part, tokenizer)
    assert [p.id for p in chat_suite.pairs] == [p.id for p in hh_part.pairs]  # same tests
    first = chat_suite.pairs[0].context["chat_prompt"]
    assert first.startswith("<|user|>\nwhat are some pranks with a pen i can do?\n<|assistant|>\n")
    assert first.endswith("<|assistant|>\n")
    chat = nnd_suites.evaluate(
        str(chat_model), chat_suite, template="chat", cache=False, progress=False
    )
    scored = chat.suites["hh_rlhf"]
    assert (scored.template_name, scored.template) == ("chat", "{chat_prompt}")
    assert scored.pairs == 12
    # The same tests, each scored after another rendering of its conversation.
    by_id = {o.pair_id: o for o in plain.outcomes["hh_rlhf"]}
    assert sorted(by_id) == sorted(o.pair_id for o in chat.outcomes["hh_rlhf"])
    assert all(o.ll_high != by_id[o.pair_id].ll_high for o in chat.outcomes["hh_rlhf"])


def test_with_chat_prompts_needs_a_conversation_suite(quiz_design_suite, chat_model):
    from transformers import AutoTokenizer

    with pytest.raises(TemplateError, match="renders no conversation"):
        with_chat_prompts(quiz_design_suite, AutoTokenizer.from_pretrained(chat_model))


def test_a_transformation_rewrites_each_turn_and_keeps_the_conversation():
    """typos on contexts too: each turn's content is rewritten, roles and structure stay."""
    from nnd_suites.builder.adapter import get_adapter
    from nnd_suites.transformations import transform_suite

    fixture = get_adapter("hh_rlhf").folder() / "fixtures" / "hh_sample.jsonl.gz"
    parent = build_suite("hh_rlhf", fixture)
    child = transform_suite(parent, "typos:rate=0.2,seed=1,on=both")
    for old, new in zip(parent.pairs, child.pairs, strict=True):
        before = decode_turns(old.context["dialogue"])
        after = decode_turns(new.context["dialogue"])
        assert [t.role for t in after] == [t.role for t in before]
        render_template(child.manifest.default_template, new.context)  # still renders
    changed = [
        (a.content, b.content)
        for old, new in zip(parent.pairs, child.pairs, strict=True)
        for a, b in zip(
            decode_turns(old.context["dialogue"]),
            decode_turns(new.context["dialogue"]),
            strict=True,
        )
        if a.content != b.content
    ]
    assert changed  # the turns' texts, not the JSON around them, were rewritten


def test_cli_chat_prompts_then_evaluate_with_the_chat_template(chat_model, tmp_path, capsys):
    from nnd_suites.cli import main
    from nnd_suites.resolve import load_suite

    out = tmp_path / "hh_chat"
    assert main(["chat-prompts", "hh_rlhf", "--tokenizer", str(chat_model), "--out", str(out)]) == 0
    assert "--template chat" in capsys.readouterr().out
    chat = load_suite(out)
    assert chat.manifest.templates["chat"] == "{chat_prompt}" and len(chat) == 2303
    run = tmp_path / "run"
    args = ["--suite", str(out), "--template", "chat", "--model", str(chat_model)]
    assert main(["evaluate", *args, "--limit", "3", "--out", str(run)]) == 0
    capsys.readouterr()
    scored = json.loads((run / "report.json").read_text("utf-8"))["suites"]["hh_rlhf"]
    assert (scored["template_name"], scored["template"]) == ("chat", "{chat_prompt}")
    # a suite without conversations is refused with its reason
    assert main(["chat-prompts", "quiz_design", "--tokenizer", str(chat_model)]) != 0
    assert "renders no conversation" in capsys.readouterr().err


def test_the_chat_template_in_one_step_renders_with_the_models_own_tokenizer(chat_model, hh_part):
    """``--template chat`` on a plain suite: the evaluator renders the conversations with the
    scored model's chat template itself (same figures as preparing the suite by hand)."""
    from transformers import AutoTokenizer

    by_hand = with_chat_prompts(hh_part, AutoTokenizer.from_pretrained(chat_model))
    one_step = nnd_suites.evaluate(
        str(chat_model), hh_part, template="chat", cache=False, progress=False
    )
    two_steps = nnd_suites.evaluate(
        str(chat_model), by_hand, template="chat", cache=False, progress=False
    )
    assert one_step.suites["hh_rlhf"].template == "{chat_prompt}"
    assert one_step.suites["hh_rlhf"].overall == two_steps.suites["hh_rlhf"].overall
    assert [o.ll_high for o in one_step.outcomes["hh_rlhf"]] == [
        o.ll_high for o in two_steps.outcomes["hh_rlhf"]
    ]


def test_the_chat_template_needs_a_tokenizer_with_one(tiny_causal_model, hh_part):
    from nnd_suites.errors import NNDError

    with pytest.raises(NNDError, match="has no tokenizer with a chat template"):
        nnd_suites.evaluate(str(tiny_causal_model), hh_part, template="chat", cache=False)


def test_the_chat_template_on_a_suite_without_conversations_blames_the_suite(
    tiny_causal_model, quiz_design_suite
):
    """quiz_design has no conversation: that is the fault to name (its context fields, its own
    templates), not the scored model's tokenizer, which has no chat template either."""
    with pytest.raises(TemplateError) as caught:
        nnd_suites.evaluate(
            str(tiny_causal_model), quiz_design_suite, template="chat", limit=2, cache=False
        )
    message = str(caught.value)
    assert "suite quiz_design has no conversation field" in message
    assert "(context fields: answer, paragraph)" in message
    assert "its own templates (mixqg, prophetnet, macaw)" in message
    assert "tokenizer" not in message
