# style: PyTorch-tutorial style, float32 div_term = exp(2i * -ln(base)/d), slice-assignment into a [S, 1, d] zeros buffer (interleaved)
from __future__ import annotations

import math

import torch


def sinusoidal_encoding(seq_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The [seq_len, d_model] float32 table (see the module docstring)."""
    position = torch.arange(seq_len, dtype=torch.float32).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(base) / d_model))
    pe = torch.zeros(seq_len, 1, d_model, dtype=torch.float32)
    pe[:, 0, 0::2] = torch.sin(position * div_term)
    pe[:, 0, 1::2] = torch.cos(position * div_term)
    return pe.squeeze(1)
