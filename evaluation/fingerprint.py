"""Fingerprints of an in-memory model's weights, config and tokenizer: part of its cache scope.

A model built ``from_config`` or fine-tuned in a notebook has no revision that tells its states
apart, so the score cache keys it by what it holds. The weight fingerprint is a sha256 over every
tensor of the state dict (parameters and buffers): its name, dtype, shape and bytes, so two
models differing in any one value never share a scope. Large tensors are hashed in blocks on
several threads (hashlib releases the GIL), then the block digests are hashed in order;
``benchmarks/bench_fingerprint.py`` measures the cost: 5.4 s for a 1B-parameter fp32 model
(3.8 GB) on 2 busy cores, 0.5-0.7 GB/s; sha256 runs at ~0.4 GB/s per such core, so more idle cores
make it proportionally faster. The training callback pays it once per scoring.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

logger = logging.getLogger(__name__)

#: Bytes per hashed block: large enough to amortise the call, small enough to spread a big
#: embedding matrix over every thread.
BLOCK = 64 << 20
#: Threads hashing blocks (copies of GPU tensors to the CPU happen one tensor at a time).
THREADS = min(8, os.cpu_count() or 1)


def weights_fingerprint(model: Any) -> str:
    """``sha256:<hex>`` of every tensor of ``model.state_dict()`` (name, dtype, shape, bytes).

    Weights on the meta device (offloaded by accelerate) cannot be read: the fingerprint is then
    unique to this call, so their scores are never reused from the cache (said in a warning).
    """
    # lazy: torch loads with a model only (`import nnd_suites` and `list` stay torch-free)
    import torch

    state = model.state_dict(keep_vars=False)
    if any(t.device.type == "meta" for t in state.values()):
        logger.warning(
            "some weights are on the meta device (offloaded): they cannot be fingerprinted, so "
            "this model's scores are not reused from the score cache"
        )
        return f"unreadable:{uuid.uuid4().hex}"
    outer = hashlib.sha256()
    with torch.no_grad(), ThreadPoolExecutor(THREADS) as pool:
        for name, tensor in state.items():
            header = [name, str(tensor.dtype), list(tensor.shape)]
            outer.update(json.dumps(header).encode())
            data = _bytes_of(tensor)
            blocks = [data[i : i + BLOCK] for i in range(0, len(data), BLOCK)]
            for digest in pool.map(_sha256, blocks):
                outer.update(digest)
    return "sha256:" + outer.hexdigest()


def _bytes_of(tensor: Any) -> memoryview:
    """The tensor's values as raw bytes, on the CPU, in row-major order (any dtype, bf16 too)."""
    # lazy: torch loads with a model only (`import nnd_suites` and `list` stay torch-free)
    import torch

    flat = tensor.detach().contiguous().reshape(-1)
    if flat.device.type != "cpu":
        flat = flat.cpu()
    return memoryview(flat.view(torch.uint8).numpy()) if flat.numel() else memoryview(b"")


def _sha256(block: memoryview) -> bytes:
    return hashlib.sha256(block).digest()


def config_fingerprint(config: Any) -> str:
    """``sha256:<hex>`` of every setting of a model's config but where it was loaded from: two
    models with the same weights score differently under another ``rope_theta``, attention
    scaling or window."""
    settings = {k: v for k, v in config.to_dict().items() if k != "_name_or_path"}
    body = json.dumps(settings, sort_keys=True, default=str)
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def tokenizer_fingerprint(tokenizer: Any) -> str:
    """``sha256:<hex>`` of what decides a tokenizer's ids: its class, its whole serialised
    pipeline (fast tokenizers) or vocabulary (others), special tokens and side settings."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        body = backend.to_str()
    else:
        vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
        body = json.dumps(sorted(vocab.items()), ensure_ascii=False)
    settings = {
        "class": type(tokenizer).__name__,
        "special": getattr(tokenizer, "special_tokens_map", {}),
        "added": sorted(str(t) for t in getattr(tokenizer, "get_added_vocab", dict)()),
        **{
            name: getattr(tokenizer, name, None)
            for name in (
                "padding_side",
                "truncation_side",
                "model_max_length",
                "add_bos_token",
                "add_eos_token",
                "clean_up_tokenization_spaces",
            )
        },
    }
    digest = hashlib.sha256(body.encode("utf-8"))
    digest.update(json.dumps(settings, sort_keys=True, default=str).encode("utf-8"))
    return "sha256:" + digest.hexdigest()
