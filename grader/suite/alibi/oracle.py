"""The alibi exercise's oracle: the exact answer, in float64."""

from __future__ import annotations

import torch

from grader.suite.attention.oracle import MINUS_INF


def oracle_alibi_slopes(n_heads: int) -> torch.Tensor:
    """Press et al. 2022, section 3 and their reference code, float64.

    n a power of two: the geometric sequence starting at 2^(-8/n) with that ratio.
    Otherwise: the slopes of the closest power of two c below n, then every other slope of 2c.
    """

    def geometric(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (h + 1) for h in range(n)]

    closest = 1 << (n_heads.bit_length() - 1)
    extra = geometric(2 * closest)[0::2][: n_heads - closest]
    return torch.tensor(geometric(closest) + extra, dtype=torch.float64)


def oracle_alibi_bias(n_heads: int, seq_len: int, slopes: torch.Tensor | None = None) -> torch.Tensor:
    """[H, T, T] float64: -m_h (i - j) for j <= i, -inf for j > i."""
    m = oracle_alibi_slopes(n_heads) if slopes is None else slopes.double()
    query = torch.arange(seq_len, dtype=torch.float64)[:, None]  # i
    key = torch.arange(seq_len, dtype=torch.float64)[None, :]  # j
    distance = query - key  # i - j
    bias = -m[:, None, None] * distance
    return torch.where(distance >= 0, bias, torch.full_like(bias, MINUS_INF))
