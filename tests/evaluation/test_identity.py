"""Score identity of in-memory models: the cache scope covers the weights and the tokenizer, so a
model whose weights changed is scored again, and equal weights still share their scores."""

from __future__ import annotations

import copy
import os

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import AutoModelForCausalLM, AutoTokenizer

import nnd_suites
from nnd_suites.errors import ModelLoadError
from nnd_suites.evaluation.cache import scope_of
from nnd_suites.evaluation.in_memory import backend_for_model

PROFILE = settings(
    settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def model_and_tokenizer(tiny_causal_model):
    model = AutoModelForCausalLM.from_pretrained(tiny_causal_model)
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_model)
    return model, tokenizer


def _scope(model, tokenizer) -> str:
    return scope_of(backend_for_model(model, tokenizer).identity)


@PROFILE
@given(data=st.data())
def test_models_differing_in_any_one_parameter_never_share_a_scope(model_and_tokenizer, data):
    model, tokenizer = model_and_tokenizer
    names = [name for name, _ in model.named_parameters()]
    name = data.draw(st.sampled_from(names), label="parameter")
    parameter = dict(model.named_parameters())[name]
    index = data.draw(st.integers(0, parameter.numel() - 1), label="element")
    flat = parameter.data.view(-1)
    old = float(flat[index])
    new = data.draw(
        st.floats(width=32, allow_nan=False).filter(lambda v: v != old), label="new value"
    )
    before = _scope(model, tokenizer)
    try:
        flat[index] = new  # through .data: no autograd version counter sees this change
        assert _scope(model, tokenizer) != before
    finally:
        flat[index] = old
    assert _scope(model, tokenizer) == before


def test_equal_weights_and_tokenizers_share_a_scope_and_tokenizers_count(
    tiny_causal_model, model_and_tokenizer
):
    model, tokenizer = model_and_tokenizer
    again = AutoModelForCausalLM.from_pretrained(tiny_causal_model)
    scope = _scope(model, tokenizer)
    assert _scope(again, AutoTokenizer.from_pretrained(tiny_causal_model)) == scope
    assert _scope(copy.deepcopy(model), tokenizer) == scope
    half = copy.deepcopy(model).to(torch.float16)
    assert _scope(half, tokenizer) != scope  # another dtype, other scores
    padded = AutoTokenizer.from_pretrained(tiny_causal_model)
    padded.add_tokens(["<new-token>"])
    with pytest.raises(ModelLoadError, match="1025 tokens but the model's input embedding only"):
        _scope(model, padded)  # its new id has no embedding row (hf_load_check)
    wider = copy.deepcopy(model)
    wider.resize_token_embeddings(len(padded))
    assert _scope(wider, padded) != _scope(wider, tokenizer)  # the same weights


def test_evaluating_again_after_changing_the_weights_gives_the_fresh_figures(
    tiny_causal_model, challenge300_suite, tmp_path
):
    """Issue 21: the second call returned the first call's figures from the cache."""
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(tiny_causal_model)
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_model)
    options = {"progress": False, "limit": 40, "batch_size": 8, "cache_dir": tmp_path}
    first = nnd_suites.evaluate((model, tokenizer), challenge300_suite, **options)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn_like(parameter))
    second = nnd_suites.evaluate((model, tokenizer), challenge300_suite, **options)
    fresh = nnd_suites.evaluate((model, tokenizer), challenge300_suite, **options, cache=False)
    assert second.requests.cached == 0 and second.requests.scored == first.requests.scored
    lls = [o.ll_high for o in second.outcomes["challenge300"]]
    assert lls == [o.ll_high for o in fresh.outcomes["challenge300"]]
    assert lls != [o.ll_high for o in first.outcomes["challenge300"]]
    assert second.backend["weights"] != first.backend["weights"]
    third = nnd_suites.evaluate((model, tokenizer), challenge300_suite, **options)
    assert third.requests.scored == 0  # the same weights: every score from the cache
    assert [o.ll_high for o in third.outcomes["challenge300"]] == lls


def test_the_same_weights_under_another_config_never_reuse_the_scores(
    tiny_causal_model, challenge300_suite, tmp_path
):
    """The weights of one folder under another config (attention not scaled): other scores,
    which the cache gave back as the first model's (its scope held weights and tokenizer only)."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal_model)
    other = AutoModelForCausalLM.from_pretrained(tiny_causal_model, scale_attn_weights=False)
    options = {"progress": False, "limit": 5, "cache_dir": tmp_path}
    model = AutoModelForCausalLM.from_pretrained(tiny_causal_model)
    first = nnd_suites.evaluate((model, tokenizer), challenge300_suite, **options)
    second = nnd_suites.evaluate((other, tokenizer), challenge300_suite, **options)
    fresh = nnd_suites.evaluate((other, tokenizer), challenge300_suite, **options, cache=False)
    assert second.requests.cached == 0
    lls = [o.ll_high for o in second.outcomes["challenge300"]]
    assert lls == [o.ll_high for o in fresh.outcomes["challenge300"]]
    assert lls != [o.ll_high for o in first.outcomes["challenge300"]]
    assert _scope(other, tokenizer) != _scope(model, tokenizer)


def test_weights_that_cannot_be_read_are_never_reused_from_the_cache(tiny_causal_model, caplog):
    """Offloaded weights (on the meta device) cannot be hashed: each fingerprint is then new, so
    no score is ever taken from the cache for them, and a warning says so."""
    from transformers import AutoConfig

    from nnd_suites.evaluation.fingerprint import weights_fingerprint

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(tiny_causal_model))
    with caplog.at_level("WARNING"):
        first, second = weights_fingerprint(model), weights_fingerprint(model)
    assert first != second and first.startswith("unreadable:")
    assert "not reused from the score cache" in caplog.text
