"""Score a transformers model object already in memory (during training, in a notebook).

The model stays where it is (device, dtype, weights: nothing is saved or copied); scoring runs
without gradients in eval mode, and the model's train/eval mode is restored afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
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

    ``revision`` names the weights in the score cache: give each state of the weights its own
    (``step-2000``), or leave the cache off.
    """
    from transformers import PreTrainedModel

    from nnd_suites.evaluation.backends.hf_causal import HFCausalBackend
    from nnd_suites.evaluation.backends.hf_seq2seq import HFSeq2SeqBackend

    if not isinstance(model, PreTrainedModel):
        raise ModelLoadError(
            f"an in-memory model must be a transformers PreTrainedModel, got "
            f"{type(model).__name__}; pass (model, tokenizer)"
        )
    if tokenizer is None or not callable(tokenizer):
        raise ModelLoadError("an in-memory model needs its tokenizer: pass (model, tokenizer)")
    config = model.config
    cls = HFSeq2SeqBackend if getattr(config, "is_encoder_decoder", False) else HFCausalBackend
    weights = next(model.parameters())
    name = getattr(config, "_name_or_path", "") or type(model).__name__
    return cls(
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


@contextlib.contextmanager
def scoring_mode(model: Any) -> Iterator[None]:
    """Eval mode while scoring (no dropout), the caller's mode restored after, even on error."""
    was_training = bool(model.training)
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)
