"""evaluation/chat_rendering.py: a model's chat template is data, rendered under a time and a
size bound; each bound is a one-line TemplateError naming the model and the bound."""

from __future__ import annotations

import json
import shutil
import time

import pytest
from transformers import AutoTokenizer

from nnd_suites.cli import main
from nnd_suites.errors import TemplateError
from nnd_suites.evaluation import chat_rendering
from nnd_suites.evaluation.chat_rendering import render_chat_template

TURNS = [
    {"role": "user", "content": "Where is the station?"},
    {"role": "assistant", "content": "Near the park."},
    {"role": "user", "content": "Thanks!"},
]
#: A template as chat models ship them: role tags, tojson, raise_exception, namespace, loop.
SOUND = (
    "{% set ns = namespace(n=0) %}{{ bos_token }}"
    "{% for m in messages %}{% if m['role'] not in ['user', 'assistant'] %}"
    "{{ raise_exception('unknown role') }}{% endif %}{% set ns.n = ns.n + 1 %}"
    "<|{{ m['role'] }}|>{{ m['content'] | tojson }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{{ ns.n }}{% endif %}"
)
HOSTILE = {
    "nested_range": "{% for i in range(100000) %}{% for j in range(100000) %}"
    "{% endfor %}{% endfor %}",
    "nested_small": "{% for i in range(9000) %}{% for j in range(9000) %}{% endfor %}{% endfor %}",
    "multiply": "{{ 'x' * 3000000000 }}",
    "power": "{{ 7 ** 100000000 }}",
    "format_width": "{{ '%3000000000s' % 'x' }}",
    "long_output": "{% for i in range(9000) %}{{ 'y' * 900 }}{% endfor %}",
    # each below the checked operators, yet gigabytes (on a big machine) or a traceback
    "recursion": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    "method_width": "{{ 'x'.ljust(3000000000) }}",
    "filter_width": "{{ 'x' | center(3000000000) }}",
    "json_indent": "{{ messages | tojson(indent=3000000000) }}",
    "brace_width": "{{ '{:>3000000000}'.format('x') }}",
    "filter_format": "{{ '%3000000000s' | format('x') }}",
    "concat": "{% set ns = namespace(s='xy') %}{% for i in range(60) %}"
    "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "indent": "{{ ('x\\n' * 500000) | indent(999999) }}",
    "replace": "{% set big = 'x' * 100000 %}{{ big.replace('x', big) }}",
    "expandtabs": "{{ ('\\t' * 100000).expandtabs(999999) }}",
    "join": "{% set big = 'x' * 999999 %}{{ ''.join([big] * 3000) }}",
    "join_filter": "{% set big = 'x' * 999999 %}{{ ([big] * 3000) | join }}",
    "long_chunks": "{% for i in range(3000) %}{{ 'y' * 999999 }}{% endfor %}",
    # a list of 3,000 references to one long text, made text (3 GB) before any check
    "print_list": "{% set big = 'x' * 999999 %}{{ [big] * 3000 }}",
    "string": "{% set big = 'x' * 999999 %}{{ ([big] * 3000) | string }}",
    "tojson": "{% set big = 'x' * 999999 %}{{ ([big] * 3000) | tojson }}",
    "tojson_gaps": "{{ (range(2000) | list) | tojson(indent=999999) }}",
    "pprint": "{% set big = 'x' * 999999 %}{{ ([big] * 3000) | pprint }}",
    "tilde_list": "{% set big = 'x' * 999999 %}{{ '' ~ ([big] * 3000) }}",
    "percent_list": "{% set big = 'x' * 999999 %}{{ '%s' % ([big] * 3000) }}",
    "percent_keys": "{% set big = 'x' * 999999 %}{{ ('%(a)s' * 200000) % {'a': big} }}",
    "percent_star": "{{ '%*s' % (3000000000, 'x') }}",
    "format_fields": "{% set big = 'x' * 999999 %}{{ ('{0}' * 2000).format(big) }}",
    "format_nested": "{{ ('{0:>{1}}' * 3000).format('x', 999999) }}",
    "join_lists": "{% set big = 'x' * 999999 %}{{ [[big] * 3000] | join }}",
    "wordwrap": "{% set big = 'x' * 999999 %}{{ ('x' * 5000) | wordwrap(1, wrapstring=big) }}",
    "sum_lists": "{% set l = [1] * 999999 %}{{ ([l] * 999999) | sum(start=[]) | length }}",
    "range_negative": "{% set n = 0 - 10 ** 30 %}{% for i in range(n, 0) %}{% endfor %}",
    # each value below the bound, 3 GB held at once: distinct texts made by a filter per item,
    # or by a loop that keeps each one (a list nested in the next)
    "map_copies": "{% set big = 'x' * 999999 %}{{ ([big] * 3000) | map('upper') | list | length }}",
    "kept_in_loop": "{% set big = 'x' * 999999 %}{% set ns = namespace(l=[]) %}"
    "{% for i in range(3000) %}{% set ns.l = [ns.l, big ~ i] %}{% endfor %}",
}
BOUND = {
    "nested_range": "range of 100,000 numbers (at most 10,000)",
    "nested_small": "it ran longer than",
    "multiply": "'*' would build a value of 3,000,000,000",
    "power": "'**' would build a value",
    "format_width": "'%' would build a value",
    "long_output": "a prompt of 8,100,000 characters",
    "recursion": "it nests deeper than",
    "method_width": "an argument of 3,000,000,000",
    "filter_width": "an argument of 3,000,000,000",
    "json_indent": "an argument of 3,000,000,000",
    "brace_width": "a format width of 3,000,000,000",
    "filter_format": "'%' would build a value of 3,000,000,0",
    "concat": "'~' or a block would build a text of more than 1,000,000 characters",
    "indent": "indent would build a text of 500,001,499,999",
    "replace": "replace would build a text of 10,000,100,000",
    "expandtabs": "expandtabs would build a text of 100,",
    "join": "join would build a text of 2,999,997,000",
    "join_filter": "join would build a text of 2,999,997,000",
    "long_chunks": "a prompt of 2,999,997,000 characters",
    "print_list": "printing a value would build a text of more than 1,000,000",
    "string": "|string would build a text of more than 1,000,000",
    "tojson": "|tojson would build a text of more than 1,000,000",
    "tojson_gaps": "|tojson would build a text of more than 1,000,000",
    "pprint": "|pprint would build a text of more than 1,000,000",
    "tilde_list": "'~' or a block would build a text of more than 1,000,000",
    "percent_list": "'%' would build a value of 1,00",
    "percent_keys": "'%' would build a value of 2,000,003",
    "percent_star": "'%' would build a value of 3,000,000,0",
    "format_fields": "format would build a text of more than 1,000,000",
    "format_nested": "a format width of 2,999,997,000",
    "join_lists": "join would build a text of 1,00",
    "wordwrap": "wordwrap would build a text of 5,000,999,999",
    "sum_lists": "sum would build a list of more than 1,000,000 items",
    "range_negative": "range of 1,000,000,000,000,000,000,000,000,000,000 numbers",
    "map_copies": "|map would yield values of more than 1,000,000 characters",
    "kept_in_loop": "it held more than 64 MiB of memory",
}


