"""``llama_cpp``: GGUF models scored in process by llama.cpp (llama-cpp-python).

The scoring definition is the Hugging Face causal backend's (evaluation/scoring.py: BOS, leading
space, EOS appended and averaged over N+1 targets, truncation from the left, ``--compat
reference``), applied to the GGUF file's own tokenizer through a small adapter.

Each context runs through the model once (with its first candidate): its key/value cache stays
in llama.cpp's memory, the cache is rolled back to the end of the context, and the other
candidates are decoded on it, several per batch as separate sequences (llama_cpp_decode.py).
Contexts are taken in sorted order and a new one keeps the cache of the tokens it shares with the
previous one, as ``Llama`` does itself. Logits are requested only at the positions that predict a
target; their log-softmax is computed in fp32 with numpy (no vocabulary sort, no detokenisation,
unlike the server's ``echo`` path).

Weights load on first use: a run whose scores all come from the cache reads only the file's
header (the vocabulary) and its remembered sha256. The sha256 is taken when the backend is made,
before the vocabulary is read, and the file is checked to be unchanged after each load (a file
rewritten in between would be scored under the old one's hash).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from nnd_suites.errors import ModelLoadError, NNDError
from nnd_suites.evaluation.backend import (
    SCORING_VERSION,
    Backend,
    BackendMetadata,
    BackendParams,
    Score,
    ScoreDelivery,
    ScoreRequest,
    ScoreSink,
    check_mode,
    finite,
)
from nnd_suites.evaluation.backends.llama_cpp_decode import SEQUENCES, KVDecoder
from nnd_suites.evaluation.backends.llama_cpp_files import (
    GGUFTokenizer,
    check_gguf,
    check_gguf_unchanged,
    check_tokenizer_agrees,
    default_threads,
    gguf_sha256,
    refuse_hf_options,
)
from nnd_suites.evaluation.scoring import Layout, causal_layouts, tokenizer_traits
from nnd_suites.sources.download import file_stamp

#: Without ``n_ctx``, the window is the model's training context capped here: the key/value cache
#: of a 128k-token window would not fit a laptop, and NND contexts are short.
DEFAULT_MAX_CTX = 4096
#: Finished requests go to the sink (the score cache) at least this often.
SINK_EVERY = 64
INSTALL = "pip install 'nnd-suites[llama]'"


def _llama_cpp():
    try:
        # lazy: optional extra (pip install 'nnd-suites[llama]'), only for GGUF models
        import llama_cpp
    except ImportError as exc:
        raise ModelLoadError(
            f"the llama_cpp backend needs llama-cpp-python ({INSTALL}): {exc}"
        ) from None
    return llama_cpp


class LlamaCppParams(BackendParams):
    """The llama.cpp backend's options (the run options it cannot honour are refused by name)."""

    n_ctx: int | None = Field(None, ge=1, description="the window (default: the model's, <= 4096)")
    threads: int | None = Field(None, ge=1, description="CPU threads (default: half the CPUs)")
    tokenizer: str | None = Field(
        None, description="a Hugging Face tokenizer for templates, checked against the GGUF's"
    )


