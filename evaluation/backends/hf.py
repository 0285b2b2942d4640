"""What the Hugging Face backends share: loading, identity, devices and dtypes, the scoring loop.

The scoring loop is the same for causal and seq2seq models: build every request's token layout
(evaluation/scoring.py), group requests by their shared prefix into chunks, plan batches by token
budget, run them with out-of-memory back-off, and hand each finished batch to the sink.
"""

from __future__ import annotations

import contextlib
from abc import abstractmethod
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any, ClassVar

import torch

from nnd_suites.errors import NNDError
from nnd_suites.evaluation.backend import (
    SCORING_VERSION,
    Backend,
    Score,
    ScoreDelivery,
    ScoreRequest,
    ScoreSink,
    check_mode,
    finite,
)
from nnd_suites.evaluation.backends import hf_load_check as load_check
from nnd_suites.evaluation.backends.hf_loading import (
    DTYPE_NAMES,
    FP32,
    HFParams,
    check_unchanged,
    load_config,
    load_tokenizer,
    model_revision,
    resolve_device,
    resolve_dtype,
    scoring_mode,
    weight_files,
)
from nnd_suites.evaluation.batching import Budget, Chunk, plan_batches, run_with_backoff
from nnd_suites.evaluation.fingerprint import (
    config_fingerprint,
    tokenizer_fingerprint,
    weights_fingerprint,
)
from nnd_suites.evaluation.scoring import Layout, TokenizerTraits, tokenizer_traits

#: Budgets for "auto" on CPU: batches beyond ~2k tokens leave the caches and run slower.
CPU_TOKENS = 2048
CPU_ATTENTION_BYTES = 1 << 30


