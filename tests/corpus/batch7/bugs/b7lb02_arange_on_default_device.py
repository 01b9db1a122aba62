# learned bug: helper position ids built on the default (CPU) device instead of x's device (base: correct/b7lc05_nn_embedding_submodule.py)
"""Learned absolute positional embeddings: one trainable row per position."""

from __future__ import annotations

import torch
from torch import nn


class LearnedPositionalEmbedding(nn.Module):
    """One trainable [max_len, d_model] table, added to the input."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.wpe = nn.Embedding(max_len, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, T, d_model] -> x + table[:T]."""
        T = x.shape[1]
        if T > self.wpe.num_embeddings:
            raise ValueError(f"T={T} exceeds max_len={self.wpe.num_embeddings} learned positions")
        pos_ids = torch.arange(0, T, dtype=torch.long).unsqueeze(0)  # [1, T]
        return torch.add(input=x, other=self.wpe(pos_ids))
