"""Token-budget batching with length sorting, and out-of-memory back-off that never splits a chunk.

A *chunk* is one shared prefix (a context) with some of its requests: the unit a batch is made of.
Each chunk declares the forward passes it takes part in as ``(rows, query length, key length)``;
a batch fits when, for every pass, its padded tokens and its attention scores stay in budget.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import torch

from nnd_suites.errors import NNDError


@dataclass(slots=True)
class Chunk:
    prefix: tuple[int, ...]
    requests: list[int]
    #: per forward pass: (rows, tokens per row, keys each token attends over)
    passes: tuple[tuple[int, int, int], ...]

    @property
    def size(self) -> int:
        return max(rows * length for rows, length, _ in self.passes)


@dataclass(slots=True)
class Budget:
    """Limits for one forward pass: padded tokens, attention-score elements, chunks per batch."""

    tokens: int | None = None
    attention: int | None = None
    chunks: int | None = None
    #: positions whose logits are computed at once (the LM head is applied in slices)
    head_positions: int = 4096


def grouped_chunks(
    groups: Mapping[tuple[int, ...], list[int]], tail: Callable[[int], int], size: int
) -> list[Chunk]:
    """Each prefix's requests in chunks of at most ``size``: the prefix runs as one row, then
    every request as a row over it, padded to the longest ``tail`` (its tokens after the prefix)."""
    chunks = []
    for prefix, members in groups.items():
        for start in range(0, len(members), size):
            part = members[start : start + size]
            longest = max(map(tail, part))
            passes = ((1, len(prefix), len(prefix)), (len(part), longest, len(prefix) + longest))
            chunks.append(Chunk(prefix, part, passes))
    return chunks


def plan_batches(chunks: Sequence[Chunk], budget: Budget) -> list[list[Chunk]]:
    """Sort chunks by length and fill batches greedily up to the budget (never empty)."""
    ordered = sorted(chunks, key=lambda c: (c.passes[-1][1], c.passes[0][1], len(c.requests)))
    batches: list[list[Chunk]] = []
    current: list[Chunk] = []
    shape: list[list[int]] = []
    for chunk in ordered:
        grown = _grow(shape, chunk)
        if current and not _fits(grown, len(current) + 1, budget):
            batches.append(current)
            current, grown = [], _grow([], chunk)
        current.append(chunk)
        shape = grown
    if current:
        batches.append(current)
    return batches


def _grow(shape: list[list[int]], chunk: Chunk) -> list[list[int]]:
    if not shape:
        return [[rows, length, keys] for rows, length, keys in chunk.passes]
    return [
        [r + rows, max(n, length), max(k, keys)]
        for (r, n, k), (rows, length, keys) in zip(shape, chunk.passes, strict=True)
    ]


def _fits(shape: list[list[int]], n_chunks: int, budget: Budget) -> bool:
    if budget.chunks is not None and n_chunks > budget.chunks:
        return False
    for rows, length, keys in shape:
        if budget.tokens is not None and rows * length > budget.tokens:
            return False
        if budget.attention is not None and rows * length * keys > budget.attention:
            return False
    return True


def is_out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, (torch.OutOfMemoryError, MemoryError)):
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and (
        "out of memory" in text or "can't allocate memory" in text
    )


def run_with_backoff(
    batches: list[list[Chunk]],
    run: Callable[[list[Chunk]], None],
    on_oom: Callable[[], None] | None = None,
) -> Iterator[list[Chunk]]:
    """Run every batch; on out-of-memory, halve the batch (by whole chunks) and retry, and cap
    later batches at that size. Yields each batch once it has run."""
    queue = deque(batches)
    cap: int | None = None
    while queue:
        batch = queue.popleft()
        if cap is not None and len(batch) > cap:
            queue.extendleft(reversed([batch[i : i + cap] for i in range(0, len(batch), cap)]))
            continue
        try:
            run(batch)
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            if on_oom is not None:
                on_oom()
            if len(batch) == 1:
                raise NNDError(
                    "out of memory on a single context with its candidates "
                    f"({batch[0].size} tokens); use a smaller --dtype, another "
                    "--device or a smaller model"
                ) from exc
            half = len(batch) // 2
            cap = half
            queue.extendleft([batch[half:], batch[:half]])
            continue
        yield batch
