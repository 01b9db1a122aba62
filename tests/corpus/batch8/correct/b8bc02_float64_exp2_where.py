# style: closed-form float64 exponents through torch.exp2 (no branch: the power-of-two case is the empty tail), float64 bias via torch.where on broadcast [1,T,1]/[1,1,T] grids, one cast to float32 at the end
from __future__ import annotations

import math

import torch


def _slopes64(n_heads: int) -> torch.Tensor:
    c = 2 ** math.floor(math.log2(n_heads))  # largest power of two <= n_heads
    h = torch.arange(1, c + 1, dtype=torch.float64)
    head = torch.exp2(-8.0 * h / c)  # the c slopes for c heads
    k = 2 * torch.arange(n_heads - c, dtype=torch.float64) + 1  # 1st, 3rd, 5th, ... of 2c heads: k = 1, 3, 5, ...
    tail = torch.exp2(-8.0 * k / (2 * c))
    return torch.cat([head, tail])


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """The per-head slopes m_h, float32 [n_heads] (see the module docstring)."""
    return _slopes64(n_heads).to(torch.float32)


def alibi_bias(n_heads: int, seq_len: int) -> torch.Tensor:
    """[n_heads, T, T] float32: -m_h (i - j) for j <= i, -inf for j > i (see the module docstring)."""
    m = _slopes64(n_heads).view(-1, 1, 1)
    i = torch.arange(seq_len, dtype=torch.float64).view(1, -1, 1)
    j = torch.arange(seq_len, dtype=torch.float64).view(1, 1, -1)
    neg_inf = torch.tensor(float("-inf"), dtype=torch.float64)
    bias = torch.where(j <= i, m * (j - i), neg_inf)  # m (j - i) = -m (i - j), +0 on the diagonal
    return bias.to(torch.float32)