@pytest.fixture(scope="module")
def tokenizer(tiny_causal_model):
    return AutoTokenizer.from_pretrained(tiny_causal_model)


def test_a_sound_template_renders_as_transformers_renders_it(tokenizer):
    tokenizer.chat_template = SOUND
    expected = tokenizer.apply_chat_template(TURNS, tokenize=False, add_generation_prompt=True)
    assert render_chat_template(tokenizer, TURNS) == expected
    assert expected.endswith("<|assistant|>3") and '"Where is the station?"' in expected


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_template_stops_at_its_bound(tokenizer, monkeypatch, kind):
    monkeypatch.setattr(chat_rendering, "MAX_SECONDS", 1.0)
    monkeypatch.setattr(chat_rendering, "MAX_MEMORY", 64 << 20)  # reached well within the second
    tokenizer.chat_template = HOSTILE[kind]
    started = time.monotonic()
    with pytest.raises(TemplateError) as caught:
        render_chat_template(tokenizer, TURNS)
    assert time.monotonic() - started < 20  # not minutes
    message = str(caught.value)
    assert BOUND[kind] in message and "went past a bound" in message, message
    assert f"model {tokenizer.name_or_path!r}: its chat template" in message
    assert len(message.splitlines()) == 1 and caught.value.exit_status == 8


def test_lipsum_is_refused_not_run(tokenizer):
    """lipsum's random text would make each run's prompt differ, and lipsum(999999) runs for
    hours outside the template's frames, which the clock checks."""
    tokenizer.chat_template = "{{ lipsum(2) }}{{ messages[-1]['content'] }}"
    with pytest.raises(TemplateError) as caught:
        render_chat_template(tokenizer, TURNS)
    assert "forbids (unsafe; nothing of it ran): SecurityError: lipsum" in str(caught.value)


def test_random_is_refused_as_a_prompt_differing_run_to_run(tokenizer):
    """|random drew a different prompt each run (exit 0): scores not reproducible, the cache
    mixing them."""
    tokenizer.chat_template = "{{ ['a', 'b', 'c'] | random }}{{ messages[-1]['content'] }}"
    with pytest.raises(TemplateError) as caught:
        render_chat_template(tokenizer, TURNS)
    assert "SecurityError: random (a prompt differing run to run" in str(caught.value)
    assert caught.value.exit_status == 8


