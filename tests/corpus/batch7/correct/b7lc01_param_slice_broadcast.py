# style: plain nn.Parameter attribute, basic slice self.weight[:T] broadcast-added over the batch (nanoGPT / Hugging Face init, std 0.02)
"""Learned absolute positional embeddings: one trainable row per position."""

from __future__ import annotations

import torch
from torch import nn


class LearnedPositionalEmbedding(nn.Module):
    """One trainable [max_len, d_model] table, added to the input."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len = max_len
        self.d_model = d_model
        self.weight = nn.Parameter(torch.empty(max_len, d_model))
        nn.init.normal_(self.weight, mean=0.0, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, T, d_model] -> x + table[:T]."""
        seq_len = x.shape[1]
        if seq_len > self.max_len:
            raise ValueError(
                f"sequence length T={seq_len} is longer than max_len={self.max_len}: "
                "the learned table has no row for those positions"
            )
        return x + self.weight[:seq_len]
