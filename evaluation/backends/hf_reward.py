"""A reward model's scalar for (context, candidate): the backend of the ``reward`` scorer.

A Hugging Face sequence-classification model with one output (a reward model, e.g. an
OpenAssistant DeBERTa RM) reads the context and the candidate as a text pair (the candidate
second, so truncation cuts the context, never the candidate) and returns one number. It is
stored like any score (the scalar as the sum; the candidate's tokens as its targets, so the
token-length slice compares real lengths; the context tokens cut to the window as truncated)
and cached under the model's identity; only the ``reward`` scorer reads it. The window is the
model's positions or the tokenizer's limit, whichever is less (hf_load_check.input_window).
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
    ScoreDelivery,
    ScoreRequest,
    ScoreSink,
    finite,
)
from nnd_suites.evaluation.backends.hf_load_check import (
    check_token_ids,
    check_tokenizer_fits,
    input_window,
    load_weights,
)
from nnd_suites.evaluation.backends.hf_loading import (
    FP32,
    check_unchanged,
    load_tokenizer,
    model_revision,
    resolve_device,
    resolve_dtype,
    scoring_mode,
    weight_files,
)

#: scored pairs per forward pass
BATCH = 16
#: What a stored reward score holds; cached scores of an earlier version are not reused.
#: 2: the candidate's tokens as n_targets, the context tokens cut as truncated (1: one target)
REWARD_SCORES = "2"


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
        cls.refuse_options(options)
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
    log_likelihoods = False  # the sum is the reward model's scalar, of either sign

    @property
    def identity(self) -> dict[str, str]:
        return {
            "backend": self.name,
            "model": self.model_ref,
            "revision": self.revision,
            "dtype": str(self.dtype).removeprefix("torch."),
            "scoring_version": SCORING_VERSION,
            "reward_scores": REWARD_SCORES,
        }

    def describe(self) -> dict[str, Any]:
        return {**self.identity, **weight_files(self.revision)}

    @cached_property
    def tokenizer(self):
        tokenizer = load_tokenizer(self.model_ref, self.load_revision)
        check_unchanged(self.model_ref, self.revision)
        if tokenizer.pad_token is None:  # batches need padding: a causal reward model has none
            tokenizer.pad_token = tokenizer.eos_token
        return tokenizer

    @cached_property
    def model(self):
        network = load_weights(
            "AutoModelForSequenceClassification",
            self.model_ref,
            self.name,
            revision=self.load_revision,
            dtype=self.dtype,
        )
        if network.config.num_labels != 1:
            raise ModelLoadError(
                f"model {self.model_ref!r} has {network.config.num_labels} outputs; a reward "
                "model gives one number per (context, candidate) (num_labels=1)"
            )
        check_tokenizer_fits(network, self.tokenizer, self.model_ref)
        check_unchanged(self.model_ref, self.revision)
        if network.config.pad_token_id is None:  # it finds each row's last token by its padding
            network.config.pad_token_id = self.tokenizer.pad_token_id
        return network.to(self.device).eval()

    @property
    def window(self) -> int | None:
        """The longest (context, candidate) pair the model reads: its positions or the
        tokenizer's limit, whichever is less."""
        return input_window(self.model.config, self.tokenizer)

    def score(
        self,
        requests: Sequence[ScoreRequest],
        *,
        sink: ScoreSink | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[Score]:
        network, window = self.model, self.window
        delivery = ScoreDelivery(len(requests), sink, progress)
        with scoring_mode(network), torch.inference_mode():
            for start in range(0, len(requests), self.batch):
                part = requests[start : start + self.batch]
                delivery.add(range(start, start + len(part)), self._score_part(part, window))
        return delivery.scores

    def _score_part(self, part: Sequence[ScoreRequest], window: int | None) -> list[Score]:
        """Each pair's reward (its candidate's tokens as ``n_targets``, the context tokens cut
        to fit the window as ``truncated_tokens``), or why it was skipped: a candidate that
        alone fills the window."""
        tokenizer = self.tokenizer
        contexts, candidates = [r.context for r in part], [r.candidate for r in part]
        # verbose=False: pairs longer than the window are expected here, they are cut below
        whole = tokenizer(contexts, candidates, verbose=False)["input_ids"]
        own = tokenizer(candidates, add_special_tokens=False, verbose=False)["input_ids"]
        alone = tokenizer([""] * len(part), candidates, verbose=False)["input_ids"]
        limit = window or max(len(ids) for ids in whole)
        scores: list[Score | None] = [
            Score.skip(
                f"candidate {r.candidate[:60]!r} alone is {len(solo)} tokens, more than the "
                f"reward model's window of {limit}"
            )
            if len(solo) > limit
            else None
            for r, solo in zip(part, alone, strict=True)
        ]
        fit = [i for i, score in enumerate(scores) if score is None]
        if not fit:
            return scores  # type: ignore[return-value]
        encoded = tokenizer(
            [contexts[i] for i in fit],
            [candidates[i] for i in fit],
            padding=True,
            truncation="only_first",
            max_length=limit,
            return_tensors="pt",
        )
        check_token_ids(encoded["input_ids"].tolist(), self.model, self.model_ref)
        rewards = self.model(**encoded.to(self.device)).logits[:, 0].float().tolist()
        source = f"reward model {self.model_ref!r}"
        for i, reward in zip(fit, rewards, strict=True):
            finite(reward, source, "reward", candidates[i], f"{FP32}, else the weights are damaged")
            cut = max(0, len(whole[i]) - limit)
            scores[i] = Score(reward, max(1, len(own[i])), cut)
        return scores  # type: ignore[return-value]
