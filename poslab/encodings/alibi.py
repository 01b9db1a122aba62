"""ALiBi: attention with linear biases.

    score(i, j) = q_i . k_j / sqrt(D)  -  m_h (i - j),    j <= i   (keys after i are masked)
    m_h = 2^(-8 (h+1) / n)   for n heads, n a power of two

Press, Smith and Lewis, "Train Short, Test Long: Attention with Linear Biases Enables Input Length
Extrapolation", ICLR 2022, section 3. For n not a power of two, the reference code takes the
slopes of the largest power of two c below n, then every other slope of 2c, the first n - c.
Nothing is added to the embeddings; each head gets a fixed recency penalty of its own slope.
"""

from __future__ import annotations

import math

import torch

from poslab.encodings._checks import require_positive_int


def _power_of_two_slopes(n_heads: int) -> list[float]:
    return [2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)]


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """Per-head slopes ``m_h``, float32 ``[n_heads]``; 12 heads give 2^-1 .. 2^-8, 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5."""
    require_positive_int(n_heads, "n_heads")
    below = 2 ** math.floor(math.log2(n_heads))
    slopes = _power_of_two_slopes(below)
    if below < n_heads:
        slopes += _power_of_two_slopes(2 * below)[0::2][: n_heads - below]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(n_heads: int, seq_len: int) -> torch.Tensor:
    """``[n_heads, T, T]`` float32: ``-m_h (i - j)`` for key j <= query i, ``-inf`` for j > i."""
    require_positive_int(seq_len, "seq_len")
    slopes = alibi_slopes(n_heads)
    positions = torch.arange(seq_len, dtype=torch.float32)
    offset = positions[None, :] - positions[:, None]  # (T, T): j - i, so -(i - j) without a -0.0 diagonal
    bias = slopes[:, None, None] * offset  # (H, 1, 1) * (T, T) -> (H, T, T)
    return bias.masked_fill(offset > 0, float("-inf"))
