"""Scoring modes: the reference mode against a plain re-implementation of the paper's formula,
and the default mode's handling of the boundary traps."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

from nnd_suites.errors import NNDError
from nnd_suites.evaluation import ScoreRequest, load_backend
from nnd_suites.evaluation.scoring import tokenizer_traits
from nnd_suites.evaluation.tiny import tiny_causal_lm


def _requests(suite, n_pairs: int) -> list[ScoreRequest]:
    template = suite.manifest.default_template
    found: dict[ScoreRequest, None] = {}
    for pair in suite.pairs[:n_pairs]:
        for text in (pair.high.text, pair.low.text):
            found[ScoreRequest(template.format(**pair.context), text)] = None
    return list(found)


def _reference_causal(model, tokenizer, context: str, candidate: str) -> float:
    """salesforce/nnd_evaluation GeneratorHF.score_batch for GPT-2, one request at a time:
    the context is run first, then [bos] + candidate with the context's past key values."""
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else 0
    context_ids = tokenizer(context, add_special_tokens=True)["input_ids"]
    candidate_ids = tokenizer.encode(candidate, add_special_tokens=False)
    decoder_in = torch.tensor([[start, *candidate_ids]])
    decoder_out = torch.tensor([[*candidate_ids, tokenizer.eos_token_id]])
    with torch.no_grad():
        if context_ids:
            past = model(input_ids=torch.tensor([context_ids])).past_key_values
            logits = model(input_ids=decoder_in, past_key_values=past).logits
        else:
            logits = model(input_ids=decoder_in).logits
        losses = torch.nn.CrossEntropyLoss(reduction="none")(logits[0], decoder_out[0])
    return -losses.sum().item() / decoder_out.shape[1]


def _reference_seq2seq(model, tokenizer, context: str, candidate: str, starts=None) -> float:
    """The mean log-probability of the candidate's tokens and EOS, decoded after ``starts``
    (not scored; the reference mode's [bos], 0 when the tokenizer has none)."""
    if starts is None:
        starts = [tokenizer.bos_token_id if tokenizer.bos_token_id is not None else 0]
    encoder_ids = tokenizer([context], add_special_tokens=True, return_tensors="pt").input_ids
    candidate_ids = tokenizer.encode(candidate, add_special_tokens=False)
    decoder_in = torch.tensor([[*starts, *candidate_ids]])
    decoder_out = torch.tensor([[*candidate_ids, tokenizer.eos_token_id]])
    with torch.no_grad():
        logits = model(input_ids=encoder_ids, decoder_input_ids=decoder_in).logits
        scored = logits[0, len(starts) - 1 :]
        losses = torch.nn.CrossEntropyLoss(reduction="none")(scored, decoder_out[0])
    return -losses.sum().item() / decoder_out.shape[1]


@pytest.fixture(scope="module")
def causal(tiny_causal_model):
    return load_backend(str(tiny_causal_model))


@pytest.fixture(scope="module")
def causal_reference(tiny_causal_model):
    return load_backend(str(tiny_causal_model), mode="reference")


def test_reference_mode_matches_the_papers_formula_causal(
    tiny_causal_model, causal_reference, challenge300_suite, quiz_design_suite
):
    requests = _requests(challenge300_suite, 40) + _requests(quiz_design_suite, 12)
    requests.append(ScoreRequest("", "an answer to nothing"))  # empty context
    assert any(r.candidate == "" for r in _requests(challenge300_suite, 807))
    requests.append(ScoreRequest("What is 2 + 2?", ""))  # the empty candidate
    model = AutoModelForCausalLM.from_pretrained(tiny_causal_model).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_model)
    scores = causal_reference.score(requests)
    for request, score in zip(requests, scores, strict=True):
        expected = _reference_causal(model, tokenizer, request.context, request.candidate)
        assert score.mean == pytest.approx(expected, abs=1e-5), request
        assert score.n_targets == len(tokenizer.encode(request.candidate)) + 1


def test_reference_mode_matches_the_papers_formula_seq2seq(tiny_seq2seq_model, challenge300_suite):
    backend = load_backend(str(tiny_seq2seq_model), mode="reference")
    assert backend.name == "hf_seq2seq"
    requests = [*_requests(challenge300_suite, 40), ScoreRequest("Why?", "")]
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_seq2seq_model).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_seq2seq_model)
    for request, score in zip(requests, backend.score(requests), strict=True):
        expected = _reference_seq2seq(model, tokenizer, request.context, request.candidate)
        assert score.mean == pytest.approx(expected, abs=1e-5), request


