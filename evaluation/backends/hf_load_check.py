"""The one check that a Hugging Face model's score is defined, called by every HF backend
(``hf_causal``, ``hf_seq2seq``, ``hf_reward`` and a model scored in memory).

A score is a likelihood (or a reward) only where the weights it reads were trained and the
inputs it is given can be read:

- weights load with transformers' loading report (``output_loading_info=True``): a weight the
  checkpoint lacks is newly initialised at random (a reward model's folder has no ``lm_head``, a
  causal LM's has no ``score`` head), so its scores would change from one run to the next; and a
  checkpoint saved as another task's model (``GPT2ForSequenceClassification``) holds a head the
  LM class does not read, and its body was not trained to predict the next token;
- a causal LM must be a decoder: an encoder (BERT, RoBERTa as ``BertLMHeadModel`` with
  ``is_decoder=False``) attends to later tokens, so every "log-probability" has seen its target.
  Checked by behaviour, not by name: changing the last token must leave earlier positions alone;
- every token id must have a row in the input embedding (``len(tokenizer)`` at load, every
  request's ids before scoring); a tokenizer smaller than the embedding is accepted, since
  embeddings padded past the vocabulary (to a multiple of 64 or 128) are common;
- inputs are bounded by the model's own positions and the tokenizer's limit, whichever is less.

Each refusal is a one-line :class:`ModelLoadError` naming the model, the weights or tokens at
fault and the backend to use instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from nnd_suites.errors import ModelLoadError
from nnd_suites.evaluation.backends.hf_loading import config_window, load_error, scoring_mode

#: What to use instead, per backend, when a checkpoint is not a model that backend scores.
INSTEAD = {
    "hf_causal": "a reward or classification model is scored with --scorer reward (backend "
    "hf_reward); a masked LM (BERT, RoBERTa) has no left-to-right likelihood: use a decoder LM "
    "(hf_causal) or an encoder-decoder (hf_seq2seq)",
    "hf_seq2seq": "an encoder-decoder LM (BART, T5) saved with its LM head is what hf_seq2seq "
    "scores; a reward model is scored with --scorer reward (backend hf_reward)",
    "hf_reward": "a reward model is a sequence-classification checkpoint with a trained "
    "one-output head; a language model is scored with --scorer normalised (backend hf)",
}
#: The backends that read an LM head's log-probabilities.
LM_BACKENDS = frozenset({"hf_causal", "hf_seq2seq"})
#: How transformers names the classes of models that predict tokens.
LM_CLASSES = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration", "ForSeq2SeqLM")
#: Tokenizer limits at or above this are transformers' "no limit known" placeholder.
NO_LIMIT = 1_000_000
#: Tokens of the causality probe (fewer in a shorter window).
PROBE_TOKENS = 8


def load_weights(auto_class: str, model: str, backend: str, **kwargs: Any):
    """``transformers.<auto_class>.from_pretrained(model, **kwargs)``, refused when the loading
    report shows weights the score depends on that the checkpoint does not hold."""
    import transformers  # lazy: loads with a model only (`import nnd_suites` stays torch-free)

    try:
        network, info = getattr(transformers, auto_class).from_pretrained(
            model, output_loading_info=True, **kwargs
        )
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError, ...
        raise load_error(model, exc) from exc
    check_loading_report(model, backend, network, info)
    return network


def check_loading_report(model: str, backend: str, network: Any, info: dict[str, Any]) -> None:
    """Refuse newly initialised weights (missing or of another shape in the checkpoint), and a
    checkpoint saved as another task's model whose head the loaded class does not read."""
    fresh = sorted(info.get("missing_keys") or ()) + sorted(
        str(entry[0] if isinstance(entry, tuple) else entry)
        for entry in info.get("mismatched_keys") or ()
    )
    if fresh:
        raise ModelLoadError(
            f"model {model!r}: {_listed(fresh)} would be newly initialised at random (the "
            f"checkpoint does not hold them), so backend {backend} would score it with weights "
            f"no one trained; {INSTEAD[backend]}"
        )
    saved_as = [str(name) for name in getattr(network.config, "architectures", None) or ()]
    unread = sorted(info.get("unexpected_keys") or ())
    # saved as a language model of another class (a multimodal checkpoint's text part): its
    # unread weights are the other parts, the LM's own were all there
    saved_as_lm = any(name.endswith(LM_CLASSES) for name in saved_as)
    if backend in LM_BACKENDS and unread and saved_as and not saved_as_lm:
        raise ModelLoadError(
            f"model {model!r} was saved as {', '.join(saved_as)}: it holds {_listed(unread)}, "
            f"which backend {backend} ({type(network).__name__}) does not read, and its body "
            f"was trained for that head; {INSTEAD[backend]}"
        )


