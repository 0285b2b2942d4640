"""``ServedBackend``: score (context, candidate) requests on an OpenAI-compatible server."""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from pydantic import ConfigDict, Field, model_validator

from nnd_suites.errors import NNDError, ScoringError
from nnd_suites.evaluation.backend import (
    Backend,
    BackendMetadata,
    BackendParams,
    Score,
    ScoreDelivery,
    ScoreRequest,
    ScoreSink,
)
from nnd_suites.evaluation.backends.served.client import (
    DEFAULT_MAX_ANSWER_BYTES,
    Client,
    run_bounded,
)
from nnd_suites.evaluation.backends.served.probe import probe_engine
from nnd_suites.evaluation.backends.served.protocol import (
    candidate_score,
    check_answer_model,
    completion_payload,
    echoed_tokens,
)
from nnd_suites.evaluation.scoring import TokenizerTraits, boundary_texts
from nnd_suites.evaluation.tiny import embedded_or
from nnd_suites.infra.bounded_http import redact

logger = logging.getLogger(__name__)

#: Served prompts are one text: a candidate starts a new word (the space HF's byte-level and
#: SentencePiece tokenizers imply) unless the context ends a line or the candidate brings its own.
_JOINED = TokenizerTraits(leading=(), trailing=(), bos=None, eos=None, space_prefix=True)
#: Finished requests are handed to the sink (the score cache) in groups this small.
SINK_EVERY = 8
VOLATILE = frozenset({"created", "permission", "permissions"})
#: What of llama.cpp's /props identifies the model and build (the rest is per-slot state).
STABLE_PROPS = frozenset({"model_path", "build_info", "chat_template", "modalities", "n_ctx"})


class ServedParams(BackendParams):
    """The served backend's options; the run options an engine cannot honour are refused."""

    # nan and inf reach the range checks of load() and the client, which say them in their words
    model_config = ConfigDict(allow_inf_nan=True)

    base_url: str | None = Field(None, description="the OpenAI-compatible server (required)")
    api_key_env: str | None = Field(None, description="environment variable of the API key")
    concurrency: int | None = Field(None, description="requests in flight (16)")
    timeout: float | None = Field(None, description="total seconds per request (300)")
    retries: int | None = Field(None, description="retries of a failed request (5)")
    backoff: float | None = Field(None, description="first retry delay in seconds (0.5)")
    tokenizer: str | None = Field(None, description="where to read the BOS/EOS texts")
    eos_text: str | None = Field(None, description="the model's end-of-sequence text")
    probe_tolerance: float | None = Field(None, description="the probe's tolerance (0.01)")
    max_answer_bytes: int | None = Field(None, description="answer size cap (64 MiB)")
    trust_remote_code: bool = Field(False, description="refused: the server loads the model")
    device_map: str | None = Field(None, description="refused: the server places the model")

    @model_validator(mode="after")
    def _run_options_the_engine_decides(self) -> ServedParams:
        defaults = BackendParams()
        fixed = [
            f"{name} {getattr(self, name)!r}"
            for name in ("device", "dtype", "batch_size", "revision", "strategy")
            if getattr(self, name) != getattr(defaults, name)
        ]
        if fixed:
            raise ValueError(
                f"the server decides these, not nnd-suites: {', '.join(fixed)} (batching: "
                "--concurrency; the model's revision and dtype: the server's own settings)"
            )
        return self


