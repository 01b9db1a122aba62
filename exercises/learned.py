"""Learned absolute positional embeddings (BERT, GPT-2): one trainable row per position.

    class LearnedPositionalEmbedding(nn.Module):
        __init__(max_len, d_model)
        forward(x) -> x + table[:T]

    table  [max_len, d_model]   the module's only parameter, trainable (an nn.Parameter;
                                any finite starting values: OpenAI's GPT-2 code draws them
                                with standard deviation 0.01, Hugging Face and nanoGPT 0.02,
                                nn.Embedding 1, and ViT starts from zeros)
    x      [B, T, d_model]      batch first; row t of the table is added at position t
    out    [B, T, d_model]

Rules:
- Exactly one parameter: no extra scale, bias or layer; not a buffer.
- T > max_len raises ValueError (or IndexError, what nn.Embedding and Python indexing raise) whose
  message names both T and max_len, from an explicit check before any lookup: a learned table has no
  row for a position it never saw (no truncation, no wrapping). The IndexError that F.embedding or
  table[positions] raise by themselves on the CPU does not count: on a GPU that lookup is a
  device-side assert that stops the program. An assert does not count either (python -O removes it).
- x is not modified in place; non-contiguous x works.
- The module follows .to(torch.float64) and .to(device): keep the table registered as a parameter
  and build any helper tensor on x's device.
"""

from __future__ import annotations

import torch
from torch import nn


class LearnedPositionalEmbedding(nn.Module):
    """One trainable [max_len, d_model] table, added to the input (see the module docstring)."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        raise NotImplementedError("LearnedPositionalEmbedding is not implemented yet")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, T, d_model] -> x + table[:T]."""
        raise NotImplementedError("LearnedPositionalEmbedding.forward is not implemented yet")
