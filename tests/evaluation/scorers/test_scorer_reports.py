"""Every scorer reports what it read: a reference model's truncation (ratio), the context a
reward model's window cut and each candidate's real token count (reward), and the scorer that
made a robustness report's pass rates."""

from __future__ import annotations

import json
import shutil

import pytest
from transformers import AutoTokenizer

import nnd_suites
from nnd_suites.cli import main
from nnd_suites.evaluation import ScoreRequest, load_backend
from nnd_suites.evaluation.prepared import first_groups
from nnd_suites.evaluation.robustness import robustness
from nnd_suites.evaluation.tiny import suite_texts, tiny_causal_lm
from nnd_suites.records.templates import render_template


@pytest.fixture(scope="module")
def quiz_part(quiz_design_suite):
    return first_groups(quiz_design_suite, 3)


@pytest.fixture(scope="module")
def short_reference(tmp_path_factory, quiz_design_suite, challenge300_suite):
    """A reference model with a 64-token window (the scored model has 512), same tokenizer."""
    texts = suite_texts([quiz_design_suite, challenge300_suite])
    folder = tmp_path_factory.mktemp("short_reference") / "reference"
    return tiny_causal_lm(folder, texts, vocab_size=1024, n_positions=64, seed=1)


def test_ratio_reports_the_reference_models_truncation(
    tiny_causal_model, short_reference, quiz_part
):
    model = str(tiny_causal_model)
    alone = nnd_suites.evaluate(model, quiz_part, cache=False, progress=False)
    assert alone.suites[quiz_part.name].truncated_tokens == 0  # 512 tokens hold every context
    ratio = nnd_suites.evaluate(
        model,
        quiz_part,
        scorers="ratio",
        reference_model=str(short_reference),
        cache=False,
        progress=False,
    )
    result = ratio.suites[quiz_part.name]
    contexts = [render_template(result.template, pair.context) for pair in quiz_part.pairs]
    requests = dict.fromkeys(
        ScoreRequest(context, text)
        for context, pair in zip(contexts, quiz_part.pairs, strict=True)
        for text in (pair.high.text, pair.low.text)
    )
    reference = load_backend(str(short_reference), device="cpu")
    cut = sum(score.truncated_tokens for score in reference.score(list(requests)))
    assert cut > 0 and result.truncated_tokens == cut
    assert result.truncated_tests == sum(o.truncated for o in ratio.outcomes[quiz_part.name]) > 0


