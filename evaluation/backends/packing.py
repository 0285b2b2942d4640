"""Packed rows and 4-D attention masks for the causal fast paths (packed and kv).

A packed row holds a context once followed by each of its candidates; a candidate's tokens see
the context and themselves, never another candidate (segment ids say which is which).
"""

from __future__ import annotations

import math

import torch

from nnd_suites.evaluation.backends.padding import pad_rows
from nnd_suites.evaluation.batching import Chunk
from nnd_suites.evaluation.scoring import Layout


def shared_split(layout: Layout) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(prefix, continuation) with a non-empty prefix: an empty one (the reference mode's empty
    context) takes the first input token, so every row starts with a real token."""
    if layout.prefix or not layout.inputs:
        return layout.prefix, layout.inputs
    return layout.inputs[:1], layout.inputs[1:]


def row_span(prefix_length: int, pair_ratio: float) -> int:
    """Candidate tokens per row that make a row cheapest per candidate token.

    A row pays for its prefix again (linear work) and for attention over every pair of its tokens
    (quadratic, although a candidate needs only the context and itself). With P prefix tokens, S
    candidate tokens and ``pair_ratio`` = linear work per token / attention work per pair, the work
    per candidate token is proportional to (ratio * P + P**2) / S + S + a constant, least at
    S = sqrt(P**2 + ratio * P): a short context shared by many candidates (pmi's neutral context,
    2 tokens for 1,480 candidates) gets many short rows instead of a few rows thousands of tokens
    long, and a long context keeps all its candidates in one row. The same optimum holds for kv
    (the prefix runs in its own pass, the candidates attend over it and their own row).
    """
    return max(1, math.isqrt(prefix_length**2 + int(pair_ratio * prefix_length)))


def packed_row(chunk: Chunk, layouts: list[Layout], with_prefix: bool):
    """One row: token ids, position ids, segment ids (-1 context, k for the k-th candidate), and
    for each target (in context?, row index of the output that predicts it), the target and the
    request it belongs to. Without the prefix, the row holds the candidates only (they follow the
    context's cache) and a target predicted by the last context token points into the context."""
    prefix = list(chunk.prefix)
    ids = prefix[:] if with_prefix else []
    positions = list(range(len(ids)))
    segments = [-1] * len(ids)
    query, targets, owners = [], [], []
    for k, index in enumerate(chunk.requests):
        layout = layouts[index]
        shared, cont = shared_split(layout)  # shared + cont is the same sequence as prefix + inputs
        start = len(ids)
        for j, target in enumerate(layout.targets):
            seq = layout.first + j
            if seq < len(shared):
                query.append((not with_prefix, seq))
            else:
                query.append((False, start + seq - len(shared)))
            targets.append(target)
            owners.append(index)
        ids += cont
        positions += range(len(shared), len(shared) + len(cont))
        segments += [k] * len(cont)
    return ids, positions, segments, query, targets, owners


def cached_mask(
    lengths: torch.Tensor, width: int, segments: torch.Tensor, dtype: torch.dtype
) -> torch.Tensor:
    """Additive 4-D mask of candidate rows over [context cache (right-padded) | the row itself]:
    every row position sees its context; a candidate also sees its own earlier tokens."""
    span = segments.shape[1]
    context = torch.arange(width)[None, None, :] < lengths[:, None, None]
    order = torch.arange(span)
    causal = order[None, :, None] >= order[None, None, :]
    keys, queries = segments[:, None, :], segments[:, :, None]
    own = causal & (keys == queries) & (keys != -2)
    allowed = torch.cat([context.expand(-1, span, -1), own], dim=2)
    mask = torch.zeros(allowed.shape, dtype=dtype)
    mask.masked_fill_(~allowed, torch.finfo(dtype).min)
    return mask[:, None]


def pad_packed(rows, pad_id: int, width: int) -> tuple[torch.Tensor, ...]:
    """Token ids, positions and segment ids (-2: padding) of packed rows, padded to ``width``."""
    ids, _ = pad_rows([row[0] for row in rows], pad_id, width=width)
    positions, _ = pad_rows([row[1] for row in rows], 0, width=width)
    segments, _ = pad_rows([row[2] for row in rows], -2, width=width)
    return ids, positions, segments


def packed_mask(segments: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Additive 4-D mask: causal, a candidate sees the context and itself, padding nothing but
    itself (so no row is fully masked)."""
    length = segments.shape[1]
    order = torch.arange(length)
    causal = order[None, :, None] >= order[None, None, :]
    keys, queries = segments[:, None, :], segments[:, :, None]
    allowed = causal & ((keys == -1) | (keys == queries)) & (keys != -2)
    allowed |= torch.eye(length, dtype=torch.bool)[None]
    mask = torch.zeros(allowed.shape, dtype=dtype)
    mask.masked_fill_(~allowed, torch.finfo(dtype).min)
    return mask[:, None]
