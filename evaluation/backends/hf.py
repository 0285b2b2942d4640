"""What the Hugging Face backends share: loading, identity, devices and dtypes, the scoring loop.

The scoring loop is the same for causal and seq2seq models: build every request's token layout
(evaluation/scoring.py), group requests by their shared prefix into chunks, plan batches by token
budget, run them with out-of-memory back-off, and hand each finished batch to the sink.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from abc import abstractmethod
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import torch

from nnd_suites.errors import ModelLoadError, NNDError
from nnd_suites.evaluation.backend import (
    MODES,
    SCORING_VERSION,
    Backend,
    Score,
    ScoreRequest,
    ScoreSink,
)
from nnd_suites.evaluation.batching import Budget, Chunk, plan_batches, run_with_backoff
from nnd_suites.evaluation.in_memory import scoring_mode
from nnd_suites.evaluation.scoring import Layout, TokenizerTraits, tokenizer_traits

DTYPES = {
    "fp32": torch.float32,
    "float32": torch.float32,
    "bf16": torch.bfloat16,
    "bfloat16": torch.bfloat16,
    "fp16": torch.float16,
    "float16": torch.float16,
}
DTYPE_NAMES = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}
WINDOW_ATTRIBUTES = (
    "n_positions",
    "max_position_embeddings",
    "n_ctx",
    "seq_length",
    "max_sequence_length",
)
#: Budgets for "auto" on CPU: batches beyond ~2k tokens leave the caches and run slower.
CPU_TOKENS = 2048
CPU_ATTENTION_BYTES = 1 << 30


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    if str(device) == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise NNDError(f"unknown device {device!r}: use auto, cpu, cuda, cuda:N or mps") from exc
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise NNDError(f"device {device!r} asked for, but torch sees no CUDA device")
    return resolved


def resolve_dtype(dtype: str | torch.dtype, device: torch.device) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        if dtype not in DTYPE_NAMES:
            raise NNDError(f"unsupported dtype {dtype}; use fp32, bf16 or fp16")
        return dtype
    if dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if dtype not in DTYPES:
        raise NNDError(f"unknown dtype {dtype!r}: use auto, fp32, bf16 or fp16")
    return DTYPES[dtype]


def _load_error(model: str, exc: Exception) -> ModelLoadError:
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    where = (
        "it is not a local folder"
        if not Path(model).exists()
        else "the folder holds no loadable model (config.json, weights, tokenizer files)"
    )
    hint = (
        " The Hub is not reachable in offline mode (HF_HUB_OFFLINE=1): download the model "
        "first or pass a local folder."
        if offline and not Path(model).exists()
        else " Pass a Hub model id (e.g. distilgpt2) or a folder written by save_pretrained()."
    )
    detail = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() else ""
    return ModelLoadError(
        f"cannot load model {model!r}: {where} ({type(exc).__name__}: {detail}).{hint}"
    )


def load_config(model: str, revision: str | None = None):
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(model, revision=revision)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError, ...
        raise _load_error(model, exc) from exc


def detect_hf_backend(model: str, revision: str | None = None) -> str:
    config = load_config(model, revision)
    return "hf_seq2seq" if getattr(config, "is_encoder_decoder", False) else "hf_causal"


_file_hashes: dict[tuple[str, int, int], str] = {}


def folder_fingerprint(folder: Path) -> str:
    """sha256 over the names and contents of a model folder's files (weights, config, tokenizer).
    Memoised per (path, size, mtime) within the process."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")):
        stat = path.stat()
        memo = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
        if memo not in _file_hashes:
            with path.open("rb") as handle:
                _file_hashes[memo] = hashlib.file_digest(handle, "sha256").hexdigest()
        digest.update(f"{path.name}\0{_file_hashes[memo]}\n".encode())
    return digest.hexdigest()


def model_revision(model: str, revision: str | None) -> str:
    """A local folder's content hash, or the commit a Hub id resolves to (from the local cache
    when offline)."""
    path = Path(model)
    if path.is_dir():
        return "sha256:" + folder_fingerprint(path)
    from huggingface_hub import hf_hub_download

    try:
        config_path = hf_hub_download(model, "config.json", revision=revision)
    except Exception as exc:
        raise _load_error(model, exc) from exc
    found = re.search(r"snapshots[/\\]([0-9a-f]{40})[/\\]", str(config_path))
    return found.group(1) if found else (revision or "unknown")