def check_scorable(backend: Any, network: Any) -> None:
    """``network`` (just loaded, or in memory) can give the likelihoods ``backend`` (causal or
    seq2seq) reads: it has an LM head, a causal one attends to earlier tokens only, and every
    token of the backend's tokenizer has an embedding row."""
    model, name = backend.model_ref, backend.name
    if network.get_output_embeddings() is None:
        raise ModelLoadError(
            f"model {model!r} ({type(network).__name__}) has no LM head, so it gives no "
            f"likelihood to score with backend {name}; {INSTEAD[name]}"
        )
    check_tokenizer_fits(network, backend.tokenizer, model)
    if backend.causal:
        check_attends_backwards(network, model, name)


def embedding_rows(network: Any) -> int:
    return int(network.get_input_embeddings().weight.shape[0])


def check_tokenizer_fits(network: Any, tokenizer: Any, model: str) -> None:
    """Refuse a tokenizer with ids the input embedding has no row for."""
    rows, size = embedding_rows(network), len(tokenizer)
    if size > rows:
        raise ModelLoadError(
            f"model {model!r}: its tokenizer has {size} tokens but the model's input embedding "
            f"only {rows} rows, so ids {rows}..{size - 1} cannot be read: the tokenizer is not "
            "this model's; save the model's own tokenizer beside its weights "
            "(tokenizer.save_pretrained(folder))"
        )


def check_token_ids(id_lists: Iterable[Iterable[int]], network: Any, model: str) -> None:
    """Before scoring: every token id of every request has a row in ``network``'s embedding."""
    rows = embedding_rows(network)
    highest = max((max(ids, default=-1) for ids in id_lists), default=-1)
    if highest >= rows:
        raise ModelLoadError(
            f"model {model!r}: a request holds token id {highest}, beyond the model's "
            f"{rows}-row input embedding: the tokenizer is not this model's; save the model's "
            "own tokenizer beside its weights (tokenizer.save_pretrained(folder))"
        )


def check_attends_backwards(network: Any, model: str, backend: str) -> None:
    """Changing the last token of a short random sequence must leave the logits of every
    earlier position as they were: otherwise the model reads later tokens (an encoder), and a
    target's "log-probability" would have seen the target itself."""
    device = network.get_input_embeddings().weight.device
    generator = torch.Generator().manual_seed(0)
    length = max(2, min(PROBE_TOKENS, config_window(network.config) or PROBE_TOKENS))
    ids = torch.randint(0, embedding_rows(network), (1, length), generator=generator)
    changed = ids.clone()
    changed[0, -1] = (ids[0, -1] + 1) % embedding_rows(network)
    with scoring_mode(network), torch.inference_mode():
        before = network(input_ids=ids.to(device), use_cache=False).logits[0, :-1].float()
        after = network(input_ids=changed.to(device), use_cache=False).logits[0, :-1].float()
    moved = float((before - after).abs().max())
    # a decoder gives the same numbers (same shapes, same kernels); an encoder moves them
    if moved > 1e-4 * max(1.0, float(before.abs().max())):
        raise ModelLoadError(
            f"model {model!r} ({type(network).__name__}) is not a decoder: its predictions for "
            f"earlier tokens change when a later token does (by up to {moved:.3g}), so it reads "
            f"ahead and gives no left-to-right likelihood for backend {backend}; "
            f"{INSTEAD[backend]}"
        )


def input_window(config: Any, tokenizer: Any = None) -> int | None:
    """The longest input the model reads: its own positions (``n_positions``,
    ``max_position_embeddings``...) and the tokenizer's ``model_max_length``, whichever is less
    (None: neither is known)."""
    limits = (config_window(config), getattr(tokenizer, "model_max_length", None))
    return min((v for v in limits if isinstance(v, int) and 0 < v < NO_LIMIT), default=None)


def _listed(names: list[str], shown: int = 4) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return f"weight{'s' if len(names) > 1 else ''} {', '.join(names[:shown])}{more}"