class ServedBackend(Backend):
    name: ClassVar[str] = "served"
    metadata = BackendMetadata(
        summary="OpenAI-compatible server (vLLM, SGLang, llama.cpp), probed before use",
        description="An OpenAI-compatible completion server (vLLM, SGLang, llama.cpp's server) "
        "echoing prompt log-probabilities; the engine is checked by a probe before any score "
        "is trusted. Pick it to score at scale on an engine you run (--base-url).",
    )
    Params = ServedParams
    #: The probe's fixed prompts cannot tell every model apart (one swapped behind the same URL
    #: and id may answer them alike): this many of the scores the cache would answer are
    #: re-scored live first, drawn at random (nnd_suites.evaluation.identity).
    cache_check: ClassVar[int] = 8

    def __init__(
        self,
        client: Client,
        model: str,
        *,
        eos_text: str,
        bos_text: str | None,
        server: dict[str, str],
        concurrency: int,
        probe: dict,
        tolerance: float = 1e-2,
    ) -> None:
        self.client, self.model, self.mode = client, model, "default"
        self.eos_text, self.bos_text, self.server = eos_text, bos_text, server
        self.concurrency, self.probe = concurrency, probe
        self.cache_tolerance = tolerance  # the probe's: the engine's own run-to-run noise

    @classmethod
    def load(cls, model: str, *, mode: str = "default", **options: Any) -> ServedBackend:
        """``model`` is the served model id. Options: ``base_url`` (required), ``api_key_env``
        (default OPENAI_API_KEY), ``concurrency`` (16), ``timeout`` (s, 300), ``retries`` (5),
        ``tokenizer`` (where to read the EOS/BOS texts; default the model id), ``eos_text``,
        ``probe_tolerance`` (0.01), ``max_answer_bytes`` (64 MiB). The run options the engine
        decides (device, dtype, batch size, revision, strategy) are refused when set."""
        if mode != "default":
            raise NNDError(
                "the served backend scores in default mode only: --compat reference tokenises "
                "context and candidate apart with a BOS between them, which a text completion "
                "endpoint cannot reproduce; use hf_causal for reference scores"
            )
        hf_only = sorted(k for k in ("trust_remote_code", "device_map") if options.get(k))
        if hf_only:
            raise NNDError(
                f"the served backend does not take {', '.join(hf_only)}: the server loads the "
                "model; drop these options or use an hf backend"
            )
        base_url = options.get("base_url")
        if not base_url:
            raise NNDError("the served backend needs --base-url (e.g. http://localhost:8000/v1)")
        concurrency = _given(options.get("concurrency"), 16)
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise NNDError(f"--concurrency {concurrency!r}: give a whole number >= 1")
        tolerance = float(_given(options.get("probe_tolerance"), 1e-2))
        if not (math.isfinite(tolerance) and tolerance >= 0):  # inf: any echo would pass
            raise NNDError(
                f"served client: probe_tolerance={tolerance!r}; give a finite number >= 0 "
                "(nats per token the probe lets the engine differ from itself)"
            )
        key_env = options.get("api_key_env") or "OPENAI_API_KEY"
        client = Client(
            str(base_url).rstrip("/"),
            api_key=os.environ.get(key_env) or None,
            timeout=float(_given(options.get("timeout"), 300)),
            retries=int(_given(options.get("retries"), 5)),
            backoff=float(_given(options.get("backoff"), 0.5)),
            max_bytes=_given(options.get("max_answer_bytes"), DEFAULT_MAX_ANSWER_BYTES),
        )
        eos_text, bos_text = _special_texts(
            # a --tokenizer may be the embedded model; the model's own name is the server's
            embedded_or(options["tokenizer"]) if options.get("tokenizer") else model,
            options.get("eos_text"),
        )
        server = _server_identity(client, model)
        probe = probe_engine(client, model, eos_text, tolerance)
        return cls(
            client,
            model,
            eos_text=eos_text,
            bos_text=bos_text,
            server=server,
            concurrency=concurrency,
            probe=probe,
            tolerance=tolerance,
        )

    @property
    def identity(self) -> dict[str, str]:
        return {
            "backend": self.name,
            "model": self.model,
            "base_url": _without_credentials(self.client.base_url),
            "mode": self.mode,
            "eos_text": self.eos_text,
            # what an empty context is sent as (else the EOS text): pmi's neutral contexts
            "bos_text": self.bos_text or "",
            # what the probe's echo measured: a model swapped behind the same id differs here
            "probe_fingerprint": str(self.probe.get("fingerprint", "")),
            **self.server,
        }

    def describe(self) -> dict[str, Any]:
        return {**self.identity, "concurrency": self.concurrency, "probe": self.probe}

    def score(
        self,
        requests: Sequence[ScoreRequest],
        *,
        sink: ScoreSink | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[Score]:
        # what finished before a failure is kept in the cache
        with ScoreDelivery(len(requests), sink, progress, every=SINK_EVERY) as delivery:
            for index, score in run_bounded(self._score_one, requests, self.concurrency):
                delivery.add([index], [score])
        return delivery.scores

    def _score_one(self, request: ScoreRequest) -> Score:
        context, candidate = boundary_texts(
            request.context, request.candidate, _JOINED, "default", True
        )
        if not context:  # as HF: the first candidate token is predicted from BOS (else EOS)
            context = self.bos_text if self.bos_text is not None else self.eos_text
        prompt = context + candidate + self.eos_text
        answer = self.client.post("completions", completion_payload(self.model, prompt, echo=True))
        describe = f"request context={request.context[-60:]!r} candidate={request.candidate!r}"
        try:
            check_answer_model(answer, self.model)
            tokens = echoed_tokens(answer, echo=True, prompt=prompt)
        except ScoringError as error:
            raise ScoringError(f"{describe}: {error}") from None
        return candidate_score(
            tokens, len(context), len(context) + len(candidate), self.eos_text, describe
        )


def _given(value: Any, default: float) -> Any:
    """``value``, or ``default`` when it was not given (0 is given: the range check refuses it)."""
    return default if value is None else value


def _special_texts(tokenizer: str, eos_text: str | None) -> tuple[str, str | None]:
    """The EOS and BOS token texts appended to prompts: from ``eos_text`` or the tokenizer."""
    try:
        # lazy: transformers only to read a tokenizer's special texts
        from transformers import AutoTokenizer

        loaded = AutoTokenizer.from_pretrained(tokenizer, trust_remote_code=False)
    except Exception as error:  # any failure means the same to the user
        if eos_text:
            logger.warning(
                "cannot load the tokenizer %r (%s); scoring with --eos-text %r and no BOS text: "
                "a candidate with an empty context follows the EOS text (pass --tokenizer to "
                "use the model's BOS)",
                tokenizer,
                type(error).__name__,
                eos_text,
            )
            return eos_text, None
        raise NNDError(
            f"cannot load the tokenizer {tokenizer!r} to learn the EOS token text "
            f"({type(error).__name__}: {error}); pass --tokenizer PATH_OR_HUB_ID or "
            "--eos-text TEXT (e.g. '</s>')"
        ) from None
    eos = eos_text or loaded.eos_token
    if not eos:
        raise ScoringError(f"the tokenizer {tokenizer!r} has no EOS token; pass eos_text=TEXT")
    return str(eos), loaded.bos_token or None


def _server_identity(client: Client, model: str) -> dict[str, str]:
    """What the server says about the model and itself (part of the cache key)."""
    listed = client.get("models")
    data = listed.get("data") if isinstance(listed, dict) else None
    if listed is not None and not isinstance(data, list):
        raise ScoringError(
            f"{_without_credentials(client.base_url)}/models answered {_flat(listed)[:200]}, not "
            '{"data": [{"id": ...}, ...]}: the server is not OpenAI-compatible (or this is not '
            "its /v1 URL); check --base-url"
        )
    entries = {str(m.get("id")): m for m in data or [] if isinstance(m, dict)}
    if entries and model not in entries:
        raise NNDError(
            f"the server serves {sorted(entries)}, not {model!r}: pass one of them as --model"
        )
    # Volatile fields (vLLM stamps "created" at every call) would defeat the cache.
    entry = {k: v for k, v in entries.get(model, {}).items() if k not in VOLATILE}
    found = {"server_model": _flat(entry)}
    if client.base_url.endswith("/v1"):  # llama.cpp: /props; vLLM, SGLang: /version
        root = client.base_url[: -len("/v1")]
        for name in ("version", "props"):
            info = client.get(f"{root}/{name}")
            if isinstance(info, dict):
                info = {k: v for k, v in info.items() if k in STABLE_PROPS or name == "version"}
                found[f"server_{name}"] = _flat(info)
    return found


def _flat(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)[:2000]


#: The URL without user:password, query and fragment (one definition for every URL shown).
_without_credentials = redact
