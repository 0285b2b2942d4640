"""Rows of token ids (or positions, segment ids) of different lengths as one padded tensor."""

from __future__ import annotations

from collections.abc import Sequence

import torch


def pad_rows(
    rows: Sequence[Sequence[int]], fill: int, *, width: int | None = None, left: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(values, mask)``: each row in a ``(len(rows), width)`` long tensor, the rest ``fill``;
    right-aligned with ``left=True`` (left padding), and a 0/1 mask of the real entries."""
    width = max((len(row) for row in rows), default=0) if width is None else width
    values = torch.full((len(rows), width), fill, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for index, row in enumerate(rows):
        if not len(row):
            continue
        span = slice(width - len(row), width) if left else slice(0, len(row))
        values[index, span] = torch.as_tensor(row, dtype=torch.long)
        mask[index, span] = 1
    return values, mask
