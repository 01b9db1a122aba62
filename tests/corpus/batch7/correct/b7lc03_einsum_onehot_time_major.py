# style: no indexing at all: einsum with a one-hot [T, max_len] selection matrix built on x's device in the table's dtype, time-major broadcast, returns a permuted (possibly non-contiguous) view; ViT zero init
"""Learned absolute positional embeddings: one trainable row per position."""

from __future__ import annotations

import torch
from torch import nn


class LearnedPositionalEmbedding(nn.Module):
    """One trainable [max_len, d_model] table, added to the input."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.zeros(max_len, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, T, d_model] -> x + table[:T]."""
        T = x.size(-2)
        max_len = self.table.size(0)
        if T > max_len:
            raise ValueError(f"input has T={T} positions but the learned table only has max_len={max_len} rows")
        select = torch.eye(T, max_len, dtype=self.table.dtype, device=x.device)  # row t is one-hot at t
        pos = torch.einsum("tm,md->td", select, self.table)  # exact: each output is 1*v plus zeros
        x_tbd = x.permute(1, 0, 2)  # [T, B, d]
        return (x_tbd + pos.unsqueeze(1)).permute(1, 0, 2)
