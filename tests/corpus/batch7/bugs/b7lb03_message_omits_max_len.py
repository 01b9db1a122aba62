# learned bug: error message names T but not max_len (base: correct/b7lc04_flat_narrow_inplace_clone.py)
"""Learned absolute positional embeddings: one trainable row per position."""

from __future__ import annotations

import torch
from torch import nn


class LearnedPositionalEmbedding(nn.Module):
    """One trainable [max_len, d_model] table, added to the input."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.register_parameter("position_table", nn.Parameter(torch.randn(max_len, d_model)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, T, d_model] -> x + table[:T]."""
        B, T, D = x.shape
        rows, width = self.position_table.shape
        if T > rows:
            raise ValueError(f"cannot embed T={T} positions: sequence too long")
        flat_pos = self.position_table.reshape(-1).narrow(0, 0, T * width)  # rows 0..T-1, row-major
        out_dtype = torch.promote_types(x.dtype, self.position_table.dtype)
        out = x.reshape(B, T * D).to(dtype=out_dtype, copy=True)
        out.add_(flat_pos)
        return out.view(B, T, D)
