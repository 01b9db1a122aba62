# style: integer bit arithmetic on the head count (bit_length), exact rational exponents per head, keyword-only private helper, einsum outer product, Hugging Face's finite mask torch.finfo(float32).min written in place
from __future__ import annotations

import torch


def _exponents(*, n_heads: int) -> list[float]:
    n = int(n_heads)
    c = 1 << (n.bit_length() - 1)  # largest power of two <= n
    first = [-(8 * (h + 1)) / c for h in range(c)]
    # slopes of 2c heads are 2^(-8 (k+1) / (2c)); the 1st, 3rd, 5th, ... are k = 0, 2, 4, ...
    extra = [-(8 * (2 * k + 1)) / (2 * c) for k in range(n - c)]
    return first + extra


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """The per-head slopes m_h, float32 [n_heads] (see the module docstring)."""
    return torch.tensor([2.0**e for e in _exponents(n_heads=n_heads)], dtype=torch.float32)


def alibi_bias(n_heads: int, seq_len: int) -> torch.Tensor:
    """[n_heads, T, T] float32: -m_h (i - j) for j <= i, -inf for j > i (see the module docstring)."""
    slopes = alibi_slopes(n_heads=n_heads)
    pos = torch.arange(seq_len, dtype=torch.float32)
    rel = pos.unsqueeze(0) - pos.unsqueeze(1)  # j - i
    bias = torch.einsum("h,ij->hij", slopes, rel.clamp(max=0))
    return bias.masked_fill_(rel > 0, torch.finfo(torch.float32).min)
