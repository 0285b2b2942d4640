"""evaluation/backends/hf_load_check.py: a model is scored only where its likelihood (or reward)
is defined. Each case is a tiny model with random weights built here, and each must end in a
named one-line error (the CLI's exit status, no traceback), never a pass rate."""

from __future__ import annotations

import json
import logging
import math

import pytest
import torch
from transformers import (
    AutoConfig,
    AutoTokenizer,
    BertConfig,
    BertForMaskedLM,
    GPT2Config,
    GPT2ForSequenceClassification,
    GPT2LMHeadModel,
)

from nnd_suites.cli import main
from nnd_suites.errors import ModelLoadError, ScoringError
from nnd_suites.evaluation import ScoreRequest, load_backend
from nnd_suites.evaluation.backends.hf_load_check import check_loading_report, input_window
from nnd_suites.evaluation.in_memory import backend_for_model

REQUESTS = [
    ScoreRequest("Question: where is the station?", " Near the park."),
    ScoreRequest("Question: where is the station?", " Blue is a colour."),
]


def _save(model, tokenizer, folder):
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tokenizer(tiny_causal_model):
    return AutoTokenizer.from_pretrained(tiny_causal_model)


@pytest.fixture(scope="module")
def classifier_folders(tiny_causal_model, tokenizer, tmp_path_factory):
    """GPT2ForSequenceClassification checkpoints (score.weight, no lm_head): one with its head
    untied (an LM head would be made at random), one tied to the input embedding (GPT-2's)."""
    folders = {}
    for tied in (False, True):
        config = AutoConfig.from_pretrained(
            tiny_causal_model, num_labels=1, tie_word_embeddings=tied
        )
        config.pad_token_id = tokenizer.eos_token_id
        torch.manual_seed(0)
        folder = tmp_path_factory.mktemp("classifier") / f"tied-{tied}"
        folders[tied] = _save(GPT2ForSequenceClassification(config), tokenizer, folder)
    return folders


@pytest.fixture(scope="module")
def bert_folder(tokenizer, tmp_path_factory):
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    return _save(BertForMaskedLM(config), tokenizer, tmp_path_factory.mktemp("bert") / "bert")


def _gpt2(vocab: int, positions: int, tokenizer, *, reward: bool = False):
    config = GPT2Config(
        vocab_size=vocab, n_positions=positions, n_embd=32, n_layer=1, n_head=2, num_labels=1
    )
    config.pad_token_id = tokenizer.eos_token_id
    torch.manual_seed(0)
    return (GPT2ForSequenceClassification if reward else GPT2LMHeadModel)(config).eval()


@pytest.fixture(scope="module")
def small_embedding_folder(tokenizer, tmp_path_factory):
    """A causal LM whose embedding has 200 rows, saved with a 1,024-token tokenizer."""
    model = _gpt2(200, 512, tokenizer)
    return _save(model, tokenizer, tmp_path_factory.mktemp("small") / "small")


def _cli_refuses(
    args: list[str], capsys, *phrases: str, status: int = ModelLoadError.exit_status
) -> str:
    done = main(["evaluate", "--suite", "challenge300", "--limit", "3", "--quiet", *args])
    captured = capsys.readouterr()
    assert done == status, captured.err
    error = captured.err.strip()
    assert "Traceback" not in error and len(error.splitlines()) == 1, error
    assert "pass rate" not in captured.out.lower() and "%" not in captured.out
    for phrase in phrases:
        assert phrase in error, error
    return error


# ---------------------------------------------------------- newly initialised weights
def test_a_classifier_without_an_lm_head_is_refused_not_scored_at_random(
    classifier_folders, capsys
):
    """Untied: lm_head.weight would be made at random on each load (46.2% then 61.5%)."""
    error = _cli_refuses(
        ["--model", str(classifier_folders[False]), "--device", "cpu"],
        capsys,
        "lm_head.weight",
        "newly initialised",
        "--scorer reward",
    )
    assert "backend hf_causal" in error


def test_a_classifier_with_a_tied_head_is_refused_as_another_tasks_model(
    classifier_folders, capsys
):
    """Tied: no weight is missing, but the checkpoint holds score.weight, which the LM does not
    read: it was saved as a classifier, its body was not trained to predict tokens."""
    _cli_refuses(
        ["--model", str(classifier_folders[True]), "--device", "cpu"],
        capsys,
        "saved as GPT2ForSequenceClassification",
        "score.weight",
        "hf_reward",
    )