def test_default_mode_seq2seq_scores_after_the_decoder_start_and_bos(
    tiny_seq2seq_model, challenge300_suite
):
    """The default mode decodes from decoder_start_token_id then BART's <s>, neither scored."""
    backend = load_backend(str(tiny_seq2seq_model))
    requests = [*_requests(challenge300_suite, 40), ScoreRequest("Why?", "")]
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_seq2seq_model).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_seq2seq_model)
    starts = [model.config.decoder_start_token_id, tokenizer.bos_token_id]
    assert starts == [2, 0]  # </s> <s>: the bos is conditioned on, the first target follows it
    for request, score in zip(requests, backend.score(requests), strict=True):
        expected = _reference_seq2seq(model, tokenizer, request.context, request.candidate, starts)
        assert score.mean == pytest.approx(expected, abs=1e-5), request


def test_tokenizer_traits(causal, tiny_seq2seq_model):
    gpt2 = causal.traits
    assert gpt2.space_prefix and gpt2.leading == () and gpt2.trailing == ()
    assert gpt2.bos == gpt2.eos == causal.tokenizer.convert_tokens_to_ids("<|endoftext|>")
    bart = tokenizer_traits(AutoTokenizer.from_pretrained(tiny_seq2seq_model))
    assert bart.leading == (0,) and bart.trailing == (2,) and bart.eos == 2


def test_default_mode_leading_space_and_boundary(causal):
    tokenizer = causal.tokenizer
    context = "The capital of France is Paris. Which city is the capital of France?"
    plain, newline, spaced = causal.layouts(
        [
            ScoreRequest(context + "  ", "Paris"),  # trailing spaces move to the candidate
            ScoreRequest(context + "\n", "Paris"),  # a line break already separates
            ScoreRequest(context, " Paris"),  # the candidate brings its own space
        ]
    )
    context_ids = tuple(tokenizer.encode(context))
    assert plain.prefix == context_ids  # tokenised once, never merged with the candidate
    assert plain.inputs == tuple(tokenizer.encode(" Paris"))
    assert tokenizer.decode(plain.inputs).startswith(" ")
    assert newline.prefix == tuple(tokenizer.encode(context + "\n"))
    assert newline.inputs == tuple(tokenizer.encode("Paris"))
    assert spaced.inputs == tuple(tokenizer.encode(" Paris"))
    # the first candidate token is predicted by the last context token, and scored
    assert plain.first == len(plain.prefix) - 1
    assert plain.targets == (*plain.inputs, tokenizer.eos_token_id)


def test_default_mode_empty_context_and_empty_candidate(causal):
    eos = causal.tokenizer.eos_token_id
    empty_context, empty_candidate = causal.layouts(
        [ScoreRequest("", "What is it?"), ScoreRequest("What is it?", "")]
    )
    assert empty_context.prefix == (causal.tokenizer.bos_token_id,)
    assert empty_context.inputs == tuple(causal.tokenizer.encode("What is it?"))  # no space
    assert empty_candidate.inputs == () and empty_candidate.targets == (eos,)
    first, second = causal.score([ScoreRequest("", "What is it?"), ScoreRequest("What is it?", "")])
    assert first.n_targets == len(empty_context.inputs) + 1 and math.isfinite(first.mean)
    # the empty candidate's score is log P(eos | context), computed directly
    ids = torch.tensor([list(empty_candidate.prefix)])
    with torch.no_grad():
        logits = causal.model(input_ids=ids).logits[0, -1]
    expected = torch.log_softmax(logits.float(), -1)[eos].item()
    assert second.n_targets == 1 and second.mean == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("adds_bos", [True, False])
def test_default_mode_scores_an_empty_context_from_bos_not_eos(
    tmp_path, challenge300_suite, adds_bos
):
    """An empty context becomes [bos] (scoring.py): with GPT-2's one <|endoftext|> for both, a
    start from EOS instead cannot be seen. Here <s> and </s> differ, as in Llama's tokenizer,
    which puts <s> before a text itself (adds_bos) or, with add_bos_token=False, does not."""
    from tokenizers import processors

    from nnd_suites.evaluation.tiny import suite_texts

    texts = suite_texts([challenge300_suite])
    folder = tiny_causal_lm(tmp_path, texts, vocab_size=300, n_layer=1, n_embd=32, bos=True)
    backend = load_backend(str(folder))
    tokenizer = backend.tokenizer
    if not adds_bos:
        tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
            single="$A", pair="$A $B"
        )
    bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
    assert bos != eos and tokenizer("")["input_ids"] == [bos] * adds_bos
    request = ScoreRequest("", "What is it?")
    (layout,) = backend.layouts([request])
    candidate = tokenizer.encode("What is it?", add_special_tokens=False)
    assert layout.prefix == (bos,) and layout.inputs == tuple(candidate)
    with torch.no_grad():
        logits = backend.model(input_ids=torch.tensor([[bos, *candidate]])).logits[0]
    targets = torch.tensor([*candidate, eos])
    expected = torch.log_softmax(logits.float(), -1)[torch.arange(len(targets)), targets].mean()
    assert backend.score([request])[0].mean == pytest.approx(expected.item(), abs=1e-5)


