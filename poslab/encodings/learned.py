"""Learned absolute positional embeddings.

    x'[b, t] = x[b, t] + E[t],   E a trainable [max_len, d] table,  t < max_len

Devlin et al., "BERT", NAACL 2019, section 3; Radford et al., "Language Models are Unsupervised
Multitask Learners" (GPT-2), 2019. Nothing ties row t to row t+1, so the table has no rows for
positions it never saw: a model with max_len rows cannot run on a longer sequence at all.
"""

from __future__ import annotations

import torch
from torch import nn

from poslab.encodings._checks import require, require_positive_int


class LearnedPositionalEmbedding(nn.Module):
    """One trainable ``[max_len, d_model]`` table, added to the input."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        require_positive_int(max_len, "max_len")
        require_positive_int(d_model, "d_model")
        self.max_len = max_len
        self.d_model = d_model
        # std 0.02: Hugging Face's and nanoGPT's GPT-2 (OpenAI's own code draws wpe with 0.01, wte with 0.02).
        self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x ``[B, T, D]`` -> ``x + table[:T]``; ``T > max_len`` raises ``ValueError``."""
        require(x.dim() == 3, f"x must be [B, T, D], got shape {tuple(x.shape)}")
        seq_len = x.shape[1]
        require(
            seq_len <= self.max_len,
            f"sequence length {seq_len} is longer than max_len {self.max_len}: "
            f"a learned table has no rows past position {self.max_len - 1}",
        )
        require(x.shape[2] == self.d_model, f"x has {x.shape[2]} features but the table has d_model {self.d_model}")
        return x + self.table[:seq_len]  # (B, T, D) + (T, D) broadcasts over B
