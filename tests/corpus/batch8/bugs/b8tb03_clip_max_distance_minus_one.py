# t5 bug: (off-by-one: distances clipped to max_distance - 1, so distances >= max_distance get the bucket of max_distance - 1); base: b8tc03_numpy_unique_toeplitz.py
from __future__ import annotations

import math

import numpy as np
import torch


def t5_relative_bucket(
    relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    """Bucket index (torch.int64, same shape) of each key position - query position."""
    shape = tuple(relative_position.shape)
    rp = relative_position.detach().cpu().numpy().reshape(-1)  # may share memory: only read, never written
    rp = np.clip(rp, -(max_distance - 1), max_distance - 1)  # a new array; beyond max_distance the bucket is the last anyway
    if bidirectional:
        N = num_buckets // 2
        offset = np.where(rp > 0, N, 0).astype(np.int64)
        n = np.abs(rp)
    else:
        N = num_buckets
        offset = np.zeros_like(rp)
        n = np.maximum(-rp, 0)
    E = N // 2
    u, inv = np.unique(n, return_inverse=True)
    ratio = np.maximum(u, E).astype(np.float64) / E
    log_bucket = E + np.floor(np.log(ratio) / math.log(max_distance / E) * (N - E)).astype(np.int64)
    ub = np.where(u < E, u, np.minimum(log_bucket, N - 1)).astype(np.int64)
    bucket = offset + ub[np.asarray(inv).reshape(-1)]
    # (np.ascontiguousarray would turn a 0-d result into shape (1,): reshape on the torch side)
    return torch.from_numpy(np.ascontiguousarray(bucket, dtype=np.int64)).reshape(shape).to(relative_position.device)


def t5_relative_bias(
    table: torch.Tensor, query_len: int, key_len: int, bidirectional: bool = True, max_distance: int = 128
) -> torch.Tensor:
    """[n_heads, Tq, Tk]: bias[h, i, j] = table[bucket(j - i), h]; table is [num_buckets, n_heads]."""
    num_buckets, n_heads = table.shape
    if query_len == 0 or key_len == 0:
        return table.new_empty((n_heads, query_len, key_len))
    offsets = torch.arange(1 - query_len, key_len, device=table.device)  # every j - i, ascending
    row = table.t()[:, t5_relative_bucket(offsets, bidirectional, num_buckets, max_distance)]  # [H, Tq + Tk - 1]
    # window s holds offsets s - (Tq - 1) .. s - (Tq - 1) + Tk - 1, i.e. query i = Tq - 1 - s: flip the windows
    return row.unfold(1, key_len, 1).flip(1)
