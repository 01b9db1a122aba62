"""ALiBi, attention with linear biases (Press, Smith and Lewis, ICLR 2022).

    alibi_slopes(n_heads) -> m  [n_heads], float32
        n_heads a power of two:  m_h = 2^(-8 (h + 1) / n_heads),  h = 0 .. n_heads - 1
                                 (8 heads: 1/2, 1/4, ..., 1/256, in that order)
        otherwise, with c the largest power of two below n_heads: the c slopes for c heads,
        followed by every other slope for 2c heads (the 1st, 3rd, 5th, ...), the first n_heads - c
        of them.

    alibi_bias(n_heads, seq_len) -> bias  [n_heads, T, T], float32   (T = seq_len)
        bias[h, i, j] = -m_h (i - j)   for keys j <= i   (0 on the diagonal)
        bias[h, i, j] = -inf           for keys j > i    (causal: no looking ahead)

Rules:
- The bias depends only on the distance i - j and penalises keys further back more.
- Above the diagonal: -inf, or a finite mask of at most -1e4 such as torch.finfo(torch.float32).min
  (Hugging Face's masking constant), so that attention gives those keys weight exactly 0. Not 0, not
  a small penalty, not -m (i - j) continued past the diagonal.
- Vectorised: no Python loop over (i, j).
"""

from __future__ import annotations

import torch


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """The per-head slopes m_h, float32 [n_heads] (see the module docstring)."""
    raise NotImplementedError("alibi_slopes is not implemented yet")


def alibi_bias(n_heads: int, seq_len: int) -> torch.Tensor:
    """[n_heads, T, T] float32: -m_h (i - j) for j <= i, -inf for j > i (see the module docstring)."""
    raise NotImplementedError("alibi_bias is not implemented yet")