def test_left_truncation_is_counted_and_keeps_the_candidate(tmp_path, challenge300_suite):
    from nnd_suites.evaluation.tiny import suite_texts

    folder = tiny_causal_lm(
        tmp_path / "short",
        suite_texts([challenge300_suite]),
        vocab_size=300,
        n_layer=1,
        n_embd=32,
        n_head=2,
        n_positions=24,
    )
    backend = load_backend(str(folder), strategy="packed")
    context = " ".join(f"word{i}" for i in range(40))
    request = ScoreRequest(context, "a short answer")
    layout = backend.layouts([request])[0]
    full = backend.tokenizer.encode(context)
    assert len(layout.prefix) + len(layout.inputs) == 24
    assert layout.truncated == len(full) - len(layout.prefix) > 0
    assert layout.prefix == tuple(full[-len(layout.prefix) :])  # cut from the left
    assert layout.inputs == tuple(backend.tokenizer.encode(" a short answer"))
    (score,) = backend.score([request])
    assert score.truncated_tokens == layout.truncated
    backend.strategy = "naive"
    assert backend.score([request])[0].mean == pytest.approx(score.mean, abs=1e-5)
    # a candidate that cannot fit even with one context token is skipped with its reason
    (skipped,) = backend.score([ScoreRequest("Why?", " ".join(["long"] * 30))])
    assert skipped.n_targets == 0 and "window of 24 tokens" in skipped.skipped
    assert "never cut" in skipped.skipped
    # a candidate of 23 tokens fits with the one context token that predicts its first; 24 cannot
    fills, over = (ScoreRequest(context, " ".join(["the"] * n)) for n in (23, 24))
    (layout,) = backend.layouts([fills])
    assert len(layout.inputs) == 23  # " the" is one token
    assert layout.prefix == (full[-1],) and layout.truncated == len(full) - 1
    scored, too_long = backend.score([fills, over])
    assert not scored.skipped and scored.n_targets == 24 and too_long.n_targets == 0


def test_seq2seq_encoder_truncation_keeps_special_tokens(tmp_path, challenge300_suite):
    from nnd_suites.evaluation.tiny import suite_texts, tiny_seq2seq_lm

    folder = tiny_seq2seq_lm(
        tmp_path / "s2s",
        suite_texts([challenge300_suite]),
        vocab_size=300,
        layers=1,
        d_model=32,
        heads=2,
        ffn=32,
        max_positions=16,
    )
    backend = load_backend(str(folder))
    (layout,) = backend.layouts([ScoreRequest(" ".join(["why"] * 40), "because")])
    assert len(layout.prefix) == 16 and layout.truncated > 0
    assert layout.prefix[0] == 0 and layout.prefix[-1] == 2  # <s> ... </s> survive
    full = backend.tokenizer(" ".join(["why"] * 40))["input_ids"]
    assert layout.prefix == (full[0], *full[-15:])  # the text between them cut from the left
    assert layout.truncated == len(full) - 16
    assert layout.inputs[:2] == (2, 0)  # decoder_start_token_id, then the target's <s>
    (score,) = backend.score([ScoreRequest(" ".join(["why"] * 40), "because")])
    assert score.truncated_tokens == layout.truncated and math.isfinite(score.mean)


def test_half_precision_keeps_a_fp32_softmax(tiny_causal_model, challenge300_suite):
    requests = _requests(challenge300_suite, 30)
    full = load_backend(str(tiny_causal_model), dtype="fp32").score(requests)
    half = load_backend(str(tiny_causal_model), dtype="bf16")
    assert half.model.dtype == torch.bfloat16
    logits = torch.randn(3, 50, dtype=torch.bfloat16)
    assert half.target_logprobs(logits, torch.tensor([1, 2, 3])).dtype == torch.float32
    scores = half.score(requests)
    assert all(math.isfinite(s.mean) for s in scores)
    assert max(abs(a.mean - b.mean) for a, b in zip(full, scores, strict=True)) < 0.1


def test_unknown_mode_and_strategy_are_errors(tiny_causal_model):
    with pytest.raises(NNDError, match="unknown scoring mode"):
        load_backend(str(tiny_causal_model), mode="paper")
    with pytest.raises(NNDError, match="unknown strategy"):
        load_backend(str(tiny_causal_model), strategy="fastest")
    with pytest.raises(NNDError, match="batch size"):
        load_backend(str(tiny_causal_model), batch_size="0")
