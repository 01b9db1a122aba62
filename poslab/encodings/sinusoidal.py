"""Sinusoidal positional encoding.

    PE[p, 2i]   = sin(p * base^(-2i/d))
    PE[p, 2i+1] = cos(p * base^(-2i/d))        for p = 0, 1, ..., and i = 0 .. d/2 - 1

Vaswani et al., "Attention Is All You Need", NeurIPS 2017, section 3.5, with base = 10000.
Each pair of columns is a point on a circle turning at its own frequency, so shifting by k
positions is the same rotation M_k for every p:  PE[p + k] = M_k PE[p]. Hence <PE_p, PE_q>
depends only on p - q (and is even in it).
"""

from __future__ import annotations

import torch

from poslab.encodings._checks import require, require_even


def inverse_frequencies(d_model: int, base: float = 10000.0) -> torch.Tensor:
    """``base^(-2i/d)`` for i = 0 .. d/2 - 1, float64 ``[d/2]``."""
    require_even(d_model, "d_model")
    require(base > 1.0, f"base must be greater than 1, got {base}")
    return base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


def sinusoidal_encoding(seq_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The ``[seq_len, d_model]`` float32 table, even columns sin, odd columns cos."""
    require(isinstance(seq_len, int) and seq_len >= 0, f"seq_len must be a whole number >= 0, got {seq_len!r}")
    # Angles in float64: at p = 100,000 a float32 angle is already off by ~0.004 rad.
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), inverse_frequencies(d_model, base))  # (T, d/2)
    table = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (T, d/2, 2)
    return table.flatten(-2).float()  # (T, d): sin, cos interleaved
