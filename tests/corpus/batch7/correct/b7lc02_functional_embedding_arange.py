# style: functional F.embedding lookup of torch.arange positions built on x's device; IndexError with a message (like nn.Embedding); OpenAI GPT-2 init std 0.01
"""Learned absolute positional embeddings: one trainable row per position."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class LearnedPositionalEmbedding(nn.Module):
    """One trainable [max_len, d_model] table, added to the input."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.wpe = nn.Parameter(torch.randn(max_len, d_model) * 0.01)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, T, d_model] -> x + table[:T]."""
        batch, length, _ = x.shape
        limit = self.wpe.size(0)
        if length > limit:
            raise IndexError(f"positions 0..{length - 1} requested (T={length}) but max_len={limit}")
        positions = torch.arange(length, dtype=torch.long, device=x.device)
        pos = F.embedding(positions, self.wpe)  # [T, d_model]
        return torch.add(x, pos.unsqueeze(0))