def test_sum_over_lists_adds_each_once(tokenizer):
    """sum added 300,000 one-item lists one by one (hours, in C: out of the clock's reach)."""
    tokenizer.chat_template = (
        "{{ ([[1], [2, 3]] | sum(start=[])) | join(',') }} "
        "{{ ([[1]] * 300000) | sum(start=[]) | length }}{{ messages[-1]['content'] }}"
    )
    started = time.monotonic()
    assert render_chat_template(tokenizer, TURNS[-1:]) == "1,2,3 300000Thanks!"
    assert time.monotonic() - started < 5


def test_the_clock_bound_uses_the_time_given(tokenizer):
    tokenizer.chat_template = HOSTILE["nested_small"]
    started = time.monotonic()
    with pytest.raises(chat_rendering.RenderBound, match="longer than 0.3 seconds"):
        chat_rendering._within_time(
            lambda: chat_rendering._compiled(HOSTILE["nested_small"]).render(), 0.3
        )
    assert time.monotonic() - started < 5


def test_the_command_exits_8_with_the_bound_and_no_traceback(tiny_causal_model, tmp_path, capsys):
    """The probe's case through the CLI: a model folder whose tokenizer_config.json carries the
    string multiplication."""
    folder, status, err = evaluate_chat(tiny_causal_model, tmp_path / "hostile", "multiply", capsys)
    assert status == 8
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert "'*' would build a value of 3,000,000,000" in err and str(folder) in err


#: Templates that drop the turn the response answers: every test would be scored after text that
#: is not its conversation (the probe's case: a pass rate printed with exit status 0).
DROPPING = {
    "constant": "HELLO",
    "roles_only": "{% for m in messages %}<|{{ m['role'] }}|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}",
    "earlier_turns_only": "{% for m in messages[:-1] %}{{ m['content'] }}\n{% endfor %}",
}


@pytest.mark.parametrize("kind", sorted(DROPPING))
def test_a_template_that_leaves_out_the_last_turn_is_refused(tokenizer, kind):
    tokenizer.chat_template = DROPPING[kind]
    with pytest.raises(TemplateError) as caught:
        render_chat_template(tokenizer, TURNS)
    message = str(caught.value)
    assert "leaves out the conversation's last turn (user: 'Thanks!')" in message, message
    assert f"model {tokenizer.name_or_path!r}: its chat template" in message
    assert len(message.splitlines()) == 1 and caught.value.exit_status == 8


def test_a_template_that_escapes_the_last_turn_still_renders(tokenizer):
    """tojson writes a quote or a line break escaped: the text is not in the prompt as it is,
    but the prompt depends on it, so it is kept."""
    tokenizer.chat_template = SOUND
    turns = [*TURNS[:2], {"role": "user", "content": 'Say "hi"\nthen go'}]
    prompt = render_chat_template(tokenizer, turns)
    assert '"Say \\"hi\\"\\nthen go"' in prompt


def test_evaluate_with_a_template_that_drops_the_conversation_exits_8(
    tiny_causal_model, tmp_path, capsys
):
    folder, status, err = evaluate_chat(
        tiny_causal_model, tmp_path / "constant", "constant", capsys
    )
    assert status == 8
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert "leaves out the conversation's last turn" in err and str(folder) in err


def evaluate_chat(tiny_causal_model, folder, kind, capsys):
    """(folder, exit status, stderr) of ``evaluate --template chat`` on hh_rlhf with a copy of
    the tiny model whose tokenizer_config.json carries the template ``kind`` (of HOSTILE or
    DROPPING), as a model repository ships it."""
    folder = shutil.copytree(tiny_causal_model, folder)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text("utf-8"))
    config["chat_template"] = {**HOSTILE, **DROPPING}[kind]
    config_path.write_text(json.dumps(config), "utf-8")
    args = ["--suite", "hh_rlhf", "--model", str(folder), "--limit", "2", "--quiet"]
    status = main(["evaluate", *args, "--template", "chat", "--no-cache"])
    return folder, status, capsys.readouterr().err.strip()


@pytest.mark.parametrize(
    ("expression", "raised"),
    [
        ("1/0", "ZeroDivisionError"),
        ('"{x}".format()', "KeyError"),
        ('"{0}".format()', "IndexError"),
        ("10.0 ** 400", "OverflowError"),
        ("'x' | truncate(-5)", "AssertionError"),
    ],
)
def test_a_template_failing_in_its_own_expression_is_a_named_error(tokenizer, expression, raised):
    """1/0, a missing format key, an overflow or a filter's assert in a chat template escaped as
    a Python traceback (exit 1); it is the one-line TemplateError a ValueError there gives."""
    tokenizer.chat_template = f"{{{{ {expression} }}}}{{{{ messages[-1]['content'] }}}}"
    with pytest.raises(TemplateError) as caught:
        render_chat_template(tokenizer, TURNS)
    message = str(caught.value)
    assert f"failed on this conversation: {raised}" in message
    assert len(message.splitlines()) == 1 and caught.value.exit_status == 8
