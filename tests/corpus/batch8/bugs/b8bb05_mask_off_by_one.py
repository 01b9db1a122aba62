# alibi bug: off-by-one in the causal mask: triu(2) leaves the first key in the future unmasked (+m_h instead of -inf) (base: correct/b8bc01_hf_geometric.py; one line changed)
"""ALiBi slopes and causal bias, in the style of the reference ALiBi / Hugging Face BLOOM code."""

from __future__ import annotations

import math

import torch


def _power_of_2_slopes(n: int) -> list[float]:
    # 2^(-8/n), 2^(-16/n), ...: a geometric sequence whose start and ratio are both 2^(-8/n)
    start = 2 ** (-(2 ** -(math.log2(n) - 3)))
    ratio = start
    return [start * ratio**i for i in range(n)]


def _slopes_list(n: int) -> list[float]:
    if math.log2(n).is_integer():
        return _power_of_2_slopes(n)
    closest = 2 ** math.floor(math.log2(n))
    return _power_of_2_slopes(closest) + _slopes_list(2 * closest)[0::2][: n - closest]


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """The per-head slopes m_h, float32 [n_heads] (see the module docstring)."""
    return torch.tensor(_slopes_list(n_heads), dtype=torch.float32)


def alibi_bias(n_heads: int, seq_len: int) -> torch.Tensor:
    """[n_heads, T, T] float32: -m_h (i - j) for j <= i, -inf for j > i (see the module docstring)."""
    m = alibi_slopes(n_heads)
    pos = torch.arange(seq_len)
    rel = pos[None, :] - pos[:, None]  # j - i, int64 [T, T]
    bias = m[:, None, None] * rel  # m (j - i) = -m (i - j); float32
    future = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(2)
    return bias.masked_fill(future, float("-inf"))
