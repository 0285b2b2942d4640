"""Score a transformers model object already in memory (during training, in a notebook).

The model stays where it is (device, dtype, weights: nothing is saved or copied); scoring runs
without gradients in eval mode, and the model's train/eval mode is restored afterwards.
"""

from __future__ import annotations

from typing import Any

from nnd_suites.errors import ModelLoadError


def backend_for_model(
    model: Any,
    tokenizer: Any,
    *,
    mode: str = "default",
    batch_size: int | str = "auto",
    strategy: str = "auto",
    revision: str = "in-memory",
):
    """An HF backend (causal or seq2seq, from the model's config) over ``model`` and ``tokenizer``.

    Its cache scope holds a fingerprint of the weights and of the tokenizer, taken now
    (evaluation/fingerprint.py): after changing the weights, make a new backend or call its
    ``refresh_identity()``, never reuse its scores. ``revision`` is a label for the report.
    """
    # lazy: transformers and the HF backends (torch) load with an in-memory model only
    from transformers import PreTrainedModel

    from nnd_suites.evaluation.backends.hf_causal import HFCausalBackend
    from nnd_suites.evaluation.backends.hf_load_check import check_scorable
    from nnd_suites.evaluation.backends.hf_seq2seq import HFSeq2SeqBackend

    if not isinstance(model, PreTrainedModel):
        raise ModelLoadError(
            f"an in-memory model must be a transformers PreTrainedModel, got "
            f"{type(model).__name__}; pass (model, tokenizer)"
        )
    if tokenizer is None or not callable(tokenizer):
        raise ModelLoadError(
            f"an in-memory model needs its tokenizer object, got {type(tokenizer).__name__}: "
            "pass (model, tokenizer)"
        )
    config = model.config
    encoder_decoder = getattr(config, "is_encoder_decoder", False)
    cls = HFSeq2SeqBackend if encoder_decoder else HFCausalBackend
    weights = next(model.parameters())
    if weights.device.type == "meta":
        raise ModelLoadError(
            f"the in-memory model {type(model).__name__} has its weights on the meta device "
            "(made without loading them): load them (from_pretrained) or move the model to a "
            "real device before scoring it"
        )
    name = getattr(config, "_name_or_path", "") or type(model).__name__
    backend = cls(
        f"in-memory:{name}",
        config,
        mode=mode,
        device=weights.device,
        dtype=weights.dtype,
        revision=revision,
        batch_size=batch_size,
        strategy=strategy,
        model=model,
        tokenizer=tokenizer,
    )
    check_scorable(backend, model)  # no head, an encoder, a tokenizer beyond the embedding
    backend.refresh_identity()
    return backend
