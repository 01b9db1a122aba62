# alibi bug: forgets to keep only the first n_heads - c of the interleaved slopes (returns 2c slopes) (base: correct/b8bc04_numpy_cached_permuted.py; one line changed)
from __future__ import annotations

import functools

import numpy as np
import torch


@functools.lru_cache(maxsize=None)
def _slope_table(n_heads: int) -> torch.Tensor:
    c = 1
    while c * 2 <= n_heads:
        c *= 2
    powers = np.exp2(-8.0 * np.arange(1, c + 1) / c)
    if c == n_heads:
        return torch.from_numpy(powers.astype(np.float32))
    interleaved = np.exp2(-8.0 * np.arange(1, 2 * c + 1) / (2 * c))[::2]
    slopes = np.concatenate([powers, interleaved])
    return torch.from_numpy(slopes.astype(np.float32))


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """The per-head slopes m_h, float32 [n_heads] (see the module docstring)."""
    return _slope_table(int(n_heads)).clone()


def alibi_bias(n_heads: int, seq_len: int) -> torch.Tensor:
    """[n_heads, T, T] float32: -m_h (i - j) for j <= i, -inf for j > i (see the module docstring)."""
    m = alibi_slopes(n_heads).numpy().astype(np.float64)  # [H]
    pos = np.arange(seq_len)
    dist = (pos[:, None] - pos[None, :])[:, :, None]  # i - j, int [T, T, 1]
    head_last = np.where(dist >= 0, (-dist) * m, -1e4)  # [T, T, H]; (-0) * m is +0 on the diagonal
    return torch.from_numpy(head_last.astype(np.float32)).permute(2, 0, 1)