def test_the_cache_keeps_nothing_of_a_refused_model(classifier_folders, capsys, tmp_path):
    """With the cache on, the refused model leaves no scores under its file's sha256: the
    second run is refused the same way, never served from the cache."""
    for _ in range(2):
        _cli_refuses(["--model", str(classifier_folders[False]), "--device", "cpu"], capsys)
    with pytest.raises(ModelLoadError, match="newly initialised"):
        load_backend(str(classifier_folders[False])).score(REQUESTS)


def test_a_causal_lm_given_to_the_reward_backend_is_refused(tiny_causal_model, capsys, tmp_path):
    """A causal LM folder whose config has one label would get a random score head."""
    folder = tmp_path / "one-label"
    config = json.loads((tiny_causal_model / "config.json").read_text("utf-8"))
    folder.mkdir()
    for path in tiny_causal_model.iterdir():
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "config.json").write_text(json.dumps({**config, "num_labels": 1}), "utf-8")
    _cli_refuses(
        ["--model", str(folder), "--scorer", "reward", "--device", "cpu"],
        capsys,
        "score.weight",
        "newly initialised",
        "backend hf_reward",
        "--scorer normalised",
    )


# ----------------------------------------------------------------- not a decoder
def test_an_encoder_masked_lm_is_refused_as_a_causal_lm(bert_folder, capsys):
    """AutoModelForCausalLM gives BertLMHeadModel with is_decoder=False: bidirectional."""
    _cli_refuses(
        ["--model", str(bert_folder), "--device", "cpu"],
        capsys,
        "is not a decoder",
        "BertLMHeadModel",
        "masked LM",
    )


def test_the_refusal_is_one_line_when_transformers_logs_to_the_root_logger(
    bert_folder, capsys, monkeypatch
):
    """Under CI=1 transformers' logger propagates to the root logger, and a process that
    imported transformers before main() keeps the level it started with: its load warnings
    would come out in nnd-suites' format, above the one-line error."""
    transformers_logger = logging.getLogger("transformers")
    monkeypatch.setattr(transformers_logger, "propagate", True)
    monkeypatch.setattr(transformers_logger, "level", logging.WARNING)
    _cli_refuses(["--model", str(bert_folder), "--device", "cpu"], capsys, "is not a decoder")


def test_an_in_memory_encoder_or_headless_model_is_refused(bert_folder, tokenizer, reward_model):
    from transformers import BertLMHeadModel

    encoder = BertLMHeadModel.from_pretrained(bert_folder)
    with pytest.raises(ModelLoadError, match="is not a decoder"):
        backend_for_model(encoder, tokenizer)
    classifier = GPT2ForSequenceClassification.from_pretrained(reward_model)
    with pytest.raises(ModelLoadError, match="has no LM head"):
        backend_for_model(classifier, tokenizer)


def test_the_decoder_check_passes_real_decoders(tiny_causal_model, tokenizer):
    """The same check on a GPT-2 (loaded, and in memory in train mode) lets it score."""
    scores = load_backend(str(tiny_causal_model), device="cpu").score(REQUESTS)
    assert all(math.isfinite(s.mean) for s in scores)
    model = GPT2LMHeadModel.from_pretrained(tiny_causal_model).train()
    assert backend_for_model(model, tokenizer).score(REQUESTS) == scores
    assert model.training  # the probe restored the caller's mode


# ------------------------------------------------------------- token ids
def test_a_tokenizer_larger_than_the_embedding_is_refused(
    small_embedding_folder, tokenizer, capsys
):
    error = _cli_refuses(
        ["--model", str(small_embedding_folder), "--device", "cpu"],
        capsys,
        f"{len(tokenizer)} tokens",
        "only 200 rows",
    )
    assert "IndexError" not in error
    with pytest.raises(ModelLoadError, match="only 200 rows"):
        backend_for_model(GPT2LMHeadModel.from_pretrained(small_embedding_folder), tokenizer)