def test_ratio_counts_the_reference_models_requests_apart(
    tiny_causal_model, short_reference, tmp_path, capsys
):
    """The model's scores in the cache, the reference's not: the run scored the reference's
    requests, which console, report.md and report.json say (they once said '0 requests scored')."""
    cache, out = tmp_path / "cache", tmp_path / "ratio"
    common = ["--suite", "challenge300", "--limit", "5", "--cache-dir", str(cache), "--quiet"]
    assert main(["evaluate", "--model", str(tiny_causal_model), *common]) == 0
    capsys.readouterr()
    ratio = ["--scorer", "ratio", "--reference-model", str(short_reference), "--out", str(out)]
    assert main(["evaluate", "--model", str(tiny_causal_model), *common, *ratio]) == 0
    report = json.loads((out / "report.json").read_text("utf-8"))
    n = report["requests"]["unique"]
    assert report["requests"] == {"tests": 23, "unique": n, "cached": n, "scored": 0}
    assert report["reference_requests"] == {"tests": 23, "unique": n, "cached": 0, "scored": n}
    said = f"0 requests scored, {n} from the cache (reference model {short_reference}: {n} "
    said += "requests scored, 0 from the cache)"
    assert said in capsys.readouterr().out
    assert said in (out / "report.md").read_text("utf-8")
    again = ["--scorer", "ratio", "--reference-model", str(short_reference), "--json"]
    assert main(["evaluate", "--model", str(tiny_causal_model), *common, *again]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["reference_requests"] == {"tests": 23, "unique": n, "cached": n, "scored": 0}
    transformed = ["robustness", "--transform", "lowercase", *common, *again[:-1]]
    assert main([*transformed, "--model", str(tiny_causal_model)]) == 0
    assert f" from the cache (reference model {short_reference}: " in capsys.readouterr().out


def test_reward_reports_real_token_counts_for_the_length_slice(reward_model, quiz_part):
    report = nnd_suites.evaluate(
        str(reward_model), quiz_part, scorers="reward", cache=False, progress=False
    )
    tokenizer = AutoTokenizer.from_pretrained(reward_model)
    rows = report.outcomes[quiz_part.name]
    for pair, row in zip(quiz_part.pairs, rows, strict=True):
        assert row.n_high == len(tokenizer(pair.high.text, add_special_tokens=False)["input_ids"])
        assert row.n_low == len(tokenizer(pair.low.text, add_special_tokens=False)["input_ids"])
    assert len({(row.n_high > row.n_low) - (row.n_high < row.n_low) for row in rows}) > 1


def test_robustness_md_names_the_scorer_mode_and_template(tiny_causal_model, quiz_part, tmp_path):
    out = tmp_path / "rob"
    robustness(
        str(tiny_causal_model),
        [quiz_part],
        ["lowercase"],
        out=out,
        scorers="pmi",
        cache=False,
        progress=False,
    )
    text = (out / "robustness.md").read_text("utf-8")
    assert "Scored with scorer `pmi`, mode `default`, template `default`." in text


CHAT = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


@pytest.mark.parametrize("needs_a_turn", [False, True])
def test_pmi_with_the_chat_template_reads_the_template_over_an_empty_conversation(
    tiny_causal_model, tmp_path, needs_a_turn
):
    """The neutral context is the chat template over no turns ('<|assistant|>\\n'), never the
    empty string; a template that cannot render an empty conversation refuses pmi."""
    from nnd_suites.errors import TemplateError
    from nnd_suites.evaluation.chat_prompts import CHAT_NEUTRAL_FIELD, with_chat_prompts
    from nnd_suites.evaluation.templates import neutral_context

    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_model)
    tokenizer.chat_template = (
        "{% if not messages %}{{ raise_exception('no turns') }}{% endif %}" if needs_a_turn else ""
    ) + CHAT
    folder = tmp_path / "chat"
    shutil.copytree(tiny_causal_model, folder)
    tokenizer.save_pretrained(folder)
    hh = first_groups(nnd_suites.build_suite("hh_rlhf"), 4)
    chat = with_chat_prompts(hh, tokenizer)
    template = chat.manifest.templates["chat"]
    if needs_a_turn:
        assert CHAT_NEUTRAL_FIELD not in chat.pairs[0].context
        with pytest.raises(TemplateError, match="cannot be used with --template chat"):
            nnd_suites.evaluate(str(folder), hh, template="chat", scorers="pmi", cache=False)
        return
    assert neutral_context(template, chat.pairs[0].context) == "<|assistant|>\n"
    report = nnd_suites.evaluate(
        str(folder), hh, template="chat", scorers="pmi", cache=False, progress=False
    )
    backend = load_backend(str(folder), device="cpu")
    rows = report.outcomes[hh.name]
    for pair, row in zip(chat.pairs, rows, strict=True):
        if row.outcome in ("degenerate", "skipped"):
            continue
        prompt = pair.context["chat_prompt"]
        texts = (pair.high.text, pair.low.text)
        after = backend.score([ScoreRequest(prompt, t) for t in texts])
        alone = backend.score([ScoreRequest("<|assistant|>\n", t) for t in texts])
        expected = [a.logprob_sum - b.logprob_sum for a, b in zip(after, alone, strict=True)]
        assert (row.ll_high, row.ll_low) == pytest.approx(expected, abs=1e-4)