class HFBackend(Backend):
    """Shared by the causal and seq2seq Hugging Face backends (not registered itself).

    Weights and tokenizer load on first use: a run whose scores all come from the cache never
    loads the model (its identity needs only the config and the revision or file hashes).
    """

    auto_class: ClassVar[str]
    strategies: ClassVar[tuple[str, ...]]
    causal: ClassVar[bool]
    Params = HFParams

    def __init__(
        self,
        model_ref: str,
        config,
        *,
        mode: str,
        device: torch.device,
        dtype: torch.dtype,
        revision: str,
        batch_size: int | str = "auto",
        strategy: str = "auto",
        model=None,
        tokenizer=None,
    ) -> None:
        check_mode(mode)
        if strategy not in ("auto", *self.strategies):
            raise NNDError(
                f"unknown strategy {strategy!r} for {self.name}; known: auto, "
                f"{', '.join(self.strategies)}"
            )
        self.model_ref, self.config = model_ref, config
        self.mode, self.device, self.dtype, self.revision = mode, device, dtype, revision
        self.batch_size = _parse_batch_size(batch_size)
        self.requested_strategy = strategy
        self.probe_report: dict[str, str] = {}
        self.fingerprints: dict[str, str] = {}  # a model in memory's (refresh_identity)
        if model is not None:
            self.__dict__["model"] = model
        if tokenizer is not None:
            self.__dict__["tokenizer"] = tokenizer

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(
        cls,
        model: str,
        *,
        mode: str = "default",
        device: str = "auto",
        dtype: str = "auto",
        revision: str | None = None,
        batch_size: int | str = "auto",
        strategy: str = "auto",
        trust_remote_code: bool = False,
        device_map: str | None = None,
        config: Any = None,
        **options: Any,
    ) -> HFBackend:
        """``trust_remote_code`` runs the model repository's own code (off unless asked for);
        ``device_map="auto"`` spreads a model larger than one device over every device (and the
        CPU) with accelerate; ``config`` skips reading the config again."""
        cls.refuse_options(options)
        if device_map not in (None, "auto"):
            raise NNDError(f"--device-map {device_map!r}: the only placement is 'auto'")
        resolved_device = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, resolved_device)
        config = config or load_config(model, revision, trust_remote_code)
        if bool(getattr(config, "is_encoder_decoder", False)) == cls.causal:
            kind = "an encoder-decoder" if cls.causal else "a decoder-only"
            raise NNDError(
                f"model {model!r} is {kind} model; backend {cls.name} cannot score it "
                "(leave the backend unset to pick the right one)"
            )
        backend = cls(
            model,
            config,
            mode=mode,
            device=resolved_device,
            dtype=torch_dtype,
            revision=model_revision(model, revision),
            batch_size=batch_size,
            strategy=strategy,
        )
        backend.load_revision = revision
        backend.trust_remote_code = trust_remote_code
        backend.device_map = device_map
        return backend

    load_revision: str | None = None
    trust_remote_code: bool = False
    device_map: str | None = None

    @cached_property
    def tokenizer(self):
        tokenizer = load_tokenizer(self.model_ref, self.load_revision, self.trust_remote_code)
        check_unchanged(self.model_ref, self.revision)
        return tokenizer

    @cached_property
    def model(self):
        placement = {"device_map": self.device_map} if self.device_map else {}
        network = load_check.load_weights(
            self.auto_class,
            self.model_ref,
            self.name,
            revision=self.load_revision,
            dtype=self.dtype,
            trust_remote_code=self.trust_remote_code,
            **placement,
        )
        if self.device_map:  # accelerate placed the layers: inputs go where the embeddings are
            self.device = network.get_input_embeddings().weight.device
        else:
            network = network.to(self.device)
        load_check.check_scorable(self, network)
        check_unchanged(self.model_ref, self.revision)
        return network.eval()

    @property
    def loaded(self) -> bool:
        return "model" in self.__dict__

    @cached_property
    def traits(self) -> TokenizerTraits:
        return tokenizer_traits(self.tokenizer)

    @cached_property
    def pad_id(self) -> int:
        return next(
            (i for i in (self.tokenizer.pad_token_id, self.traits.eos, 0) if i is not None), 0
        )

    @cached_property
    def strategy(self) -> str:
        """The strategy asked for, or for ``auto`` the first that passes the load-time probe."""
        if self.requested_strategy != "auto":
            return self.requested_strategy
        return self._choose_strategy()

    # ----------------------------------------------------------------- identity
    def refresh_identity(self) -> dict[str, str]:
        """Fingerprint the weights, config and tokenizer of a model in memory (in_memory.py: it
        has no revision of its own) as they are now (after a training step): its identity."""
        self.fingerprints = {
            "weights": weights_fingerprint(self.model),
            "config": config_fingerprint(self.model.config),
            "tokenizer": tokenizer_fingerprint(self.tokenizer),
        }
        return self.fingerprints

    @property
    def identity(self) -> dict[str, str]:
        return {
            "backend": self.name,
            "model": self.model_ref,
            "revision": self.revision,
            "dtype": DTYPE_NAMES[self.dtype],
            "mode": self.mode,
            "scoring_version": SCORING_VERSION,
            **self.fingerprints,
        }

    def describe(self) -> dict[str, Any]:
        strategy = (
            self.strategy
            if self.loaded or self.requested_strategy != "auto"
            # said before scoring too (-v), and under --no-cache: no claim about the cache here
            else "auto (model not loaded: no request has needed it)"
        )
        described = {
            **self.identity,
            **weight_files(self.revision),
            "device": str(self.device),
            "strategy": strategy,
            "batch_size": self.batch_size or "auto",
            "window": self.window,
        }
        if self.probe_report:
            described["strategy_probe"] = self.probe_report
        return described

    def model_size(self) -> tuple[int | None, str | None]:
        """The loaded network's parameters, or, when every score came from the cache, those of
        the same network built on the meta device (no weights read, no memory used)."""
        architecture = getattr(self.config, "model_type", None)
        if self.loaded:
            network = self.model
        else:
            import torch  # lazy: torch loads with a model only (`import nnd_suites` stays light)
            import transformers

            auto = getattr(transformers, self.auto_class)
            with torch.device("meta"):
                network = auto.from_config(self.config, trust_remote_code=self.trust_remote_code)
        return sum(p.numel() for p in network.parameters()), architecture

    @property
    def window(self) -> int | None:
        """The longest sequence the model takes (None: no limit known)."""
        return load_check.input_window(self.config, self.tokenizer)

    # ------------------------------------------------------------------ scoring
    def score(
        self,
        requests: Sequence[ScoreRequest],
        *,
        sink: ScoreSink | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[Score]:
        unique: dict[ScoreRequest, int] = {}
        owners: list[list[int]] = []
        for index, request in enumerate(requests):
            slot = unique.setdefault(request, len(unique))
            if slot == len(owners):
                owners.append([])
            owners[slot].append(index)
        distinct = list(unique)
        # Tokenise each request once per backend: later calls (evaluation every N training
        # steps on prepared suites) only run the forward passes.
        memo = self.__dict__.setdefault("_layout_memo", {})
        missing = [request for request in distinct if request not in memo]
        if missing:
            memo.update(zip(missing, self.layouts(missing), strict=True))
        layouts = [memo[request] for request in distinct]
        delivery = ScoreDelivery(len(requests), sink, progress)

        def deliver(slots: list[int], scores: list[Score]) -> None:
            delivery.add(
                [index for slot in slots for index in owners[slot]],
                [score for slot, score in zip(slots, scores, strict=True) for _ in owners[slot]],
            )

        unfit = [slot for slot, layout in enumerate(layouts) if isinstance(layout, str)]
        if unfit:  # a candidate alone longer than the window: skipped, counted in the report
            deliver(unfit, [Score.skip(layouts[slot]) for slot in unfit])
        fit = [slot for slot, layout in enumerate(layouts) if not isinstance(layout, str)]
        fitted = [layouts[slot] for slot in fit]
        if fit:  # an id beyond the embedding would be an IndexError, or another token's row
            ids = (x.prefix + x.inputs + x.targets for x in fitted)
            load_check.check_token_ids(ids, self.model, self.model_ref)
        # An in-memory model may be in train mode (dropout): score in eval mode, then restore.
        with torch.inference_mode(), scoring_mode(self.model) if fit else contextlib.nullcontext():
            for _batch, sums in self._run(fitted) if fit else ():
                slots, scores = [], []
                for local, total in sums:
                    slot = fit[local]
                    candidate = distinct[slot].candidate
                    finite(total, f"model {self.model_ref!r}", "log-probability", candidate, FP32)
                    layout = layouts[slot]
                    slots.append(slot)
                    scores.append(Score(total, len(layout.targets), layout.truncated))
                deliver(slots, scores)
        return delivery.scores

    def _run(self, layouts: list[Layout]):
        """Yield (batch, [(layout index, log-prob sum)]) for every batch."""
        if self.strategy == "naive":
            for slot, layout in enumerate(layouts):
                yield [slot], [(slot, self.naive_sum(layout))]
            return
        strategy = self.strategy
        chunks = self.chunks(layouts, strategy)
        budget = self.budget()
        done: list[tuple[int, float]] = []

        def run(batch: list[Chunk]) -> None:
            done.extend(self.run_batch(batch, layouts, budget, strategy))

        for batch in run_with_backoff(plan_batches(chunks, budget), run, self._free_memory):
            yield batch, done[:]
            done.clear()

    def _free_memory(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.empty_cache()

    def budget(self) -> Budget:
        """Padded tokens and attention scores per forward pass: fixed chunks per batch when a
        batch size is given, else a budget from the device's free memory (CPU: fixed)."""
        if self.batch_size is not None:
            return Budget(chunks=self.batch_size, tokens=None, attention=None)
        heads = int(
            getattr(self.config, "num_attention_heads", None)
            or getattr(self.config, "n_head", None)
            or 16
        )
        width = self.model.get_input_embeddings().weight.shape[1]
        element = torch.finfo(self.dtype).bits // 8
        if self.device.type == "cuda":
            free, _ = torch.cuda.mem_get_info(self.device)
            usable = free * 0.4
            per_token = width * element * 24  # activations of one token within a layer
            tokens = int(min(max(usable / per_token, 512), 1 << 17))
            attention = int(usable / ((heads + 1) * 4))
        else:
            tokens, attention = CPU_TOKENS, int(CPU_ATTENTION_BYTES / ((heads + 1) * 4))
        # fp32 logits (and their log-softmax) of one LM-head slice: 32 MiB on CPU, 256 on GPU
        vocab = self.model.get_output_embeddings().weight.shape[0]
        slice_bytes = 1 << 28 if self.device.type == "cuda" else 1 << 25
        head_positions = max(64, min(4096, slice_bytes // (vocab * 4)))
        return Budget(tokens=tokens, attention=attention, head_positions=head_positions)

    # --------------------------------------------------------- model-specific
    @abstractmethod
    def layouts(self, requests: list[ScoreRequest]) -> list[Layout]:
        """Every request's token layout (raises NNDError for a candidate that cannot fit)."""

    @abstractmethod
    def chunks(self, layouts: list[Layout], strategy: str) -> list[Chunk]:
        """Group layouts that share a prefix into chunks for a batched strategy."""

    @abstractmethod
    def run_batch(
        self, batch: list[Chunk], layouts: list[Layout], budget: Budget, strategy: str
    ) -> list[tuple[int, float]]:
        """Score one batch of chunks: (layout index, log-prob sum) for each of their requests."""

    @abstractmethod
    def naive_sum(self, layout: Layout) -> float:
        """One plain forward over the whole sequence, batch 1: the reference for the fast path."""

    def _choose_strategy(self) -> str:
        return self.strategies[0]

    # ---------------------------------------------------------------- helpers
    def target_logprobs(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """log P(target) at each row of ``logits``, with the softmax in fp32."""
        return torch.log_softmax(logits.float(), dim=-1).gather(1, targets[:, None])[:, 0]

    def tensor(self, values, dtype=torch.long) -> torch.Tensor:
        return torch.tensor(values, dtype=dtype, device=self.device)


def _parse_batch_size(value: int | str) -> int | None:
    if value in ("auto", None):
        return None
    try:
        size = int(value)
    except (TypeError, ValueError):
        size = 0
    if size < 1:
        raise NNDError(f"batch size must be 'auto' or a positive integer, got {value!r}")
    return size