def config_window(config, tokenizer=None) -> int | None:
    for name in WINDOW_ATTRIBUTES:
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    limit = getattr(tokenizer, "model_max_length", None)
    return limit if isinstance(limit, int) and 0 < limit < 1_000_000 else None


class HFBackend(Backend):
    """Shared by the causal and seq2seq Hugging Face backends (not registered itself).

    Weights and tokenizer load on first use: a run whose scores all come from the cache never
    loads the model (its identity needs only the config and the revision or file hashes).
    """

    auto_class: ClassVar[str]
    strategies: ClassVar[tuple[str, ...]]
    causal: ClassVar[bool]

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
        if mode not in MODES:
            raise NNDError(f"unknown scoring mode {mode!r}; known: {', '.join(MODES)}")
        if strategy not in ("auto", *self.strategies):
            raise NNDError(
                f"unknown strategy {strategy!r} for {self.name}; known: auto, "
                f"{', '.join(self.strategies)}"
            )
        self.model_ref, self.config = model_ref, config
        self.mode, self.device, self.dtype, self.revision = mode, device, dtype, revision
        self.batch_size = _parse_batch_size(batch_size)
        self.requested_strategy = strategy
        self.forward_passes = 0  # counted for tests and reports
        self.probe_report: dict[str, str] = {}
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
        **options: Any,
    ) -> HFBackend:
        if options:
            raise NNDError(f"unknown option(s) for backend {cls.name}: {sorted(options)}")
        resolved_device = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, resolved_device)
        config = load_config(model, revision)
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
        return backend

    load_revision: str | None = None

    @cached_property
    def tokenizer(self):
        from transformers import AutoTokenizer

        try:
            return AutoTokenizer.from_pretrained(self.model_ref, revision=self.load_revision)
        except Exception as exc:
            raise _load_error(self.model_ref, exc) from exc

    @cached_property
    def model(self):
        import transformers

        auto = getattr(transformers, self.auto_class)
        try:
            network = auto.from_pretrained(
                self.model_ref, revision=self.load_revision, dtype=self.dtype
            )
        except Exception as exc:
            raise _load_error(self.model_ref, exc) from exc
        return network.to(self.device).eval()

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
    @property
    def identity(self) -> dict[str, str]:
        return {
            "backend": self.name,
            "model": self.model_ref,
            "revision": self.revision,
            "dtype": DTYPE_NAMES[self.dtype],
            "mode": self.mode,
            "scoring_version": SCORING_VERSION,
        }

    def describe(self) -> dict[str, Any]:
        strategy = (
            self.strategy
            if self.loaded or self.requested_strategy != "auto"
            else "auto (model not loaded: every score came from the cache)"
        )
        described = {
            **self.identity,
            "device": str(self.device),
            "strategy": strategy,
            "batch_size": self.batch_size or "auto",
            "window": self.window,
        }
        if self.probe_report:
            described["strategy_probe"] = self.probe_report
        return described

    @property
    @abstractmethod
    def window(self) -> int | None:
        """The longest sequence the model takes (None: no limit known)."""

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
        results: list[Score | None] = [None] * len(requests)
        # An in-memory model may be in train mode (dropout): score in eval mode, then restore.
        with torch.inference_mode(), scoring_mode(self.model):
            for _batch, sums in self._run(layouts):
                indices, scores = [], []
                for slot, total in sums:
                    if not math.isfinite(total):
                        raise NNDError(
                            f"model {self.model_ref!r} gave a non-finite log-probability "
                            f"({total}) for candidate {distinct[slot].candidate[:60]!r}; with "
                            "bf16/fp16 try --dtype fp32"
                        )
                    score = Score(total, len(layouts[slot].targets), layouts[slot].truncated)
                    for index in owners[slot]:
                        results[index] = score
                        indices.append(index)
                        scores.append(score)
                if sink is not None:
                    sink(indices, scores)
                if progress is not None:
                    progress(len(indices))
        missing = [i for i, r in enumerate(results) if r is None]
        if missing:  # a bug, never an input problem: fail loudly rather than drop requests
            raise RuntimeError(f"{len(missing)} request(s) were not scored")
        return results  # type: ignore[return-value]

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

    def encode(self, texts: list[str], special: bool) -> dict[str, list[int]]:
        """Tokenise each distinct text once, in one batched call."""
        distinct = list(dict.fromkeys(texts))
        if not distinct:
            return {}
        # verbose=False: long contexts are expected here, they are cut to the window later
        ids = self.tokenizer(distinct, add_special_tokens=special, verbose=False)["input_ids"]
        return dict(zip(distinct, ids, strict=True))


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
