"""``hf``: the Hugging Face backend that reads the model's config and picks causal or seq2seq
(the way lm-evaluation-harness's ``HFLM`` decides inside one class); a path ending in ``.gguf``
goes to ``llama_cpp``."""

from __future__ import annotations

from typing import Any

from nnd_suites.evaluation.backend import BACKENDS, Backend, BackendMetadata
from nnd_suites.evaluation.backends.hf_loading import HFParams, load_config


class HFAutoBackend(Backend):
    """Not a scorer itself: ``load`` returns an ``hf_causal`` or ``hf_seq2seq`` backend."""

    name = "hf"
    metadata = BackendMetadata(
        summary="Hugging Face model: hf_seq2seq for encoder-decoders, else hf_causal",
        description="A Hugging Face model (Hub id or folder), the default backend: its config "
        "decides, hf_seq2seq for an encoder-decoder and hf_causal otherwise (a path ending in "
        ".gguf goes to llama_cpp). Pick it unless you need one of them by name.",
    )
    Params = HFParams

    @classmethod
    def load(cls, model: str, **options: Any) -> Backend:
        if str(model).lower().endswith(".gguf"):  # a llama.cpp model file, not a HF folder
            return BACKENDS.get("llama_cpp").load(model, **options)
        config = load_config(
            model, options.get("revision"), bool(options.get("trust_remote_code", False))
        )
        chosen = "hf_seq2seq" if getattr(config, "is_encoder_decoder", False) else "hf_causal"
        return BACKENDS.get(chosen).load(model, config=config, **options)

    @property
    def identity(self) -> dict[str, str]:  # pragma: no cover - load returns another backend
        raise NotImplementedError

    def score(self, requests, *, sink=None, progress=None):  # pragma: no cover
        raise NotImplementedError
