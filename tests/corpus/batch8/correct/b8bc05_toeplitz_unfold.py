# style: float32 throughout: every slope as 2^(-8k/(2c)) with even k then odd k via torch.exp2; bias as a Toeplitz matrix: one [H, 2T-1] row per head (-inf written in place), slid with Tensor.unfold and flipped
from __future__ import annotations

import torch


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """The per-head slopes m_h, float32 [n_heads] (see the module docstring)."""
    n = int(n_heads)
    c = 1 << (n.bit_length() - 1)  # largest power of two <= n
    # in units of the 2c-head table 2^(-8k/(2c)), k = 1..2c: the c-head slopes are k = 2, 4, ..., 2c,
    # the extra ones the 1st, 3rd, 5th, ... entries, k = 1, 3, 5, ...
    k = torch.cat([torch.arange(2, 2 * c + 1, 2), 2 * torch.arange(n - c) + 1])
    return torch.exp2(k.to(torch.float32) * (-8.0 / (2 * c)))


def alibi_bias(n_heads: int, seq_len: int) -> torch.Tensor:
    """[n_heads, T, T] float32: -m_h (i - j) for j <= i, -inf for j > i (see the module docstring)."""
    T = seq_len
    m = alibi_slopes(n_heads=n_heads)
    offsets = torch.arange(-(T - 1), T, dtype=torch.float32)  # d = j - i, -(T-1) .. T-1
    row = m[:, None] * offsets.clamp(max=0)  # [H, 2T-1]: m (j - i) = -m (i - j) for d <= 0
    row[:, T:] = float("-inf")  # d > 0 (index T-1 is d = 0): the future
    windows = row.unfold(1, T, 1)  # [H, T, T]: windows[h, w, e] = row[h, w + e]
    return windows.flip(1)  # bias[h, i, j] = row[h, T-1-i+j], i.e. d = j - i
