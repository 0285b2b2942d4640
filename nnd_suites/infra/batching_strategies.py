"""The batching strategies of the Hugging Face backends, in one table that imports nothing: the
backends accept exactly these (besides ``auto``), and ``--strategy``'s help is written from it,
so the help never names a strategy no backend knows (evaluation/backends/hf_causal.py and
hf_seq2seq.py say what each one does)."""

from __future__ import annotations

#: backend -> its strategies besides ``auto``; ``naive`` is the reference loop of each
HF_STRATEGIES: dict[str, tuple[str, ...]] = {
    "hf_causal": ("packed", "kv", "expand", "naive"),
    "hf_seq2seq": ("shared", "naive"),
}


def strategy_help() -> str:
    """``--strategy``'s help: each backend's strategies, from :data:`HF_STRATEGIES`."""
    per_backend = "; ".join(
        f"{backend}: {', '.join(strategies[:-1])} or {strategies[-1]}"
        for backend, strategies in HF_STRATEGIES.items()
    )
    return (
        f"batching strategy: auto (the fastest one that passes a probe when the model loads); "
        f"{per_backend} (naive: the reference loop, one request per forward pass)"
    )
