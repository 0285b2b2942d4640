"""A reward model's scalar for (context, candidate): the backend of the ``reward`` scorer.

A Hugging Face sequence-classification model with one output (a reward model, e.g. an
OpenAssistant DeBERTa RM) reads the context and the candidate as a text pair (the candidate
second, so truncation cuts the context, never the candidate) and returns one number. It is
stored like any score (the scalar as the sum, one target) and cached under the model's identity;
only the ``reward`` scorer reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

import torch

from nnd_suites.errors import ModelLoadError, ParameterError
from nnd_suites.evaluation.backend import (
    SCORING_VERSION,
    Backend,
    BackendMetadata,
    Score,
    ScoreRequest,
    ScoreSink,
)
from nnd_suites.evaluation.backends.hf_loading import (
    load_error,
    load_tokenizer,
    model_revision,
    resolve_device,
    resolve_dtype,
    scoring_mode,
)

#: scored pairs per forward pass
BATCH = 16


class HFRewardBackend(Backend):
    name = "hf_reward"
    metadata = BackendMetadata(
        summary="Hugging Face reward model's scalar per candidate (--scorer reward)",
        description="A Hugging Face reward model (sequence classification, one output) reading "
        "(context, candidate) as a text pair; its scalar is stored as the score's sum, for the "
        "reward scorer.",
    )

    def __init__(self, model: str, *, device: torch.device, dtype: torch.dtype, revision: str):
        self.model_ref, self.device, self.dtype, self.revision = model, device, dtype, revision

    @classmethod
    def load(
        cls,
        model: str,
        *,
        mode: str = "default",
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int | str = "auto",
        strategy: str = "auto",
        revision: str | None = None,
        **options: Any,
    ) -> HFRewardBackend:
        if options:
            raise ParameterError(
                f"backend {cls.name}: unknown option(s) {sorted(options)} (known: device, "
                "dtype, batch_size, revision)"
            )
        if strategy != "auto":  # the batching strategies are the LM backends' (F-G)
            raise ParameterError(
                f"backend {cls.name}: strategy {strategy!r}: a reward model reads each (context, "
                "candidate) pair in one pass and has no batching strategies; leave --strategy out"
            )
        resolved = resolve_device(device)
        backend = cls(
            model,
            device=resolved,
            dtype=resolve_dtype(dtype, resolved),
            revision=model_revision(model, revision),
        )
        backend.load_revision = revision
        if batch_size != "auto":  # "auto": BATCH pairs (a reward pass has no long targets)
            if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
                raise ParameterError(
                    f"backend {cls.name}: batch_size {batch_size!r}: give a number of (context, "
                    "candidate) pairs >= 1, or auto"
                )
            backend.batch = batch_size
        return backend

    load_revision: str | None = None
    batch: int = BATCH

    @property
    def identity(self) -> dict[str, str]:
        return {
            "backend": self.name,
            "model": self.model_ref,
            "revision": self.revision,
            "dtype": str(self.dtype).removeprefix("torch."),
            "scoring_version": SCORING_VERSION,
        }

    @cached_property
    def tokenizer(self):
        tokenizer = load_tokenizer(self.model_ref, self.load_revision)
        if tokenizer.pad_token is None:  # batches need padding: a causal reward model has none
            tokenizer.pad_token = tokenizer.eos_token
        return tokenizer

    @cached_property
    def model(self):
        # lazy: transformers loads with a model only (`import nnd_suites` stays torch-free)
        from transformers import AutoModelForSequenceClassification

        try:
            network = AutoModelForSequenceClassification.from_pretrained(
                self.model_ref, revision=self.load_revision, dtype=self.dtype
            )
        except Exception as exc:
            raise load_error(self.model_ref, exc) from exc
        if network.config.num_labels != 1:
            raise ModelLoadError(
                f"model {self.model_ref!r} has {network.config.num_labels} outputs; a reward "
                "model gives one number per (context, candidate) (num_labels=1)"
            )
        if network.config.pad_token_id is None:  # it finds each row's last token by its padding
            network.config.pad_token_id = self.tokenizer.pad_token_id
        return network.to(self.device).eval()

    def score(
        self,
        requests: Sequence[ScoreRequest],
        *,
        sink: ScoreSink | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[Score]:
        tokenizer, network = self.tokenizer, self.model
        limit = min(tokenizer.model_max_length, 1 << 20)
        results: list[Score] = []
        with scoring_mode(network), torch.inference_mode():
            for start in range(0, len(requests), self.batch):
                part = requests[start : start + self.batch]
                encoded = tokenizer(
                    [r.context for r in part],
                    [r.candidate for r in part],
                    padding=True,
                    truncation="only_first",
                    max_length=limit,
                    return_tensors="pt",
                ).to(self.device)
                rewards = network(**encoded).logits[:, 0].float().tolist()
                batch = [Score(reward, 1) for reward in rewards]
                results += batch
                if sink is not None:
                    sink(list(range(start, start + len(part))), batch)
                if progress is not None:
                    progress(len(part))
        return results