def test_every_request_id_is_checked_before_scoring(tiny_causal_model, tokenizer, monkeypatch):
    """A tokenizer that gives an id its length does not count (an added token the embedding
    lacks) is stopped before the forward pass."""
    backend = load_backend(str(tiny_causal_model), device="cpu")
    backend.model, backend.traits  # noqa: B018 - loaded (and checked) with the right tokenizer
    rows = backend.model.get_input_embeddings().weight.shape[0]
    real = type(backend.tokenizer).__call__

    def beyond(self, *args, **kwargs):
        encoded = real(self, *args, **kwargs)
        encoded["input_ids"] = [[*ids, rows + 5] for ids in encoded["input_ids"]]  # batched
        return encoded

    monkeypatch.setattr(type(backend.tokenizer), "__call__", beyond)
    with pytest.raises(ModelLoadError, match=f"token id {rows + 5}, beyond"):
        backend.score(REQUESTS)


# ------------------------------------------------------------------- reward
@pytest.fixture(scope="module")
def short_reward_folder(tokenizer, tmp_path_factory):
    """A reward model with 32 positions, saved with a tokenizer whose limit is 512."""
    model = _gpt2(len(tokenizer), 32, tokenizer, reward=True)
    return _save(model, tokenizer, tmp_path_factory.mktemp("reward32") / "reward32")


def test_the_reward_window_is_the_models_positions(short_reward_folder):
    backend = load_backend(str(short_reward_folder), "hf_reward", device="cpu")
    assert backend.tokenizer.model_max_length == 512 and backend.window == 32
    long = ScoreRequest("word " * 200, " A short answer.")
    score = backend.score([long])[0]
    assert not score.skipped and math.isfinite(score.logprob_sum)
    whole = len(backend.tokenizer(long.context, long.candidate)["input_ids"])
    assert score.truncated_tokens == whole - 32 > 0
    assert score.n_targets == len(backend.tokenizer(long.candidate)["input_ids"])
    too_long = backend.score([ScoreRequest("Q?", " word" * 40)])[0]
    assert too_long.skipped and "window of 32" in too_long.skipped


def test_a_nan_reward_is_a_named_error(reward_model, tokenizer, tmp_path, capsys):
    network = GPT2ForSequenceClassification.from_pretrained(reward_model)
    with torch.no_grad():
        network.score.weight.fill_(math.nan)
    folder = _save(network, tokenizer, tmp_path / "nan-reward")
    with pytest.raises(ScoringError, match="non-finite reward \\(nan\\) for candidate ' Near"):
        load_backend(str(folder), "hf_reward", device="cpu").score(REQUESTS)
    args = ["--model", str(folder), "--scorer", "reward", "--device", "cpu"]
    _cli_refuses(args, capsys, "non-finite reward (nan)", status=ScoringError.exit_status)


def test_input_window_is_the_smaller_of_positions_and_tokenizer_limit(tokenizer):
    config = GPT2Config(n_positions=32)
    assert input_window(config, tokenizer) == 32
    assert input_window(GPT2Config(n_positions=4096), tokenizer) == tokenizer.model_max_length
    tokenizer_without_limit = type("T", (), {"model_max_length": int(1e30)})()
    assert input_window(config, tokenizer_without_limit) == 32
    assert input_window(object(), None) is None


def test_unread_weights_refuse_only_a_checkpoint_saved_as_another_task():
    """A multimodal checkpoint's text model leaves its other parts unread and is scored; a
    token classifier's unread head is refused; the reward backend reads missing weights only."""
    network = GPT2LMHeadModel(GPT2Config(vocab_size=100, n_embd=32, n_layer=1, n_head=2))
    unread = {"missing_keys": set(), "unexpected_keys": {"vision_tower.weight"}}
    network.config.architectures = ["GPT2VisionForConditionalGeneration"]
    check_loading_report("m", "hf_causal", network, unread)
    network.config.architectures = ["GPT2ForTokenClassification"]
    with pytest.raises(ModelLoadError, match="saved as GPT2ForTokenClassification"):
        check_loading_report("m", "hf_causal", network, unread)
    check_loading_report("m", "hf_reward", network, unread)
    with pytest.raises(ModelLoadError, match="weight score.weight would be newly initialised"):
        check_loading_report("m", "hf_reward", network, {"missing_keys": {"score.weight"}})