class LlamaCppBackend(Backend):
    name: ClassVar[str] = "llama_cpp"
    metadata = BackendMetadata(
        summary="a .gguf model in llama.cpp, in process (pip install 'nnd-suites[llama]')",
        description="A GGUF model (a --model ending in .gguf picks it) in process with "
        "llama.cpp: each context decoded once, the cache rolled back per candidate, fp32 "
        "log-softmax at target positions only. Pick it for quantised models on a CPU.",
    )
    Params = LlamaCppParams

    def __init__(
        self, path: Path, model_ref: str, *, mode: str, n_ctx: int | None, threads: int | None
    ) -> None:
        llama_cpp = _llama_cpp()
        # lazy: optional extra (pip install 'nnd-suites[llama]'), only for GGUF models
        from llama_cpp._internals import LlamaModel

        self.path, self.model_ref, self.mode = path, model_ref, mode
        self.threads = int(threads) if threads else default_threads()
        # the identity names the file as it is now: every load below is checked against it
        self._stamp = file_stamp(path.stat())
        self.sha256 = gguf_sha256(path)
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        try:  # the vocabulary and the metadata only: no weight is read
            self.vocab = LlamaModel(path_model=str(path), params=params, verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise ModelLoadError(f"llama.cpp cannot read GGUF model {model_ref!r}: {exc}") from None
        self.check_unchanged()
        self.metadata = self.vocab.metadata()
        # the vocabulary-only model has no hyperparameters: the header says the trained window
        architecture = self.metadata.get("general.architecture", "")
        trained = int(self.metadata.get(f"{architecture}.context_length", 0) or DEFAULT_MAX_CTX)
        self.window = int(n_ctx) if n_ctx else min(trained, DEFAULT_MAX_CTX)
        if self.window > trained:  # learned positions end there: llama.cpp would abort
            raise NNDError(
                f"n_ctx {self.window} is longer than the {trained} tokens {model_ref!r} was "
                f"trained on; give n_ctx <= {trained} (or leave it out)"
            )
        if self.window < 2:
            raise NNDError(f"n_ctx {self.window}: a window needs at least 2 tokens")
        self.tokenizer = GGUFTokenizer(self.vocab)
        self.traits = tokenizer_traits(self.tokenizer)

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(
        cls,
        model: str,
        *,
        mode: str = "default",
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int | str = "auto",
        revision: str | None = None,
        strategy: str = "auto",
        n_ctx: int | None = None,
        threads: int | None = None,
        tokenizer: str | None = None,
        **options: Any,
    ) -> LlamaCppBackend:
        """``model`` is the path of a .gguf file. Options: ``n_ctx`` (the window; default the
        model's training context, at most 4096), ``threads`` (default: half the CPUs), and
        ``tokenizer`` (a Hugging Face tokenizer for templates, checked against the GGUF's)."""
        check_mode(mode)
        refuse_hf_options(
            dtype=dtype,
            device=device,
            batch_size=batch_size,
            revision=revision,
            strategy=strategy,
            **options,
        )
        backend = cls(check_gguf(model), str(model), mode=mode, n_ctx=n_ctx, threads=threads)
        backend.hf_tokenizer = tokenizer
        if tokenizer:
            # lazy: a Hugging Face tokenizer (torch) only when --tokenizer is given
            from nnd_suites.evaluation.backends.hf_loading import load_tokenizer

            hf = load_tokenizer(tokenizer, None, False)
            check_tokenizer_agrees(tokenizer, hf, backend.tokenizer, str(model))
        return backend

    hf_tokenizer: str | None = None

    @cached_property
    def llm(self):
        """The model itself (``llama_cpp.Llama``), loaded on first use. Scores come from the
        decoder's own context (several sequences), so this one's context is kept small."""
        llama_cpp = _llama_cpp()
        try:
            llm = llama_cpp.Llama(
                model_path=str(self.path),
                n_ctx=min(64, self.window),
                logits_all=False,
                verbose=False,
                n_threads=self.threads,
                n_threads_batch=self.threads,
            )
        except (ValueError, RuntimeError) as exc:
            raise ModelLoadError(
                f"llama.cpp cannot load GGUF model {self.model_ref!r}: {exc}"
            ) from None
        self.check_unchanged()
        return llm

    @cached_property
    def decoder(self) -> KVDecoder:
        decoder = KVDecoder(_llama_cpp(), self.llm.model, self.window, self.threads, self.model_ref)
        decoder.owner = self.llm  # the model outlives the context made from it
        return decoder

    @property
    def decoded_tokens(self) -> int:
        return self.decoder.decoded_tokens if "decoder" in self.__dict__ else 0

    @property
    def loaded(self) -> bool:
        return "llm" in self.__dict__

    # ----------------------------------------------------------------- identity
    def check_unchanged(self) -> None:
        """The file is still the one :attr:`sha256` names (hashed again only if its stamp moved)."""
        self._stamp = check_gguf_unchanged(self.path, self.model_ref, self.sha256, self._stamp)

    @property
    def quantization(self) -> str:
        """The file type llama.cpp records (``MOSTLY_Q8_0``, ``ALL_F32``...)."""
        code = self.metadata.get("general.file_type", "unknown")
        try:
            # lazy: optional extra (pip install 'nnd-suites[llama]'), only for GGUF models
            from gguf import LlamaFileType

            return LlamaFileType(int(code)).name
        except (ImportError, ValueError):
            return f"file_type {code}"

    @property
    def identity(self) -> dict[str, str]:
        return {
            "backend": self.name,
            "model": self.model_ref,
            "sha256": self.sha256,
            "quantization": self.quantization,
            "n_ctx": str(self.window),
            "mode": self.mode,
            "scoring_version": SCORING_VERSION,
        }

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {
            **self.identity,
            "window": self.window,
            "llama_cpp_python": _llama_cpp().__version__,
            "threads": self.threads,
        }
        if self.hf_tokenizer:
            described["tokenizer"] = f"{self.hf_tokenizer} (agrees with the GGUF's)"
        return described

    def model_size(self) -> tuple[int | None, str | None]:
        architecture = self.metadata.get("general.architecture")
        if self.loaded:
            return int(_llama_cpp().llama_model_n_params(self.llm.model)), architecture
        try:  # every score came from the cache: count the tensors in the header
            from gguf import GGUFReader

            return sum(int(t.n_elements) for t in GGUFReader(self.path).tensors), architecture
        except ImportError:
            return None, architecture

    # ------------------------------------------------------------------ layouts
    def layouts(self, requests: Sequence[ScoreRequest]) -> list[Layout | str]:
        """Each request's tokens (a string: why it cannot be scored)."""
        return causal_layouts(requests, self.tokenizer, self.traits, self.mode, self.window)

    # ------------------------------------------------------------------ scoring
    def score(
        self,
        requests: Sequence[ScoreRequest],
        *,
        sink: ScoreSink | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[Score]:
        layouts = self.layouts(requests)
        groups: dict[tuple[int, ...], list[int]] = {}
        source = f"llama.cpp running {self.model_ref!r}"
        # what finished before a failure is kept in the cache
        with ScoreDelivery(len(requests), sink, progress, every=SINK_EVERY) as delivery:
            for index, layout in enumerate(layouts):
                if isinstance(layout, str):
                    delivery.add([index], [Score.skip(layout)])
                else:
                    groups.setdefault(layout.prefix, []).append(index)
            # sorted contexts: the next one often starts like this one and keeps its cache
            for prefix in sorted(groups):
                rows: dict[int, np.ndarray] = {}  # log-softmax rows of context positions
                for part in self._parts(groups[prefix], layouts):
                    if len(part) == 1:  # the context's first candidate, or one too long
                        totals = [self.decoder.score_one(layouts[part[0]], rows)]
                    else:
                        totals = self.decoder.score_together([layouts[i] for i in part], rows)
                    for index, total in zip(part, totals, strict=True):
                        candidate = requests[index].candidate
                        finite(total, source, "log-probability", candidate)
                        layout = layouts[index]
                        delivery.add([index], [Score(total, len(layout.targets), layout.truncated)])
        return delivery.scores

    def _parts(self, members: list[int], layouts: list) -> list[list[int]]:
        """The first candidate alone (it decodes the context), then the others in groups that
        fit one batch as separate sequences (alone when they cannot)."""
        parts, current = [[members[0]]], []
        for index in members[1:]:
            if len(current) < SEQUENCES and self.decoder.fits_together(
                [layouts[i] for i in (*current, index)]
            ):
                current.append(index)
                continue
            if current:
                parts.append(current)
            current = [index] if self.decoder.fits_together([layouts[index]]) else []
            if not current:
                parts.append([index])
        if current:
            parts.append(current)
        return parts
