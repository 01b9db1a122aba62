# style: float64 angles via torch.outer, (sin, cos) stacked on a new last axis and flattened -> interleaved layout
from __future__ import annotations

import torch


def sinusoidal_encoding(seq_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The [seq_len, d_model] float32 table (see the module docstring)."""
    half = d_model // 2
    positions = torch.arange(seq_len, dtype=torch.float64)
    exponents = torch.arange(half, dtype=torch.float64) * (2.0 / d_model)
    freqs = torch.pow(torch.tensor(float(base), dtype=torch.float64), -exponents)
    angles = torch.outer(positions, freqs)  # [seq_len, half]
    pairs = torch.stack((angles.sin(), angles.cos()), dim=-1)  # [seq_len, half, 2]
    return pairs.reshape(seq_len, d_model).to(torch.float32)
