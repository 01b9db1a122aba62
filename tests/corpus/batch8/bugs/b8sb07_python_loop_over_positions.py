# sinusoidal bug: Python loop over positions (list comprehension) instead of the einsum outer product (base: b8sc03_einsum_float64_concatenated.py)
from __future__ import annotations

import operator

import torch


def sinusoidal_encoding(seq_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The [seq_len, d_model] float32 table (see the module docstring)."""
    n, d = operator.index(seq_len), operator.index(d_model)
    inv_freq = float(base) ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    pos = torch.arange(n, dtype=torch.float64)
    theta = torch.stack([p * inv_freq for p in pos])
    return torch.cat([theta.sin(), theta.cos()], dim=-1).float()
